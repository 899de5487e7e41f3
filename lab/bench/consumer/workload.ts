/**
 * The consumer benchmark's input: SQS records shaped like the receiver's queue messages, one WhatsApp
 * delivery each, with a fixed share of duplicates in three kinds:
 *
 * - `in-batch`: the same body twice within one batch of `batchSize` (Meta retried before the first copy was
 *   consumed, and both landed in one poll);
 * - `cross-batch`: the same body again in a later batch (a retry after the first copy was queued);
 * - `rebatched`: the same event in a different body (re-serialised, another key order, an entry time), in a
 *   later batch: equal events, unequal bytes.
 *
 * Every body holds exactly one message, so that Powertools keyed on the body's first wamid and our per-event
 * keys must agree on what a duplicate is; see docs/benchmarks.md for why multi-event bodies are left out.
 */
import { createHash, randomUUID } from 'node:crypto';
import type { SQSRecord } from 'aws-lambda';
import { seededRandom, shuffled } from '../../../cli/local/seeded-random.ts';
import {
  type InboundTextMessage,
  inboundTextMessage,
  reserializedMessageBody,
  singleMessageBody,
} from '../../../cli/meta-traffic/webhook-bodies.ts';

export type DuplicateKind = 'in-batch' | 'cross-batch' | 'rebatched';

export interface ConsumerWorkload {
  /** Records in queue order: batch `b` is `records.slice(b * batchSize, (b + 1) * batchSize)`. */
  readonly records: readonly SQSRecord[];
  /** The wamid of every distinct message: what a correct consumer runs exactly one side effect for. */
  readonly distinctWamids: ReadonlySet<string>;
  readonly duplicates: Readonly<Record<DuplicateKind, number>>;
  readonly batchSize: number;
}

export interface ConsumerWorkloadOptions {
  /** @default 2000 */
  readonly records?: number;
  /** Share of records that repeat an earlier event. @default 0.3 */
  readonly duplicateRatio?: number;
  /** @default 10 (Lambda's SQS default and the construct's) */
  readonly batchSize?: number;
  readonly seed?: number;
  /** Makes message ids of different workloads distinct (each run gets a fresh table anyway). */
  readonly serialOffset?: number;
}

export const QUEUE_ARN = 'arn:aws:sqs:us-east-1:000000000000:bench-deliveries';

export function buildConsumerWorkload(options: ConsumerWorkloadOptions = {}): ConsumerWorkload {
  const total = options.records ?? 2000;
  const batchSize = options.batchSize ?? 10;
  const random = seededRandom(options.seed ?? 20_250_611);
  const duplicateCount = Math.round(total * (options.duplicateRatio ?? 0.3));
  const distinctCount = total - duplicateCount;
  const batches = Math.ceil(total / batchSize);
  if (total % batchSize !== 0) throw new RangeError('records must be a multiple of batchSize.');

  const messages = Array.from({ length: distinctCount }, (_, i) =>
    inboundTextMessage((options.serialOffset ?? 0) + i, random),
  );
  // A third of the duplicates of each kind; in-batch pairs are spread one per batch from the start.
  const inBatch = Math.min(Math.floor(duplicateCount / 3), batches);
  const crossBatch = Math.floor((duplicateCount - inBatch) / 2);
  const rebatched = duplicateCount - inBatch - crossBatch;

  const order = shuffled(
    messages.map((_, i) => i),
    random,
  );
  const paired = order.slice(0, inBatch);
  const singles = order.slice(inBatch);

  // Singles and later copies share the slots left after the pairs: originals spread evenly over the run,
  // each copy placed after its original by at least one batch worth of slots, at a random distance.
  interface Slot {
    readonly message: number;
    readonly copy?: DuplicateKind;
    readonly at: number;
  }
  const slotCount = total - 2 * inBatch;
  const slots: Slot[] = singles.map((message, i) => ({ message, at: (i / singles.length) * slotCount }));
  const copied = shuffled(
    singles.map((_, i) => i),
    random,
  ).slice(0, crossBatch + rebatched);
  copied.forEach((slotIndex, i) => {
    const original = slots[slotIndex] as Slot;
    // Half the retries come soon (often while the first copy is still in flight), half much later.
    const spread = random() < 0.5 ? batchSize * 5 : slotCount - original.at;
    const gap = batchSize * 1.5 + random() * spread;
    slots.push({
      message: original.message,
      copy: i < crossBatch ? 'cross-batch' : 'rebatched',
      at: original.at + gap,
    });
  });
  slots.sort((a, b) => a.at - b.at);

  const singlesPerBatch = batchSize - 2;
  const layout: { message: number; copy?: DuplicateKind }[] = [];
  for (let b = 0; b < batches; b++) {
    const batch: { message: number; copy?: DuplicateKind }[] = [];
    const pair = paired[b];
    const take = pair === undefined ? batchSize : singlesPerBatch;
    if (pair !== undefined) batch.push({ message: pair }, { message: pair, copy: 'in-batch' });
    batch.push(...slots.splice(0, take));
    // Whichever copy of the pair comes first is the original.
    let pairSeen = false;
    layout.push(
      ...shuffled(batch, random).map((entry) => {
        if (entry.message !== pair || entry.copy === 'cross-batch' || entry.copy === 'rebatched')
          return entry;
        const relabelled = pairSeen
          ? { message: entry.message, copy: 'in-batch' as const }
          : { message: entry.message };
        pairSeen = true;
        return relabelled;
      }),
    );
  }
  if (layout.length !== total || slots.length !== 0) {
    throw new Error(`Workload layout error: ${layout.length} records, ${slots.length} left over.`);
  }

  assertCopiesComeLater(layout, batchSize);
  const records = layout.map(({ message, copy }) => {
    const body = messages[message] as InboundTextMessage;
    return toQueueRecord(copy === 'rebatched' ? reserializedMessageBody(body) : singleMessageBody(body));
  });
  return {
    records,
    distinctWamids: new Set(messages.map((message) => message.id)),
    duplicates: { 'in-batch': inBatch, 'cross-batch': crossBatch, rebatched },
    batchSize,
  };
}

function assertCopiesComeLater(
  layout: readonly { message: number; copy?: DuplicateKind }[],
  batchSize: number,
): void {
  const firstBatch = new Map<number, number>();
  layout.forEach(({ message, copy }, index) => {
    const batch = Math.floor(index / batchSize);
    if (copy === undefined) {
      firstBatch.set(message, batch);
      return;
    }
    const original = firstBatch.get(message);
    const sameBatchExpected = copy === 'in-batch';
    if (original === undefined || (original === batch) !== sameBatchExpected) {
      throw new Error(`Workload layout error: a ${copy} copy is not where it belongs.`);
    }
  });
}

/** An SQS record as Lambda hands it over, holding one delivery body. */
export function toQueueRecord(body: string): SQSRecord {
  const now = String(Date.now());
  return {
    messageId: randomUUID(),
    receiptHandle: `bench-${randomUUID()}`,
    body,
    attributes: {
      ApproximateReceiveCount: '1',
      SentTimestamp: now,
      SenderId: 'AROAEXAMPLE:receiver',
      ApproximateFirstReceiveTimestamp: now,
    },
    // What the receiver attaches to every delivery part (functions/queue/subscriber-fan-out.ts).
    messageAttributes: {
      deliveryId: {
        stringValue: randomUUID(),
        stringListValues: [],
        binaryListValues: [],
        dataType: 'String',
      },
    },
    md5OfBody: createHash('md5').update(body).digest('hex'),
    eventSource: 'aws:sqs',
    eventSourceARN: QUEUE_ARN,
    awsRegion: 'us-east-1',
  };
}
