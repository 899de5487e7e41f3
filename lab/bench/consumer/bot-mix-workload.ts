/**
 * The bot mix: what a typical WhatsApp bot receives. Per conversation turn, one inbound message (handled by
 * `onMessage`) and one outbound reply whose `sent`, `delivered` and `read` statuses come back (not handled: no
 * `onStatus`). Turns overlap, as conversations do; each event arrives in its own delivery, in time order.
 *
 * Then Meta's retries: `retryRatio` of the deliveries come again. Two thirds repeat the same bytes a random
 * distance later (a few land in the same batch as their original, most in later batches, some while the
 * original is still being processed); one third are re-batched: their events regrouped 2–3 per new body,
 * re-serialised (an entry `time`, indented), after the last of their originals. A re-batched body holds only
 * retried events, so that a per-record idempotency key (Powertools keyed on the body's first event) skips
 * nothing new and all contestants owe the same effects; what a per-record key does to fresh events regrouped
 * with retried ones is the re-batched probe's subject.
 */
import type { SQSRecord } from 'aws-lambda';
import { seededRandom, shuffled } from '../../../cli/local/seeded-random.ts';
import {
  type InboundTextMessage,
  inboundTextMessage,
  messagesValue,
  metaJson,
  metaShapedWamid,
  type OutboundStatus,
  statusesValue,
  WABA_ID,
  webhookPayload,
} from '../../../cli/meta-traffic/webhook-bodies.ts';
import { toQueueRecord } from './workload.ts';

export type BotEventKind = 'message' | 'status';

export interface BotEvent {
  readonly kind: BotEventKind;
  /** The docs/design.md §1 key: `msg:<wamid>` or `st:<wamid>:<status>`. */
  readonly key: string;
  readonly value: object;
}

export interface BotMixWorkload {
  /** Records in queue order: batch `b` is `records.slice(b * batchSize, (b + 1) * batchSize)`. */
  readonly records: readonly SQSRecord[];
  /** The events of each record, in body order. */
  readonly eventsOf: readonly (readonly BotEvent[])[];
  readonly turns: number;
  /** Distinct events: 4 per turn. */
  readonly events: number;
  /** The inbound wamids: what a correct consumer runs exactly one side effect for. */
  readonly distinctWamids: ReadonlySet<string>;
  readonly retries: {
    readonly sameBytes: number;
    readonly rebatchedBodies: number;
    readonly rebatchedEvents: number;
  };
  readonly batchSize: number;
}

export interface BotMixOptions {
  /** @default 500 */
  readonly turns?: number;
  /** Share of the original deliveries Meta sends again. @default 0.1 */
  readonly retryRatio?: number;
  /** @default 10 */
  readonly batchSize?: number;
  readonly seed?: number;
  /** Makes wamids of different workloads distinct. */
  readonly serialOffset?: number;
}

const STATUSES = ['sent', 'delivered', 'read'] as const;
/** Positions (in deliveries) after its turn's message at which each status comes back. */
const STATUS_DELAYS = [1, 3, 12] as const;

