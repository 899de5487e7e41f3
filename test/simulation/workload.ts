/**
 * One schedule's traffic: a few webhook bodies the receiver acknowledged, each with a few events (inbound
 * messages of one or two customers' conversations, and outbound statuses `sent`/`delivered`/`read` arriving shuffled across bodies), some events
 * repeated across bodies, and Meta's later re-sends of events re-batched into new bodies. Expected keys come
 * from the ids generated here (DESIGN §1 formats), never from the extractor under test.
 */
import {
  envelope,
  type InboundMessage,
  messagesChange,
  type OutboundStatus,
  statusesChange,
} from '../support/webhooks/webhook-bodies.ts';
import type { Prng } from './prng.ts';

const STATUS_TIMESTAMP = 1_749_416_400;
const MAX_EVENTS_PER_BODY = 6;
const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
/** Meta retries a delivery for up to 7 days. */
export const META_RETRY_WINDOW_MS = 7 * DAY;

export type PlannedEvent =
  | { readonly kind: 'message'; readonly key: string; readonly message: InboundMessage }
  | {
      readonly kind: 'status';
      readonly key: string;
      readonly wamid: string;
      readonly status: string;
      readonly statusItem: OutboundStatus;
    };

export type BodyOrigin = 'original' | 'meta-retry' | 'unusable';

export interface PlannedBody {
  readonly bodyId: string;
  readonly body: string;
  /** The keys of its events, in body order (a key may repeat within a body). */
  readonly keys: readonly string[];
  readonly content: readonly PlannedEvent[];
  /** Virtual epoch ms at which the receiver enqueues it. */
  readonly sendAt: number;
  readonly origin: BodyOrigin;
}

export interface Workload {
  readonly bodies: readonly PlannedBody[];
  readonly events: ReadonlyMap<string, PlannedEvent>;
  /** Outbound wamids and the statuses the workload sends for each. */
  readonly outbound: ReadonlyMap<string, readonly string[]>;
}

export interface WorkloadShape {
  readonly metaRetries: number;
  /** Chance of one body that is not a WhatsApp envelope (quarantined by the consumer). */
  readonly unusableBodyRate: number;
}

export function generateWorkload(random: Prng, startMs: number, shape: WorkloadShape): Workload {
  const originals = planOriginalBodies(random, [...planEvents(random).values()], startMs);
  // Only events some body carries exist for the checks (a full body may have left one out).
  const events = new Map(originals.flatMap((body) => body.content).map((event) => [event.key, event]));
  const bodies: PlannedBody[] = [...originals];
  for (let retry = 0; retry < shape.metaRetries; retry++) {
    bodies.push(planMetaRetry(random, originals, events, `retry${retry + 1}`));
  }
  moveSomeRetriesToTheLastMinutes(random.fork('last-retry'), bodies);
  if (random.chance(shape.unusableBodyRate)) {
    bodies.push({
      bodyId: 'unusable',
      body: JSON.stringify({ object: 'page', entry: [] }),
      keys: [],
      content: [],
      sendAt: startMs + random.int(0, 2 * SECOND),
      origin: 'unusable',
    });
  }
  const outbound = new Map<string, string[]>();
  for (const event of events.values()) {
    if (event.kind === 'status')
      outbound.set(event.wamid, [...(outbound.get(event.wamid) ?? []), event.status]);
  }
  return { bodies, events, outbound };
}

function planEvents(random: Prng): Map<string, PlannedEvent> {
  const events = new Map<string, PlannedEvent>();
  const inbound = random.int(0, 5);
  // One or two customers: a conversation often has several messages, in several bodies.
  const customers = random.int(1, 2);
  for (let i = 0; i < inbound; i++) {
    const customer = random.int(1, customers);
    const message: InboundMessage = {
      id: `wamid.in${i}`,
      from: `1650555${String(1000 + customer)}`,
      name: `Customer ${customer}`,
      text: `Order ${9000 + i}`,
    };
    events.set(`msg:${message.id}`, { kind: 'message', key: `msg:${message.id}`, message });
  }
  const outboundCount = random.int(inbound === 0 ? 1 : 0, 2);
  for (let o = 0; o < outboundCount; o++) {
    const wamid = `wamid.out${o}`;
    const last = random.chance(0.15) ? 'failed' : 'read';
    const sequence = ['sent', 'delivered', last];
    const chosen = sequence.filter(() => random.chance(0.7));
    for (const status of chosen.length === 0 ? [random.pick(sequence)] : chosen) {
      const statusItem: OutboundStatus = {
        id: wamid,
        status,
        recipientId: `1650556${String(1000 + o)}`,
        timestamp: String(STATUS_TIMESTAMP + sequence.indexOf(status)),
      };
      const key = `st:${wamid}:${status}`;
      events.set(key, { kind: 'status', key, wamid, status, statusItem });
    }
  }
  return events;
}

