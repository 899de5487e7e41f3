/**
 * Webhook traffic shaped like WhatsApp Cloud API's: inbound messages, the statuses of outbound messages
 * (sent → delivered → read, sometimes out of order), and the odd template status update, each event in a
 * body of its own as Meta sends them live, or several events re-batched into one body as a retry may be.
 * Keys come from the project's own extractor, so the drill expects exactly what the consumer claims.
 *
 * The inbound messages come from `CUSTOMERS` customers named as Meta names them since 2026 (customers.ts): some
 * by their BSUID alone, some by their BSUID with the phone number coming and going, the rest by their phone
 * number; a reply's statuses name its customer by the ids their message carried. Which customer writes, and
 * whether a phone number that comes and goes came, follow from the message's place in the run, not from a
 * draw: a seed replays the same arrivals and event mix as before they were named so.
 */
import { extractEvents } from 'whatsapp-webhook-dedup/functions/events/extract-events';
import type { EventKind } from 'whatsapp-webhook-dedup/functions/events/types';
import { seededRandom } from '../local/seeded-random.ts';
import { type CustomerIds, customerIds, customerKindOf } from '../meta-traffic/customers.ts';
import {
  messagesValue,
  type NumberMetadata,
  recipientNamedBy,
  senderNamedBy,
  statusesValue,
} from '../meta-traffic/webhook-bodies.ts';

export interface DrillEvent {
  readonly key: string;
  /** Which handler it goes to (`message` → onMessage, …). */
  readonly kind: EventKind;
  /** The `Field` metric dimension: `message`, `status`, or the management field. */
  readonly metricField: string;
  readonly change: { readonly field: string; readonly value: Record<string, unknown> };
  /** Its business phone number and WABA, as the extractor reads them (a subscriber's `numbers` and `wabas`). */
  readonly phoneNumberId: string | undefined;
  readonly wabaId: string | undefined;
  /** Epoch seconds of the entry this event arrived in. */
  readonly entryTime: number;
}

const WABA_ID = '100000000000001';
const METADATA: NumberMetadata = { display_phone_number: '15550000000', phone_number_id: '200000000000001' };
const STATUS_ORDER = ['sent', 'delivered', 'read'] as const;
/** Customers writing in: 4 by their BSUID alone, 4 whose phone number comes and goes, 12 by their phone number. */
export const CUSTOMERS = 20;

export interface TrafficOptions {
  /** Makes wamids unique to this run, so a stack that already holds data cannot mix them up. */
  readonly runId: string;
  readonly random?: () => number;
  /** Epoch ms. @default Date.now */
  readonly clock?: () => number;
}

/** A reply whose statuses are still to come, in the order Meta will send them, and whom it went to. */
interface OutboundMessage {
  readonly wamid: string;
  readonly recipient: CustomerIds;
  readonly pending: string[];
}

/** Produces one new event per call, with a realistic mix. */
export class TrafficGenerator {
  readonly #runId: string;
  readonly #random: () => number;
  readonly #clock: () => number;
  #sequence = 0;
  /** Digits standing for the run in template ids (which are numeric). */
  readonly #runDigits: string;
  /** Outbound messages whose remaining statuses are still to come. */
  readonly #outbound: OutboundMessage[] = [];
  #inbound = 0;

  constructor(options: TrafficOptions) {
    this.#runId = options.runId;
    this.#random = options.random ?? Math.random;
    this.#clock = options.clock ?? Date.now;
    let hash = 0;
    for (const char of options.runId) hash = (hash * 31 + char.charCodeAt(0)) % 100_000_000;
    this.#runDigits = String(hash).padStart(8, '0');
  }

  next(): DrillEvent {
    const roll = this.#random();
    if (roll < 0.05) return this.#templateUpdate();
    if (roll < 0.5 && this.#outbound.length > 0) return this.#status();
    return this.#inboundMessage();
  }

  #id(prefix: string): string {
    this.#sequence++;
    return `${prefix}${this.#runId}.${this.#sequence}`;
  }