export function buildBotMixWorkload(options: BotMixOptions = {}): BotMixWorkload {
  const turns = options.turns ?? 500;
  const batchSize = options.batchSize ?? 10;
  const random = seededRandom(options.seed ?? 20_251_201);
  const offset = options.serialOffset ?? 0;

  interface Delivery {
    readonly events: BotEvent[];
    readonly body: string;
    readonly at: number;
  }
  const originals: Delivery[] = [];
  const messages: InboundTextMessage[] = [];
  for (let turn = 0; turn < turns; turn++) {
    const serial = offset + turn;
    const message = inboundTextMessage(serial, random);
    messages.push(message);
    // Four deliveries per turn, so a turn starts every 4 positions; its statuses trail behind.
    const start = turn * 4 + random() * 2;
    originals.push(
      single({ kind: 'message', key: `msg:${message.id}`, value: messagesValue([message]) }, start),
    );
    const reply = metaShapedWamid(10_000_000 + serial, random);
    STATUSES.forEach((status, i) => {
      const outbound: OutboundStatus = {
        id: reply,
        status,
        timestamp: String(Number(message.timestamp) + 2 + i * 5),
        recipientId: message.from,
        conversationId: `c${serial.toString(16).padStart(31, '0')}`,
      };
      originals.push(
        single(
          { kind: 'status', key: `st:${reply}:${status}`, value: statusesValue([outbound]) },
          start + (STATUS_DELAYS[i] as number) + random() * 4,
        ),
      );
    });
  }

  const retried = shuffled(
    originals.map((_, i) => i),
    random,
  ).slice(0, Math.round(originals.length * (options.retryRatio ?? 0.1)));
  const rebatchedCount = Math.round(retried.length / 3);
  const retries: Delivery[] = [];
  for (const index of retried.slice(rebatchedCount)) {
    const original = originals[index] as Delivery;
    // Mostly a few batches later, sometimes in the same batch, sometimes much later.
    const gap = random() < 0.8 ? 1 + random() * batchSize * 6 : batchSize * (6 + random() * 40);
    retries.push({ ...original, at: original.at + gap });
  }
  const regrouped = retried.slice(0, rebatchedCount).map((index) => originals[index] as Delivery);
  let rebatchedBodies = 0;
  for (let at = 0; at < regrouped.length; ) {
    const group = regrouped.slice(at, at + 2 + Math.floor(random() * 2));
    at += group.length;
    rebatchedBodies++;
    const events = group.flatMap((delivery) => delivery.events);
    const last = Math.max(...group.map((delivery) => delivery.at));
    retries.push({ events, body: rebatchedBody(events), at: last + batchSize * (1 + random() * 10) });
  }

  const deliveries = [...originals, ...retries].sort((a, b) => a.at - b.at);
  return {
    records: deliveries.map((delivery) => toQueueRecord(delivery.body)),
    eventsOf: deliveries.map((delivery) => delivery.events),
    turns,
    events: new Set(deliveries.flatMap((delivery) => delivery.events.map((event) => event.key))).size,
    distinctWamids: new Set(messages.map((message) => message.id)),
    retries: {
      sameBytes: retried.length - rebatchedCount,
      rebatchedBodies,
      rebatchedEvents: rebatchedCount,
    },
    batchSize,
  };
}

function single(event: BotEvent, at: number) {
  return {
    events: [event],
    body: metaJson(webhookPayload([{ field: 'messages', value: event.value }])),
    at,
  };
}

/** Several events in one body, one change each, serialised unlike the originals. */
function rebatchedBody(events: readonly BotEvent[]): string {
  return JSON.stringify(
    {
      entry: [
        {
          changes: events.map((event) => ({ field: 'messages', value: event.value })),
          time: 1_749_416_400,
          id: WABA_ID,
        },
      ],
      object: 'whatsapp_business_account',
    },
    null,
    1,
  );
}

/**
 * docs/design.md §2's write units for these records in these batches: a fresh event with a side effect 2, one
 * without 1 (0 with `claimUnhandledEvents: false`), an event in another batch than its first 1 (a refused
 * claim; 0 for an unclaimed one), a repeat within a batch 0. Order does not matter: of the batches holding a
 * key, one pays for the fresh claim and each other one for a refused claim, whichever runs first.
 */
export function floorWriteUnits(
  workload: Pick<BotMixWorkload, 'eventsOf' | 'batchSize'>,
  settings: { readonly claimUnhandledEvents: boolean },
): number {
  const seen = new Set<string>();
  let units = 0;
  for (let start = 0; start < workload.eventsOf.length; start += workload.batchSize) {
    const batch = new Map<string, BotEventKind>();
    for (const events of workload.eventsOf.slice(start, start + workload.batchSize)) {
      for (const event of events) batch.set(event.key, event.kind);
    }
    for (const [key, kind] of batch) {
      const claimed = kind === 'message' || settings.claimUnhandledEvents;
      if (!claimed) continue;
      units += seen.has(key) ? 1 : kind === 'message' ? 2 : 1;
      seen.add(key);
    }
  }
  return units;
}

