/**
 * Where an interrupted `ops replay` continues: one small JSON file per replay under the operator's cache
 * directory (`$XDG_CACHE_HOME/whatsapp-webhook-dedup/replay/`, else `~/.cache/…`), named by a digest of the
 * command as typed (target, subscriber, range, fields, --rerun), so that running the same command again finds
 * it. It holds the range as first resolved (a relative `--since -3d` means the same days on the second run),
 * the last delivery fully sent, and the counts so far. Written after every delivery, atomically (a rename), and
 * removed once the replay has gone through its range.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { ArchivePosition } from '../adapters/archive-reader.ts';

export const REPLAY_CURSOR_VERSION = 1;

/** What identifies one replay: the command's arguments as typed. */
export interface ReplayIdentity {
  readonly target: string;
  readonly subscriber: string;
  readonly since: string;
  readonly until: string;
  /** `--fields`, sorted; undefined for every field of the subscriber. */
  readonly fields: readonly string[] | undefined;
  readonly rerun: boolean;
}

export interface ReplayCursor<Counts> {
  readonly v: typeof REPLAY_CURSOR_VERSION;
  readonly identity: ReplayIdentity;
  readonly sinceMs: number;
  readonly untilMs: number;
  /** Epoch ms the replay first started: with --rerun, claims done after it are this replay's own. */
  readonly startedAtMs: number;
  /** The last delivery sent whole; undefined before the first. */
  readonly position: ArchivePosition | undefined;
  readonly counts: Counts;
}

/** `$XDG_CACHE_HOME/whatsapp-webhook-dedup/replay`, else `~/.cache/whatsapp-webhook-dedup/replay`. */
export function defaultCursorDirectory(env: NodeJS.ProcessEnv = process.env): string {
  const cache = env.XDG_CACHE_HOME?.trim() || join(homedir(), '.cache');
  return join(cache, 'whatsapp-webhook-dedup', 'replay');
}

export class ReplayCursorStore<Counts> {
  readonly path: string;
  readonly #identity: ReplayIdentity;

  constructor(directory: string, identity: ReplayIdentity) {
    this.#identity = identity;
    const digest = createHash('sha256').update(JSON.stringify(identity)).digest('hex').slice(0, 24);
    this.path = join(directory, `${digest}.json`);
  }

  /** The saved cursor of this replay, if one was left by an earlier run (and is of this version). */
  load(): ReplayCursor<Counts> | undefined {
    let text: string;
    try {
      text = readFileSync(this.path, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
    const cursor = JSON.parse(text) as ReplayCursor<Counts>;
    const same = JSON.stringify(cursor.identity) === JSON.stringify(this.#identity);
    return cursor.v === REPLAY_CURSOR_VERSION && same ? cursor : undefined;
  }

  save(cursor: Omit<ReplayCursor<Counts>, 'v' | 'identity'>): void {
    mkdirSync(join(this.path, '..'), { recursive: true });
    const temporary = `${this.path}.${process.pid}.tmp`;
    writeFileSync(
      temporary,
      `${JSON.stringify({ v: REPLAY_CURSOR_VERSION, identity: this.#identity, ...cursor }, null, 2)}\n`,
    );
    renameSync(temporary, this.path);
  }

  remove(): void {
    rmSync(this.path, { force: true });
  }
}
