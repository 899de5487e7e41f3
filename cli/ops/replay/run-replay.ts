/**
 * One `ops replay` run over its ports: reads the archived deliveries of the range in order (from the cursor on),
 * a chunk at a time; looks up the claims of the subscriber's keys in the chunk (what is done is skipped by the
 * claims as a duplicate, and counted here); with `rerun`, forgets the chunk's done claims first (not those this
 * replay completed itself, which a resumed run would otherwise run a second time); sends each delivery at
 * most `ratePerSecond`, and saves the cursor after each one. With `dryRun`, reads and counts only.
 *
 * No SDK here: the command gives the archive, the claim table and the sender as ports.
 */
import type { ArchiveRecord } from 'whatsapp-webhook-dedup/contract/archive';
import { type EventSelection, wantsEvent } from 'whatsapp-webhook-dedup/contract/event-origin';
import { extractEvents } from 'whatsapp-webhook-dedup/functions/events/extract-events';
import type { ArchivePosition } from '../adapters/archive-reader.ts';
import type { ClaimView } from '../inspect/claim-view.ts';

/** Deliveries read before their claims are looked up together (BatchGetItem takes 100 keys a call). */
export const REPLAY_CHUNK_DELIVERIES = 50;
export const DEFAULT_REPLAY_RATE_PER_SECOND = 50;

export interface ReplayCounts {
  readonly deliveries: {
    /** Read from the archive in the range. */
    read: number;
    /** Sent to the subscriber's queues through the receiver's code. */
    sent: number;
    /** Archived as quarantined: still in (or requeued from) the quarantine queue; `quarantine requeue` owns them. */
    quarantined: number;
    /**
     * Holding no event for the subscriber (of its fields, or `--fields`'s, and of its numbers and wabas):
     * nothing to send it.
     */
    notForSubscriber: number;
    /**
     * Refused: no proof that the receiver verified the body, or one that does not hold (anything that may write
     * to the archive could have put it there). Absent in a cursor saved before proofs existed.
     */
    refused?: number;
  };
  readonly keys: {
    /** Event keys for the subscriber (its fields, numbers and wabas) in the deliveries read. */
    total: number;
    /** Done before the replay: the claims skip them as duplicates (the consumer counts them as such too). */
    done: number;
    /** Held by a worker when looked up (its lease running). */
    inFlight: number;
    /** No claim, expired, or a lapsed lease: the replay effects them. */
    notDone: number;
    /** Done claims `--rerun` forgot, so that the replay effects them again. */
    forgotten: number;
  };
  /** Keys by webhook field. */
  readonly byField: Record<string, number>;
}

export function emptyCounts(): ReplayCounts {
  return {
    deliveries: { read: 0, sent: 0, quarantined: 0, notForSubscriber: 0 },
    keys: { total: 0, done: 0, inFlight: 0, notDone: 0, forgotten: 0 },
    byField: {},
  };
}

export type SendOutcome =
  | { readonly outcome: 'stored' }
  /** The receiver would not store it (still invalid, or unrouted): counted, not sent. */
  | { readonly outcome: 'skipped'; readonly reason: string }
  /** Its provenance does not hold: counted and named, never sent. */
  | { readonly outcome: 'refused'; readonly reason: string }
  | { readonly outcome: 'failed'; readonly problem: string };

export interface ReplayPorts {
  /** The range's records in order, after `after` when given. */
  readonly records: (after: ArchivePosition | undefined) => AsyncIterable<ArchiveRecord>;
  /** The claims of `keys` (absent: no claim). */
  readonly claims: (keys: readonly string[]) => Promise<ReadonlyMap<string, ClaimView>>;
  /** Deletes a done claim as read, with its audit line; false when it changed in between. */
  readonly forget: (key: string, claim: ClaimView) => Promise<boolean>;
  readonly send: (record: ArchiveRecord) => Promise<SendOutcome>;
  readonly saveCursor: (position: ArchivePosition, counts: ReplayCounts) => void;
  readonly clock: () => number;
  readonly sleep: (ms: number) => Promise<void>;
  readonly onProgress?: (position: ArchivePosition, counts: ReplayCounts) => void;
  /** One line per refused body: its delivery and why. */
  readonly onRefused?: (record: ArchiveRecord, reason: string) => void;
}

export interface ReplayOptions extends EventSelection {
  /** The subscriber's fields, narrowed by `--fields`; undefined: every field. */
  readonly fields: readonly string[] | undefined;
  /** The subscriber's phone numbers and WABAs (`undefined`: no limit), as its consumer claims them. */
  readonly numbers?: readonly string[] | undefined;
  readonly wabas?: readonly string[] | undefined;
  readonly rerun: boolean;
  readonly dryRun: boolean;
  readonly ratePerSecond: number;
  /** Stop after this many deliveries read (the cursor keeps the place). */
  readonly maxDeliveries: number | undefined;
  /** Where an earlier run stopped, and its counts. */
  readonly resumeFrom: { readonly position: ArchivePosition; readonly counts: ReplayCounts } | undefined;
  /** Epoch ms the replay first started: with `rerun`, claims done since then are its own. */
  readonly startedAtMs: number;
}

