/**
 * Provenance of the bodies the pipeline keeps (quarantine, archive): the receiver, the one part that checks
 * Meta's signature, stores each body it verified with an HMAC of its bytes under the pipeline's provenance
 * key, which only the receiver and the operator's tool read. `ops quarantine requeue` and `ops replay` send a
 * body back in only when its proof holds, so a body that anything else put in a quarantine or archive queue
 * (a subscriber's consumer, which may send to the quarantine queue) is never delivered as if Meta signed it.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

/** The proof's version prefix: a later scheme can stand beside it. */
const PROOF_PREFIX = 'v1=';

/** `v1=` and the hex HMAC-SHA256 of `bytes` under `key`. */
export function proofOf(key: string | Uint8Array, bytes: Uint8Array | string): string {
  return `${PROOF_PREFIX}${createHmac('sha256', key).update(bytes).digest('hex')}`;
}

/** Whether `proof` is the receiver's proof of `bytes` under `key` (constant-time). */
export function proofHolds(
  key: string | Uint8Array,
  bytes: Uint8Array | string,
  proof: string | undefined,
): boolean {
  if (proof === undefined || !proof.startsWith(PROOF_PREFIX)) return false;
  const expected = Buffer.from(proofOf(key, bytes), 'utf8');
  const given = Buffer.from(proof, 'utf8');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/**
 * Makes the proofs of what the receiver stores: `undefined` while the provenance key cannot be read, so a body
 * is still kept (without proof: `ops` then refuses to send it back in, and says why) rather than refused.
 */
export type ProofSigner = (bytes: Uint8Array | string) => Promise<string | undefined>;

/**
 * A signer over a key loaded on demand (`loadKey` caches as it sees fit; it may throw). It remembers its last
 * proof: the receiver proves a body kept whole twice, as the subscriber's part and as the archive's copy, and
 * the second under the same key is not hashed again (equal text; bytes, which could have changed, always are).
 */
export function createProofSigner(
  loadKey: () => Promise<string | undefined>,
  onUnavailable: (error: unknown) => void = () => {},
): ProofSigner {
  let last: { readonly key: string; readonly text: string; readonly proof: string } | undefined;
  return async (bytes) => {
    let key: string | undefined;
    try {
      key = await loadKey();
    } catch (error) {
      onUnavailable(error);
      return undefined;
    }
    if (key === undefined || key === '') return undefined;
    if (typeof bytes !== 'string') return proofOf(key, bytes);
    if (last?.key !== key || last.text !== bytes) last = { key, text: bytes, proof: proofOf(key, bytes) };
    return last.proof;
  };
}
