/**
 * One schedule's traffic: a few webhook bodies the receiver acknowledged, each with a few events (inbound
 * messages of one or two customers' conversations, and outbound statuses `sent`/`delivered`/`read` arriving shuffled across bodies), some events
 * repeated across bodies, and Meta's later re-sends of events re-batched into new bodies. Expected keys come
 * from the ids generated here (DESIGN §1 formats), never from the extractor under test.
 *
 * Customers as Meta names them since 2026 (DESIGN §1, "Customers"): some by their phone number alone (before
 * the BSUID), some with a username by their BSUID alone, and some whose phone number comes and goes between
 * their messages (the BSUID in each, the phone number in some, a few naming the phone number alone with the
 * BSUID in their contact). Each message's conversation is the product's rule (`conversationCustomer`,
 * `conversationId`) over the ids generated here. Some outbound messages are group sends: the group's `sent`,
 * then each participant's own statuses, a participant with a username named by
 * `recipient_participant_user_id` alone. Who the customers and participants are is drawn from a stream of its
 * own (`identities`), so that the other draws of a seed stay as they were.
 */

import type { SeededRandom } from '../../cli/local/seeded-random.ts';
import { bsuidOf, CUSTOMER_KINDS, type CustomerKind, customerIds } from '../../cli/meta-traffic/customers.ts';
import { META_RETRIES } from '../../cli/meta-traffic/retries.ts';
import {
  envelope,
  type InboundMessage,
  messagesChange,
  type OutboundStatus,
  PHONE_NUMBER_ID,
  statusesChange,
} from '../../cli/meta-traffic/webhook-bodies.ts';
import { conversationCustomer, conversationId } from '../../contract/lanes.ts';

const STATUS_TIMESTAMP = 1_749_416_400;
const MAX_EVENTS_PER_BODY = 6;
const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;

export type PlannedEvent = PlannedMessage | PlannedStatus;

export interface PlannedMessage {
  readonly kind: 'message';
  readonly key: string;
  readonly message: InboundMessage;
  /** Its conversation by the product's rule (DESIGN §8), whichever ids this message carries. */
  readonly conversation: string;
}

export interface PlannedStatus {
  readonly kind: 'status';
  readonly key: string;
  readonly wamid: string;
  readonly status: string;
  /** A group send's participant, as the key names them (phone number, else BSUID); none for the group's own. */
  readonly participant?: string;
  /** The partition key of its ledger item (DESIGN §3: one ledger per participant of a group send). */
  readonly ledger: string;
  readonly statusItem: OutboundStatus;
}

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
  /** The ledgers of outbound messages (one per participant of a group send) and the statuses sent to each. */
  readonly outbound: ReadonlyMap<string, readonly PlannedStatus[]>;
}

export interface WorkloadShape {
  readonly metaRetries: number;
  /** Chance of one body that is not a WhatsApp envelope (quarantined by the consumer). */
  readonly unusableBodyRate: number;
}

export function generateWorkload(random: SeededRandom, startMs: number, shape: WorkloadShape): Workload {
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
  return { bodies, events, outbound: outboundLedgers(events.values()) };
}

/** The status events by the ledger they go to. */
export function outboundLedgers(events: Iterable<PlannedEvent>): Map<string, PlannedStatus[]> {
  const ledgers = new Map<string, PlannedStatus[]>();
  for (const event of events) {
    if (event.kind === 'status') ledgers.set(event.ledger, [...(ledgers.get(event.ledger) ?? []), event]);
  }
  return ledgers;
}