export interface ReplayResult {
  readonly counts: ReplayCounts;
  /** False when `maxDeliveries` stopped it before the end of the range. */
  readonly complete: boolean;
  readonly position: ArchivePosition | undefined;
}

export class ReplayFailedError extends Error {
  constructor(
    message: string,
    readonly counts: ReplayCounts,
    readonly position: ArchivePosition | undefined,
  ) {
    super(message);
    this.name = 'ReplayFailedError';
  }
}

/**
 * The event keys of an archived body that the subscriber claims (of the selection's fields, numbers and
 * wabas), with their field.
 */
export function subscriberKeys(
  body: string | Uint8Array,
  selection: EventSelection,
): { readonly key: string; readonly field: string }[] {
  const extraction = extractEvents(body);
  if (!extraction.ok) return [];
  return extraction.events
    .filter((event) => wantsEvent(selection, event))
    .map(({ key, field }) => ({ key, field }));
}

export async function runReplay(
  ports: ReplayPorts,
  options: ReplayOptions,
  bodyOf: (record: ArchiveRecord) => Uint8Array,
): Promise<ReplayResult> {
  const counts = structuredClone(options.resumeFrom?.counts ?? emptyCounts());
  let position = options.resumeFrom?.position;
  const pace = pacer(options.ratePerSecond, ports);
  let chunk: ArchiveRecord[] = [];
  let left = options.maxDeliveries ?? Number.POSITIVE_INFINITY;

  const flush = async () => {
    const deliveries = chunk.map((record) => ({
      record,
      keys: record.verdict === 'accepted' ? subscriberKeys(bodyOf(record), options) : [],
    }));
    chunk = [];
    const claims = await ports.claims([
      ...new Set(deliveries.flatMap(({ keys }) => keys.map(({ key }) => key))),
    ]);
    const looked = new Set<string>();
    for (const { record, keys } of deliveries) {
      counts.deliveries.read++;
      if (record.verdict !== 'accepted') counts.deliveries.quarantined++;
      else if (keys.length === 0) counts.deliveries.notForSubscriber++;
      else {
        for (const { key, field } of keys) {
          counts.byField[field] = (counts.byField[field] ?? 0) + 1;
          // A key repeated in the chunk (a retry Meta sent again) is classified once; later copies are duplicates.
          if (looked.has(key)) continue;
          looked.add(key);
          counts.keys.total++;
          await classify(key, claims.get(key));
        }
        if (!options.dryRun) {
          await pace();
          const sent = await ports.send(record);
          if (sent.outcome === 'failed') {
            throw new ReplayFailedError(
              `delivery ${record.deliveryId} (${record.arrivedAt}) not stored: ${sent.problem}`,
              counts,
              position,
            );
          }
          if (sent.outcome === 'stored') counts.deliveries.sent++;
          else if (sent.outcome === 'refused') {
            counts.deliveries.refused = (counts.deliveries.refused ?? 0) + 1;
            ports.onRefused?.(record, sent.reason);
          } else counts.deliveries.notForSubscriber++;
        }
      }
      position = { arrivedAt: record.arrivedAt, deliveryId: record.deliveryId };
      if (!options.dryRun) ports.saveCursor(position, counts);
      ports.onProgress?.(position, counts);
    }
  };

  const classify = async (key: string, claim: ClaimView | undefined) => {
    const status = claim?.status;
    if (claim === undefined || (status !== 'done' && status !== 'in-flight')) {
      counts.keys.notDone++;
    } else if (status === 'in-flight') {
      counts.keys.inFlight++;
    } else if (options.rerun && !doneByThisReplay(claim, options.startedAtMs)) {
      if (options.dryRun || (await ports.forget(key, claim))) counts.keys.forgotten++;
      else counts.keys.inFlight++;
    } else {
      counts.keys.done++;
    }
  };

  let complete = true;
  for await (const record of ports.records(position)) {
    if (left <= 0) {
      complete = false;
      break;
    }
    left--;
    chunk.push(record);
    if (chunk.length >= REPLAY_CHUNK_DELIVERIES) await flush();
  }
  if (chunk.length > 0) await flush();
  return { counts, complete, position };
}

/** A claim this replay completed itself (with `--rerun`, a resumed run must not forget it again). */
function doneByThisReplay(claim: ClaimView, startedAtMs: number): boolean {
  return claim.doneAt !== undefined && Date.parse(claim.doneAt) >= startedAtMs;
}

/** Waits so that the sends keep to `ratePerSecond`, however fast each one answers. */
function pacer(ratePerSecond: number, ports: Pick<ReplayPorts, 'clock' | 'sleep'>): () => Promise<void> {
  const intervalMs = 1000 / ratePerSecond;
  let nextAt: number | undefined;
  return async () => {
    const now = ports.clock();
    nextAt = Math.max(nextAt ?? now, now);
    if (nextAt > now) await ports.sleep(nextAt - now);
    nextAt += intervalMs;
  };
}
