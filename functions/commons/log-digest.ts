/**
 * What the logs carry instead of an event key or a customer id: a keyed digest (HMAC-SHA256 under a key each
 * deployment creates and keeps secret), never the value. A wamid encodes the customer's phone number and a
 * key may hold a phone number or a BSUID, so neither may reach a log; an unkeyed hash of a phone number is
 * reversed by trying every number. The digest is stable under one key, so one event's log lines still
 * correlate, and `npm run ops -- key KEY` prints it for an operator who holds a key from a complaint.
 */
import { createHmac, randomBytes } from 'node:crypto';

/** What a digest starts with: a reader can tell it from a raw key at a glance. */
export const LOG_DIGEST_PREFIX = 'hmac~';
/** Base64url characters kept: 96 bits, far beyond any collision among a deployment's keys. */
const DIGEST_CHARACTERS = 16;

/** `hmac~` and the first 16 base64url characters of HMAC-SHA256(`key`, `value`). */
export function keyedDigest(key: string | Uint8Array, value: string): string {
  const mac = createHmac('sha256', key).update(value, 'utf8').digest('base64url');
  return `${LOG_DIGEST_PREFIX}${mac.slice(0, DIGEST_CHARACTERS)}`;
}

// Until a deployment's key is set, a random one: digests are then as secret, but correlate only within this
// process.
let activeKey: string | Uint8Array = randomBytes(32);

/** Sets the deployment's key for {@link logDigest}; refuses an empty one, which would key nothing. */
export function useLogDigestKey(key: string | Uint8Array): void {
  if (key.length === 0) throw new RangeError('The log digest key is empty.');
  activeKey = key;
}

/** The keyed digest of `value` under the deployment's key, for a log line. */
export function logDigest(value: string): string {
  return keyedDigest(activeKey, value);
}
