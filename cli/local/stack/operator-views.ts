/**
 * What the dashboard shows of `npm run ops`, computed by the ops modules themselves against the local
 * stack's own clients: an event key's claim and ledger entry per subscriber (`ops key --json`), and the
 * DLQ of each subscriber's lanes with its newest records (`ops dlq stats | peek`) beside the quarantine queue's bodies
 * (`ops quarantine list`: reason, size, chunks, never the content).
 *
 * Reading a queue's newest messages hides them from other readers while the scan runs (then releases
 * them), so a queue is scanned again only when its message count changed or its last scan is old, never
 * on every poll of the page.
 */
import type { SQSClient } from '@aws-sdk/client-sqs';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { LaneName } from 'whatsapp-webhook-dedup/contract/lanes';
import { type QueueCounts, QueueMessages } from '../../ops/adapters/queue-messages.ts';
import type { CommandContext } from '../../ops/commands/command-context.ts';
import { type PeekedRecord, peekDeadLetters } from '../../ops/commands/dlq.ts';
import { listQuarantinedBodies } from '../../ops/commands/quarantine.ts';
import { OpsError } from '../../ops/errors.ts';
import { eventKeyShape } from '../../ops/inspect/event-key-shape.ts';
import { type KeyState, keyFound, lookUpKeys } from '../../ops/inspect/key-lookup.ts';
import { Output } from '../../ops/output.ts';
import type { BodySummary } from '../../ops/quarantine/quarantined-bodies.ts';
import { subscriberTargets } from '../../ops/target/local-target.ts';
import type { LaneTarget, OpsTarget, SubscriberTarget } from '../../ops/target/ops-target.ts';
import type { LocalInfo } from '../local-stack-api.ts';
import { totalMessages } from '../queue-counts.ts';
import type { ConsumerPoller } from './consumer-poller.ts';

/** Records and bodies listed per queue. */
export const NEWEST_SHOWN = 5;
/**
 * A queue whose count did not change is scanned again after this long (claims change what a record's
 * failure reads as). Not much sooner: every scan is a receive, which SQS counts in each record's
 * `ApproximateReceiveCount`.
 */
const RESCAN_AFTER_MS = 60_000;
/** …and one whose count changes is not scanned more often than this. */
const MIN_RESCAN_INTERVAL_MS = 3_000;

/** One subscriber's part of `ops key --json`: the claim under its namespace and, for a status, its ledger entry. */
export interface SubscriberKeyView extends KeyState {
  /** As `ops key --json` says it: whether the table holds a claim or a ledger entry of the key. */
  readonly found: boolean;
  readonly subscriber: string;
  readonly tableName: string;
}

export interface LocalKeyLookup {
  readonly key: string;
  readonly subscribers: readonly SubscriberKeyView[];
}

/** One lane's DLQ: a subscriber has one per lane (status, and message when it wants `messages`). */
export interface SubscriberDeadLetters {
  readonly subscriber: string;
  readonly lane: LaneName;
  /** A FIFO DLQ, whose records the consumer may have moved itself (`deadLetteredBy: 'consumer'`). */
  readonly ordered: boolean;
  /** `visible`: waiting; `inFlight`: being read (by a redrive, a peek). */
  readonly counts: QueueCounts;
  /** Records read by the last scan. */
  readonly scanned: number;
  /** Newest first, as `ops dlq peek --json` describes them. */
  readonly newest: readonly PeekedRecord[];
}

export interface QuarantineView {
  readonly counts: QueueCounts;
  /** Bodies found by the last scan (a chunked body is one). */
  readonly bodies: number;
  /** Newest first, as `ops quarantine list --json` summarises them. */
  readonly newest: readonly BodySummary[];
}

export interface LocalDeadLetters {
  readonly subscribers: readonly SubscriberDeadLetters[];
  readonly quarantine: QuarantineView;
}

export interface OperatorViews {
  /** Every subscriber's view of the key, or the named one's. Throws `UsageError` for a malformed key. */
  keyLookup(key: string, subscriber?: string): Promise<LocalKeyLookup>;
  deadLetters(): Promise<LocalDeadLetters>;
}

export interface OperatorViewsOptions {
  readonly target: OpsTarget;
  /** Epoch ms. @default Date.now */
  readonly clock?: () => number;
}

