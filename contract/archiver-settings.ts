/**
 * How the archiver reads the archive queue (docs/design.md, "Archive"): the CDK construct's event source and
 * queue, and the local stack's, from the same numbers. Plain TypeScript.
 */

/** Lambda's largest SQS batch; the 6 MB invocation payload caps it first for large bodies. */
export const ARCHIVER_BATCH_SIZE = 10_000;
/** Deliveries gather this long before an object is written: a PUT per minute per hour partition at most. */
export const ARCHIVER_BATCHING_WINDOW_SECONDS = 60;
export const ARCHIVER_TIMEOUT_SECONDS = 60;
/** Receives before a message the archiver keeps failing on goes to the archive DLQ. */
export const ARCHIVER_MAX_RECEIVE_COUNT = 5;
/** Lambda's advice for an SQS source: six times the function timeout, plus the batching window. */
export const ARCHIVE_QUEUE_VISIBILITY_TIMEOUT_SECONDS =
  6 * ARCHIVER_TIMEOUT_SECONDS + ARCHIVER_BATCHING_WINDOW_SECONDS;