/**
 * The refused claims a run adds to {@link floorWriteUnits} by the records that came back: a copy that met its
 * twin in flight in a concurrent batch is not acknowledged but returns (docs/decisions.md, "In-flight
 * duplicates wait for the lease"), and each return claims its record's events again: 1 for each claimed key.
 * How many copies meet their twin in flight depends on the batches' timing, so each run has its own floor.
 */
export function returnedClaimUnits(
  workload: Pick<BotMixWorkload, 'eventsOf' | 'records'>,
  redeliveredIds: readonly string[],
  settings: { readonly claimUnhandledEvents: boolean },
): number {
  const indexOf = new Map(workload.records.map((record, index) => [record.messageId, index]));
  let units = 0;
  for (const messageId of redeliveredIds) {
    const events = workload.eventsOf[indexOf.get(messageId) ?? -1];
    if (events === undefined) throw new Error(`A redelivered record ${messageId} is not in the workload.`);
    const claimed = new Set(
      events
        .filter((event) => event.kind === 'message' || settings.claimUnhandledEvents)
        .map((event) => event.key),
    );
    units += claimed.size;
  }
  return units;
}

export type EventClass = 'message' | 'status' | 'retry' | 'retryInBatch';

export interface EventClassWorkload {
  readonly records: readonly SQSRecord[];
  readonly distinctWamids: ReadonlySet<string>;
  readonly batchSize: number;
  /** Drained first, unmeasured, on the same table. */
  readonly prime?: readonly SQSRecord[];
}

/**
 * One small workload per event class, each delivery holding one event: `message` (fresh, handled), `status`
 * (fresh, unhandled), `retry` (the same bytes again in later batches, after their first delivery completed:
 * half messages, half statuses) and `retryInBatch` (each of the `message` workload's events twice in one
 * batch; its cost per repeat is this run's minus the `message` run's).
 */
export function buildEventClassWorkloads(
  count = 100,
  batchSize = 10,
  seed = 31,
): Record<EventClass, EventClassWorkload> {
  const random = seededRandom(seed);
  const message = () => {
    const inbound = inboundTextMessage(3_000_000 + Math.floor(random() * 1e6), random);
    return { id: inbound.id, body: metaJson(webhookPayload([messagesChange(inbound)])) };
  };
  const status = (i: number) => {
    const outbound: OutboundStatus = {
      id: metaShapedWamid(4_000_000 + i, random),
      status: STATUSES[i % STATUSES.length] as string,
      timestamp: String(1_750_263_773 + i),
      recipientId: '16505550100',
    };
    return metaJson(webhookPayload([{ field: 'messages', value: statusesValue([outbound]) }]));
  };
  const messages = Array.from({ length: count }, message);
  const statuses = Array.from({ length: count }, (_, i) => status(i));
  const retried = [...messages.slice(0, count / 2).map((m) => m.body), ...statuses.slice(0, count / 2)];
  const pairs: string[] = [];
  for (const m of messages) pairs.push(m.body, m.body);
  const wamids = (list: readonly { id: string }[]) => new Set(list.map((m) => m.id));
  return {
    message: {
      records: messages.map((m) => toQueueRecord(m.body)),
      distinctWamids: wamids(messages),
      batchSize,
    },
    status: { records: statuses.map((body) => toQueueRecord(body)), distinctWamids: new Set(), batchSize },
    retry: {
      prime: retried.map((body) => toQueueRecord(body)),
      records: shuffled(
        retried.map((body) => toQueueRecord(body)),
        random,
      ),
      distinctWamids: wamids(messages.slice(0, count / 2)),
      batchSize,
    },
    retryInBatch: {
      records: pairs.map((body) => toQueueRecord(body)),
      distinctWamids: wamids(messages),
      batchSize,
    },
  };
}

function messagesChange(message: InboundTextMessage): object {
  return { field: 'messages', value: messagesValue([message]) };
}
