/**
 * Meta's webhook signature (docs/design.md §4): `X-Hub-Signature-256: sha256=<hex>`, the HMAC-SHA256 of the raw request
 * bytes keyed with the app secret. Pure: no I/O, no configuration lookup.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

export const SIGNATURE_HEADER = 'x-hub-signature-256';

/**
 * Exactly what Meta sends: the lowercase label and 64 lowercase hex digits. The bytes compare below would be
 * case-free for the hex anyway; refusing other spellings keeps one grammar, so that `malformed` means "not
 * Meta's format" (a header rewritten on the way, or made by hand) instead of passing unnoticed.
 */
const SIGNATURE_PATTERN = /^sha256=([0-9a-f]{64})$/;

export type SignatureCheck =
  | { readonly valid: true; readonly secretIndex: number }
  | { readonly valid: false; readonly problem: 'missing' | 'malformed' | 'mismatch' };

/**
 * Checks the header against every configured app secret (several at once during rotation, or with two Meta
 * apps subscribed to one WABA). The body must be the bytes exactly as received: Meta signs its own
 * serialisation (escaped unicode such as `\u00e9`), so a re-serialised body would never match.
 *
 * `rawBody` may be the text of the body when the front end has already decoded it as UTF-8: the HMAC then
 * runs over its UTF-8 encoding, which is the bytes received.
 *
 * The comparison is constant-time over the 32 digest bytes; the header is decoded to bytes first, and a
 * short, long or otherwise spelt value is refused before any comparison.
 */
export function checkSignature(
  rawBody: Uint8Array | string,
  header: string | undefined,
  appSecrets: readonly string[],
): SignatureCheck {
  if (header === undefined || header.trim() === '') return { valid: false, problem: 'missing' };
  const hex = SIGNATURE_PATTERN.exec(header.trim())?.[1];
  if (hex === undefined) return { valid: false, problem: 'malformed' };
  const provided = Buffer.from(hex, 'hex');
  for (const [secretIndex, secret] of appSecrets.entries()) {
    // An empty key is something anyone can sign with: never accept it, whatever the configuration says.
    if (secret === '') continue;
    const expected = createHmac('sha256', secret).update(rawBody).digest();
    if (expected.length === provided.length && timingSafeEqual(expected, provided)) {
      return { valid: true, secretIndex };
    }
  }
  return { valid: false, problem: 'mismatch' };
}

/** The header value as Meta would compute it; used by tests, the local sender and the simulator. */
export function signBody(rawBody: Uint8Array | string, appSecret: string): string {
  return `sha256=${createHmac('sha256', appSecret).update(rawBody).digest('hex')}`;
}

/**
 * Looks a header up whatever its case. API Gateway HTTP APIs (payload 2.0) deliver lowercase names, but
 * other front ends (the local stack, tests, a future REST API) may not.
 */
export function findHeader(
  headers: Readonly<Record<string, string | undefined>> | undefined,
  name: string,
): string | undefined {
  if (headers === undefined) return undefined;
  const exact = headers[name];
  if (exact !== undefined) return exact;
  const wanted = name.toLowerCase();
  for (const [key, value] of Object.entries(headers)) {
    if (key.toLowerCase() === wanted) return value;
  }
  return undefined;
}
