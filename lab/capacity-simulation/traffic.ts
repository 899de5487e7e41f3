/**
 * What Meta sends in a scenario, second by second: per business number, outbound messages paced at its rate
 * (a campaign, or a bot's replies), each followed by its `sent`, `delivered` and `read` statuses, and inbound
 * messages from its customers (Poisson arrivals over its conversations). One update per POST (Meta does not
 * batch; contract/capacity.ts POSTS_PER_OUTBOUND_MESSAGE). Bodies are shaped like Meta's examples
 * (cli/meta-traffic/webhook-bodies.ts) with one number's metadata each.
 *
 * Customers are named as Meta names them since 2026 (cli/meta-traffic/customers.ts): of every ten, two by their
 * BSUID alone (a username), two by their BSUID with the phone number in every other event (by the event's
 * serial), six by their phone number, so that the message lane's conversations are keyed as they will be. Who
 * is which follows from the customer's serial, not from a draw: the seed's draws, and every figure recorded
 * from them, stay as they were (a customer is one conversation whichever ids name them).
 */

import type { SeededRandom } from '../../cli/local/seeded-random.ts';
import { type CustomerIds, customerIds, customerKindOf } from '../../cli/meta-traffic/customers.ts';
import { nextArrivalGapMs } from '../../cli/meta-traffic/retries.ts';
import {
  messagesChange,
  type NumberMetadata,
  recipientNamedBy,
  senderNamedBy,
  statusesChange,
  webhookPayload,
} from '../../cli/meta-traffic/webhook-bodies.ts';

export interface NumberTraffic {
  /** Index of the number (its phone_number_id is derived from it). */
  readonly index: number;
  /** Outbound messages/s while `outboundUntilMs` lasts (paced: Meta sends at most the tier's rate). */
  readonly outboundPerSecond: number;
  /** Stop sending outbound after this many (a campaign of N messages). @default unlimited */
  readonly outboundTotal?: number;
  /**
   * Draw the outbound messages and their statuses as usual but send none: the same seed then gives the same
   * inbound arrivals as with them, so that a run with and without a campaign differs by the campaign alone
   * (lab/bench/storm/storm-isolation.ts). @default false
   */
  readonly outboundSilent?: boolean;
  readonly inboundPerSecond: number;
  /** Customers writing in (the conversations inbound messages come from). */
  readonly conversations: number;
}

export interface TrafficEvent {
  readonly key: string;
  readonly lane: 'message' | 'status';
  readonly number: number;
  /** The WhatsApp message it is about: an inbound message's own id, a status's outbound message. */
  readonly wamid: string;
  /**
   * Built on each read, which each POST does once: a warmed-up run draws a minute of events it never sends, and
   * an update Meta retries through a 40-minute outage holds no body meanwhile.
   */
  readonly body: string;
  /** Virtual ms at which Meta first POSTs it. */
  readonly at: number;
}

/** Lags of the statuses after the send (assumed; Meta publishes none): sent, delivered, read. */
const STATUS_LAGS_MS = {
  sent: [200, 1_500],
  delivered: [1_000, 5_000],
  read: [5_000, 60_000],
} as const;

export const phoneNumberId = (index: number) => `10654035224${String(2900 + index)}`;

function metadataOf(index: number): NumberMetadata {
  return { display_phone_number: `1555078${String(3800 + index)}`, phone_number_id: phoneNumberId(index) };
}

/** The ids an event of customer `serial` carries; `eventSerial` says whether a phone that comes and goes came. */
function idsOf(serial: number, eventSerial: number): CustomerIds {
  const phone = `4477009${String(serial).padStart(5, '0')}`;
  return customerIds(customerKindOf(serial), { serial, phone }, eventSerial % 2 === 0);
}

function inboundBody(index: number, wamid: string, sender: CustomerIds, at: number): string {
  const message = {
    ...senderNamedBy(sender),
    id: wamid,
    name: 'Customer',
    text: 'Hello, my results please',
    timestamp: String(Math.floor(at / 1000)),
  };
  return JSON.stringify(webhookPayload([messagesChange([message], metadataOf(index))]));
}