export function createOperatorViews(options: OperatorViewsOptions): OperatorViews {
  const { target } = options;
  const clock = options.clock ?? Date.now;
  const context: CommandContext = {
    target,
    output: new Output({ stdout: discard, stderr: discard }, true),
    clock,
    sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
    env: process.env,
    subscriber: () => {
      throw new Error('The dashboard names the subscriber of each call.');
    },
  };
  const queues = new QueueMessages(target.sqs);
  const scans = new ScanCache(clock);

  async function laneDeadLetters(
    subscriber: SubscriberTarget,
    lane: LaneTarget,
  ): Promise<SubscriberDeadLetters> {
    const url = lane.deadLetterQueueUrl;
    await scans.settled(url);
    const counts = await queues.counts(url);
    const peek = await scans.read(url, counts, { scanned: 0, records: [] }, () =>
      peekDeadLetters(context, subscriber, lane, NEWEST_SHOWN),
    );
    return {
      subscriber: subscriber.name,
      lane: lane.lane,
      ordered: lane.ordered,
      counts,
      scanned: peek.scanned,
      newest: peek.records,
    };
  }

  async function quarantine(): Promise<QuarantineView> {
    await scans.settled(target.quarantineQueueUrl);
    const counts = await queues.counts(target.quarantineQueueUrl);
    const bodies = await scans.read(target.quarantineQueueUrl, counts, [], () =>
      listQuarantinedBodies(context),
    );
    return { counts, bodies: bodies.length, newest: newestFirst(bodies).slice(0, NEWEST_SHOWN) };
  }

  return {
    async keyLookup(key, subscriber) {
      const shape = eventKeyShape(key);
      const chosen =
        subscriber === undefined
          ? target.subscribers
          : target.subscribers.filter((candidate) => candidate.name === subscriber);
      const now = clock();
      const views = await Promise.all(
        chosen.map(async (candidate) => {
          const [state] = await lookUpKeys(target, candidate, [shape], now);
          const found = state as KeyState;
          return {
            found: keyFound(found),
            subscriber: candidate.name,
            tableName: target.tableName,
            ...found,
          };
        }),
      );
      return { key, subscribers: views };
    },
    async deadLetters() {
      const [subscribers, quarantined] = await Promise.all([
        Promise.all(
          target.subscribers.flatMap((subscriber) =>
            subscriber.lanes.map((lane) => laneDeadLetters(subscriber, lane)),
          ),
        ),
        quarantine(),
      ]);
      return { subscribers, quarantine: quarantined };
    },
  };
}

export interface LocalTargetParts {
  readonly info: LocalInfo;
  readonly maximumMessageSizeBytes: number;
  readonly sqs: SQSClient;
  readonly documentClient: DynamoDBDocumentClient;
  /** The subscribers' pollers. */
  readonly consumer: (subscriber: string) => ConsumerPoller | undefined;
}

/** The running local stack as an ops target, on its own clients (which it closes itself). */
export function inProcessTarget(parts: LocalTargetParts): OpsTarget {
  const poller = (subscriber: string) => {
    const found = parts.consumer(subscriber);
    if (found === undefined) throw new OpsError(`no subscriber ${subscriber}`);
    return found;
  };
  return {
    description: 'the local stack',
    tableName: parts.info.tableName,
    quarantineQueueUrl: parts.info.quarantineQueueUrl,
    maximumMessageSizeBytes: parts.maximumMessageSizeBytes,
    subscribers: subscriberTargets(parts.info),
    sqs: parts.sqs,
    documentClient: parts.documentClient,
    consumerSwitch: {
      async setEnabled(subscriber, lane, enabled) {
        const found = poller(subscriber);
        if (enabled) found.resume(lane.lane);
        else found.pause(lane.lane);
        return found.state(lane.lane);
      },
      async state(subscriber, lane) {
        return poller(subscriber).state(lane.lane);
      },
    },
    messageMoveTasks: undefined,
    close() {},
  };
}

const discard = { write: () => true };

function newestFirst(bodies: readonly BodySummary[]): BodySummary[] {
  const time = (body: BodySummary) => Date.parse(body.receivedAt ?? '') || 0;
  return [...bodies].sort((a, b) => time(b) - time(a));
}

/** The last scan of each queue, kept while the queue's message count stays the same. */
class ScanCache {
  readonly #clock: () => number;
  readonly #entries = new Map<string, { total: number; at: number; result: Promise<unknown> }>();

  constructor(clock: () => number) {
    this.#clock = clock;
  }

  /**
   * Waits for the queue's scan still running, if any (another page's poll): counts read during it would show
   * the messages the scan itself hides as being read.
   */
  async settled(queueUrl: string): Promise<void> {
    await this.#entries.get(queueUrl)?.result.catch(() => undefined);
  }

  /** `empty` without a scan for an empty queue; the last scan's result while it is fresh; else a new scan. */
  read<T>(queueUrl: string, counts: QueueCounts, empty: T, scan: () => Promise<T>): Promise<T> {
    const total = totalMessages(counts);
    if (total === 0) {
      this.#entries.delete(queueUrl);
      return Promise.resolve(empty);
    }
    const now = this.#clock();
    const last = this.#entries.get(queueUrl);
    const age = last === undefined ? Number.POSITIVE_INFINITY : now - last.at;
    if (
      last !== undefined &&
      (age < MIN_RESCAN_INTERVAL_MS || (last.total === total && age < RESCAN_AFTER_MS))
    ) {
      return last.result as Promise<T>;
    }
    const result = scan();
    this.#entries.set(queueUrl, { total, at: now, result });
    // A failed scan is not kept: the next poll tries again.
    result.catch(() => {
      if (this.#entries.get(queueUrl)?.result === result) this.#entries.delete(queueUrl);
    });
    return result;
  }
}
