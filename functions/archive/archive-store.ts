/** What the archiver needs of the archive bucket (`S3ArchiveStore`; tests use an in-memory one). */
export interface ArchiveStore {
  /** Writes one object, replacing any object of the same key. */
  put(key: string, body: Uint8Array): Promise<void>;
  /** Every key under `prefix`. */
  list(prefix: string): Promise<string[]>;
  get(key: string): Promise<Uint8Array>;
}