  #inboundMessage(): DrillEvent {
    const timestamp = String(Math.floor(this.#clock() / 1000));
    const wamid = this.#id('wamid.SIM.IN.');
    // Each inbound message gets a reply, whose statuses follow later.
    const pending: string[] = [...STATUS_ORDER];
    if (this.#random() < 0.15) {
      // Meta does not promise order: a `delivered` may overtake its `sent`, a `read` its `delivered`.
      const i = this.#random() < 0.5 ? 0 : 1;
      [pending[i], pending[i + 1]] = [pending[i + 1] as string, pending[i] as string];
    }
    const sender = customerOf(this.#inbound++);
    this.#outbound.push({ wamid: this.#id('wamid.SIM.OUT.'), recipient: sender, pending });
    const message = { ...senderNamedBy(sender), id: wamid, name: 'Drill Customer', text: 'drill', timestamp };
    return this.#event('messages', messagesValue([message], METADATA));
  }

  #status(): DrillEvent {
    const index = Math.floor(this.#random() * Math.min(this.#outbound.length, 20));
    const message = this.#outbound[index] as OutboundMessage;
    const status = message.pending.shift() as string;
    if (message.pending.length === 0) this.#outbound.splice(index, 1);
    const timestamp = String(Math.floor(this.#clock() / 1000));
    const update = { ...recipientNamedBy(message.recipient), id: message.wamid, status, timestamp };
    return this.#event('messages', statusesValue([update], METADATA));
  }

  #templateUpdate(): DrillEvent {
    // Template ids are large integers; the sequence keeps every update distinct within a run.
    return this.#event('message_template_status_update', {
      event: this.#random() < 0.8 ? 'APPROVED' : 'REJECTED',
      message_template_id: `7${this.#runDigits}${String(++this.#sequence).padStart(7, '0')}`,
      message_template_name: 'order_update',
      message_template_language: 'en_US',
      reason: 'NONE',
    });
  }

  #event(field: string, value: Record<string, unknown>): DrillEvent {
    const entryTime = Math.floor(this.#clock() / 1000);
    const change = { field, value };
    const extraction = extractEvents(webhookBody([{ change, entryTime }]));
    const event = extraction.ok ? extraction.events[0] : undefined;
    if (event === undefined || (extraction.ok && extraction.events.length !== 1)) {
      throw new Error(`The outage drill built a body without exactly one event (field ${field}).`);
    }
    return {
      key: event.key,
      kind: event.kind,
      metricField: event.metricField,
      change,
      phoneNumberId: event.phoneNumberId,
      wabaId: event.wabaId,
      entryTime,
    };
  }
}

/**
 * Who sent the run's `n`-th inbound message, and with which ids: a customer and, for one whose phone number comes
 * and goes, whether it came, from a generator seeded with `n` (the run's own draws stay as they were).
 */
function customerOf(n: number): CustomerIds {
  const draw = seededRandom(n);
  const serial = Math.floor(draw() * CUSTOMERS);
  const phone = `1555123${String(serial).padStart(4, '0')}`;
  return customerIds(customerKindOf(serial), { serial, phone }, draw() < 0.5);
}

/**
 * One webhook body carrying the given events: one entry per distinct entry time (as Meta groups them),
 * one change per event, in the given order.
 */
export function webhookBody(events: readonly Pick<DrillEvent, 'change' | 'entryTime'>[]): string {
  const entries = new Map<number, unknown[]>();
  for (const event of events) {
    const changes = entries.get(event.entryTime) ?? [];
    changes.push(event.change);
    entries.set(event.entryTime, changes);
  }
  return JSON.stringify({
    object: 'whatsapp_business_account',
    entry: [...entries].map(([time, changes]) => ({ id: WABA_ID, time, changes })),
  });
}
