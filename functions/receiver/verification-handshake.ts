/**
 * Meta's subscription handshake (docs/design.md §4): `GET /webhook?hub.mode=subscribe&hub.verify_token=…&hub.challenge=…`
 * must be answered with the challenge, verbatim, only when the token is ours. Pure: no I/O.
 */
import { createHash, timingSafeEqual } from 'node:crypto';

export type HandshakeOutcome =
  | 'verified'
  | 'no-challenge'
  | 'challenge-too-long'
  | 'wrong-mode'
  | 'wrong-token';

/**
 * Meta's challenges are short decimal integers (`1158201444`); a longer one did not come from Meta, and the
 * cap bounds what the endpoint will echo for anyone holding the token.
 */
export const MAX_CHALLENGE_LENGTH = 128;

export interface HandshakeAnswer {
  readonly statusCode: 200 | 400 | 403;
  /** The challenge for a verified handshake, otherwise an empty body. */
  readonly body: string;
  readonly outcome: HandshakeOutcome;
}

/**
 * `query` holds the decoded query string parameters (API Gateway's `queryStringParameters`).
 * A missing, empty or too long (over `MAX_CHALLENGE_LENGTH`) challenge is a malformed request (400) whatever
 * the token; anything else that is not a `subscribe` with our token is refused (403), so the endpoint never
 * confirms a guessed token. The caller answers the challenge as `text/plain` with `nosniff`, so that a
 * browser never renders it as a page.
 */
export function answerVerificationHandshake(
  query: Readonly<Record<string, string | undefined>> | undefined,
  verifyToken: string,
): HandshakeAnswer {
  const challenge = query?.['hub.challenge'];
  if (challenge === undefined || challenge === '') {
    return { statusCode: 400, body: '', outcome: 'no-challenge' };
  }
  if (challenge.length > MAX_CHALLENGE_LENGTH) {
    return { statusCode: 400, body: '', outcome: 'challenge-too-long' };
  }
  if (query?.['hub.mode'] !== 'subscribe') return { statusCode: 403, body: '', outcome: 'wrong-mode' };
  const token = query['hub.verify_token'];
  if (token === undefined || !sameSecret(token, verifyToken)) {
    return { statusCode: 403, body: '', outcome: 'wrong-token' };
  }
  return { statusCode: 200, body: challenge, outcome: 'verified' };
}

// Hashing first gives equal-length buffers, so neither the content nor the length of the token leaks
// through the comparison time.
function sameSecret(candidate: string, expected: string): boolean {
  if (expected === '') return false;
  return timingSafeEqual(sha256(candidate), sha256(expected));
}

function sha256(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}