function statusBody(
  index: number,
  wamid: string,
  status: string,
  recipient: CustomerIds,
  at: number,
): string {
  const update = {
    ...recipientNamedBy(recipient),
    id: wamid,
    status,
    timestamp: String(Math.floor(at / 1000)),
  };
  return JSON.stringify(webhookPayload([statusesChange([update], metadataOf(index))]));
}

/**
 * An update as drawn: what its body is built from, and no closure. A class, not an object literal with a getter:
 * V8 keeps such a literal's properties in a dictionary, several hundred bytes an update, and an outage holds
 * every update Meta is retrying.
 */
type StatusName = keyof typeof STATUS_LAGS_MS;

class Update implements TrafficEvent {
  readonly key: string;
  readonly lane: TrafficEvent['lane'];
  readonly number: number;
  readonly wamid: string;
  readonly at: number;
  /** The status it reports; undefined for an inbound message. */
  readonly #status: StatusName | undefined;
  /** The customer's serial, and the event's (idsOf). */
  readonly #customer: number;
  readonly #eventSerial: number;

  constructor(
    wamid: string,
    status: StatusName | undefined,
    number: number,
    at: number,
    customer: number,
    eventSerial: number,
  ) {
    this.key = status === undefined ? `msg:${wamid}` : `st:${wamid}:${status}`;
    this.lane = status === undefined ? 'message' : 'status';
    this.number = number;
    this.wamid = wamid;
    this.at = at;
    this.#status = status;
    this.#customer = customer;
    this.#eventSerial = eventSerial;
  }

  get body(): string {
    const ids = idsOf(this.#customer, this.#eventSerial);
    return this.#status === undefined
      ? inboundBody(this.number, this.wamid, ids, this.at)
      : statusBody(this.number, this.wamid, this.#status, ids, this.at);
  }
}

/** Generates each number's events one second at a time (`second(startMs)`), so that memory stays flat. */
export class TrafficGenerator {
  readonly #numbers: readonly NumberTraffic[];
  readonly #random: SeededRandom;
  readonly #sentOutbound = new Map<number, number>();
  #inbound = 0;

  constructor(numbers: readonly NumberTraffic[], random: SeededRandom) {
    this.#numbers = numbers;
    this.#random = random;
  }

  /** The events whose first POST falls in [startMs, startMs + 1000): statuses may fall later. */
  second(startMs: number): TrafficEvent[] {
    const events: TrafficEvent[] = [];
    for (const number of this.#numbers) {
      const sent = this.#sentOutbound.get(number.index) ?? 0;
      const budget = Math.max(0, (number.outboundTotal ?? Number.POSITIVE_INFINITY) - sent);
      const outbound = Math.min(budget, Math.round(number.outboundPerSecond));
      for (let i = 0; i < outbound; i++) {
        const sendAt = startMs + (i * 1000) / Math.max(1, outbound);
        const wamid = `wamid.n${number.index}.out${sent + i}`;
        const recipient = this.#random.int(0, number.conversations - 1);
        let lag = sendAt;
        for (const status of ['sent', 'delivered', 'read'] as const) {
          const [low, high] = STATUS_LAGS_MS[status];
          lag += low + this.#random.next() * (high - low);
          const at = Math.round(lag);
          if (number.outboundSilent !== true) {
            events.push(new Update(wamid, status, number.index, at, recipient, sent + i));
          }
        }
      }
      this.#sentOutbound.set(number.index, sent + outbound);
      // Poisson arrivals: exponential gaps within the second.
      const draw = () => this.#random.next();
      // A number with no inbound traffic still takes its one draw, as every seed's recorded runs did.
      let t = startMs + nextArrivalGapMs(Math.max(1e-9, number.inboundPerSecond), draw);
      while (number.inboundPerSecond > 0 && t < startMs + 1000) {
        const serial = this.#inbound++;
        const wamid = `wamid.n${number.index}.in${serial}`;
        const sender = this.#random.int(0, number.conversations - 1);
        const at = Math.round(t);
        events.push(new Update(wamid, undefined, number.index, at, sender, serial));
        t += nextArrivalGapMs(number.inboundPerSecond, draw);
      }
    }
    return events;
  }
}