function planOriginalBodies(random: Prng, events: readonly PlannedEvent[], startMs: number): PlannedBody[] {
  const count = random.int(2, Math.min(5, Math.max(2, events.length)));
  const groups: PlannedEvent[][] = Array.from({ length: count }, () => []);
  for (const event of random.shuffle(events)) {
    (groups[random.int(0, count - 1)] as PlannedEvent[]).push(event);
    // Meta sometimes delivers one event in two bodies.
    if (random.chance(0.4)) (groups[random.int(0, count - 1)] as PlannedEvent[]).push(event);
  }
  return groups.map((group, index) => {
    const content = group.length === 0 ? [random.pick(events)] : group.slice(0, MAX_EVENTS_PER_BODY);
    // Most bodies within seconds; some an hour apart, so statuses of one message may arrive far out of order.
    const sendAt = startMs + (random.chance(0.2) ? random.int(0, HOUR) : random.int(0, 2 * SECOND));
    return planBody(`body${index + 1}`, random.shuffle(content), sendAt, 'original');
  });
}

/** Some events of one original body, maybe with one event of another, re-sent later in a new body. */
function planMetaRetry(
  random: Prng,
  originals: readonly PlannedBody[],
  events: ReadonlyMap<string, PlannedEvent>,
  bodyId: string,
): PlannedBody {
  const source = random.pick(originals);
  const keys = new Set(source.keys.filter(() => random.chance(0.6)));
  if (keys.size === 0) keys.add(random.pick(source.keys));
  if (random.chance(0.3)) keys.add(random.pick(random.pick(originals).keys));
  // Meta retries an event for 7 days from the first time it sent it, in whichever body that was.
  const firstSentAt = Math.min(
    ...originals.filter((body) => body.keys.some((key) => keys.has(key))).map((body) => body.sendAt),
  );
  const delay = random.pick([
    () => random.int(SECOND, 10 * SECOND),
    () => random.int(SECOND, 10 * SECOND),
    () => random.int(10 * SECOND, MINUTE),
    () => random.int(MINUTE, HOUR),
    () => random.int(HOUR, META_RETRY_WINDOW_MS),
  ])();
  const content = random.shuffle([...keys].map((key) => events.get(key) as PlannedEvent));
  return planBody(bodyId, content.slice(0, MAX_EVENTS_PER_BODY), firstSentAt + delay, 'meta-retry');
}

/**
 * Some re-sends become Meta's last retry, minutes before its 7 days run out for the earliest body that
 * carried one of their events: the claims of events sent before that have expired by then, and the TTL
 * sweeps before it delete them while the schedule runs. Drawn from a stream of their own (`random`), so that
 * every other draw of the seed stays as it was.
 */
function moveSomeRetriesToTheLastMinutes(random: Prng, bodies: PlannedBody[]): void {
  const last = new Set(bodies.filter((body) => body.origin === 'meta-retry' && random.chance(0.15)));
  for (const [index, body] of bodies.entries()) {
    if (!last.has(body)) continue;
    const keys = new Set(body.keys);
    const firstSentAt = Math.min(
      ...bodies
        .filter((other) => !last.has(other) && other.keys.some((key) => keys.has(key)))
        .map((other) => other.sendAt),
    );
    bodies[index] = { ...body, sendAt: firstSentAt + META_RETRY_WINDOW_MS - random.int(0, 5 * MINUTE) };
  }
}

/** A body whose changes follow `content` in order: each run of messages or statuses is one change. */
function planBody(
  bodyId: string,
  content: readonly PlannedEvent[],
  sendAt: number,
  origin: BodyOrigin,
): PlannedBody {
  const changes: object[] = [];
  let run: PlannedEvent[] = [];
  const flush = () => {
    if (run.length === 0) return;
    changes.push(
      run[0]?.kind === 'message'
        ? messagesChange(run.map((event) => (event.kind === 'message' ? event.message : unreachable())))
        : statusesChange(run.map((event) => (event.kind === 'status' ? event.statusItem : unreachable()))),
    );
    run = [];
  };
  for (const event of content) {
    if (run.length > 0 && run[0]?.kind !== event.kind) flush();
    run.push(event);
  }
  flush();
  return {
    bodyId,
    body: envelope(changes),
    keys: content.map((event) => event.key),
    content,
    sendAt,
    origin,
  };
}

function unreachable(): never {
  throw new Error('a change mixes messages and statuses');
}
