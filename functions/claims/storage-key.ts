import { createHash } from 'node:crypto';

/**
 * DynamoDB refuses a partition key above 2048 bytes. Event keys are short for every documented payload, but a
 * malformed body can put a long string or an object into a key part; such a key would fail its PutItem on
 * every retry and send a healthy record to the DLQ. Keys above this size are stored as a readable prefix plus
 * the SHA-256 of the whole key: still derived from the event alone, still unique.
 */
export const MAX_STORED_KEY_BYTES = 1024;
const READABLE_PREFIX_CHARS = 256;

/** The `pk` stored for an event key: `<keyNamespace>#<key>` when a namespace is set, bounded in size. */
export function storageKey(key: string, keyNamespace?: string): string {
  const pk = keyNamespace ? `${keyNamespace}#${key}` : key;
  if (Buffer.byteLength(pk, 'utf8') <= MAX_STORED_KEY_BYTES) return pk;
  const digest = createHash('sha256').update(pk, 'utf8').digest('hex');
  return `${Array.from(pk).slice(0, READABLE_PREFIX_CHARS).join('')}#sha256:${digest}`;
}