function planEvents(random: SeededRandom): Map<string, PlannedEvent> {
  const events = new Map<string, PlannedEvent>();
  const identities = random.fork('identities');
  const inbound = random.int(0, 5);
  // One or two customers: a conversation often has several messages, in several bodies.
  const customers = random.int(1, 2);
  const kinds = [1, 2].map(() => identities.pick(CUSTOMER_KINDS));
  for (let i = 0; i < inbound; i++) {
    const customer = random.int(1, customers);
    const message: InboundMessage = {
      id: `wamid.in${i}`,
      ...senderIds(customer, kinds[customer - 1] as CustomerKind, identities),
      name: `Customer ${customer}`,
      text: `Order ${9000 + i}`,
    };
    const key = `msg:${message.id}`;
    events.set(key, { kind: 'message', key, message, conversation: conversationOf(message) });
  }
  const outboundCount = random.int(inbound === 0 ? 1 : 0, 2);
  for (let o = 0; o < outboundCount; o++) {
    const wamid = `wamid.out${o}`;
    const last = random.chance(0.15) ? 'failed' : 'read';
    const sequence = ['sent', 'delivered', last];
    const chosen = sequence.filter(() => random.chance(0.7));
    const statuses = chosen.length === 0 ? [random.pick(sequence)] : chosen;
    const timestamp = (status: string) => String(STATUS_TIMESTAMP + sequence.indexOf(status));
    const add = (event: Omit<PlannedStatus, 'kind' | 'wamid' | 'ledger'>) => {
      const participant = event.participant;
      const ledger = participant === undefined ? `ledger:${wamid}` : `ledger:${wamid}:${participant}`;
      events.set(event.key, { kind: 'status', wamid, ledger, ...event });
    };
    if (!identities.chance(GROUP_SEND_RATE)) {
      const recipient = recipientIds(1000 + o, identities.pick(CUSTOMER_KINDS), identities);
      for (const status of statuses) {
        const statusItem: OutboundStatus = { id: wamid, status, ...recipient, timestamp: timestamp(status) };
        add({ key: `st:${wamid}:${status}`, status, statusItem });
      }
      continue;
    }
    // A group send (test/fixtures/webhooks/status-group.json): the group's own `sent`, then each
    // participant's own statuses, the first participant one with a username.
    const group = { id: wamid, group: true, recipientId: `12036340535789${String(4500 + o)}` } as const;
    if (statuses.includes('sent')) {
      add({
        key: `st:${wamid}:sent`,
        status: 'sent',
        statusItem: { ...group, status: 'sent', timestamp: timestamp('sent') },
      });
    }
    const participants = identities.int(1, 2);
    for (let p = 0; p < participants; p++) {
      const username = p === 0 || identities.chance(0.5);
      const bsuid = bsuidOf(100 + 10 * o + p);
      const phone = `4915112345${String(10 * o + p).padStart(3, '0')}`;
      const participant = username ? bsuid : phone;
      const ids = username
        ? { recipientParticipantUserId: bsuid }
        : { recipientParticipantId: phone, recipientParticipantUserId: bsuid };
      const own = sequence.slice(1).filter(() => identities.chance(0.7));
      for (const status of own.length === 0 ? [identities.pick(sequence.slice(1))] : own) {
        add({
          key: `st:${wamid}:${status}:${participant}`,
          status,
          participant,
          statusItem: { ...group, ...ids, status, timestamp: timestamp(status) },
        });
      }
    }
  }
  return events;
}

/** A share of outbound messages sent to a group. */
const GROUP_SEND_RATE = 0.25;

/** The ids one message of `customer` carries (cli/meta-traffic/customers.ts). */
function senderIds(
  customer: number,
  kind: CustomerKind,
  identities: SeededRandom,
): Pick<InboundMessage, 'from' | 'userId' | 'userIdInContactOnly' | 'username'> {
  const phoneCame = kind === 'phone-comes-and-goes' && identities.chance(0.5);
  const ids = customerIds(kind, { serial: customer, phone: `1650555${String(1000 + customer)}` }, phoneCame);
  return {
    ...(ids.phone !== undefined && { from: ids.phone }),
    ...(ids.bsuid !== undefined && { userId: ids.bsuid, username: ids.username }),
    // The phone number came with this one; now and then it alone, the BSUID only in the contact.
    ...(phoneCame && identities.chance(0.25) && { userIdInContactOnly: true }),
  };
}

/** The ids a one-to-one status names its recipient by. */
function recipientIds(
  serial: number,
  kind: CustomerKind,
  identities: SeededRandom,
): Pick<OutboundStatus, 'recipientId' | 'recipientUserId'> {
  const phoneCame = kind === 'phone-comes-and-goes' && identities.chance(0.5);
  const ids = customerIds(kind, { serial, phone: `1650556${String(serial)}` }, phoneCame);
  return {
    ...(ids.phone !== undefined && { recipientId: ids.phone }),
    ...(ids.bsuid !== undefined && { recipientUserId: ids.bsuid }),
  };
}

/**
 * The message's conversation by the product's rule (contract/lanes.ts), over the ids it carries: its
 * `from_user_id`, its `from`, and the contact `messagesValue` writes for it (its `user_id` beside the `wa_id`).
 */
function conversationOf(message: InboundMessage): string {
  const customer = conversationCustomer({
    fromUserId: message.userIdInContactOnly ? undefined : message.userId,
    from: message.from,
    userIdOfContact: (waId) => (waId === message.from ? message.userId : undefined),
  });
  return conversationId(PHONE_NUMBER_ID, customer);
}

function planOriginalBodies(
  random: SeededRandom,
  events: readonly PlannedEvent[],
  startMs: number,
): PlannedBody[] {
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
  random: SeededRandom,
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
    () => random.int(HOUR, META_RETRIES.windowMs),
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
function moveSomeRetriesToTheLastMinutes(random: SeededRandom, bodies: PlannedBody[]): void {
  const last = new Set(bodies.filter((body) => body.origin === 'meta-retry' && random.chance(0.15)));
  for (const [index, body] of bodies.entries()) {
    if (!last.has(body)) continue;
    const keys = new Set(body.keys);
    const firstSentAt = Math.min(
      ...bodies
        .filter((other) => !last.has(other) && other.keys.some((key) => keys.has(key)))
        .map((other) => other.sendAt),
    );
    bodies[index] = { ...body, sendAt: firstSentAt + META_RETRIES.windowMs - random.int(0, 5 * MINUTE) };
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
