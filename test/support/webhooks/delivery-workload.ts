/**
 * The reliability runs' traffic: N distinct events in signed-delivery-sized bodies, inbound messages mixed
 * with outbound statuses whose `sent`/`delivered`/`read` arrive shuffled across deliveries (so the status
 * ledger merges late statuses), plus Meta-style repeats of some deliveries.
 *
 * The expected event keys are built here from the ids the generator itself made (docs/design.md §1: `msg:<wamid>`,
 * `st:<wamid>:<status>`), never by the extractor under test; `keysOfBody` is the extractor's view, for
 * the tests to cross-check against these keys (see event-keys.ts).
 */
import { shuffled } from '../../../cli/local/seeded-random.ts';
import {
  envelope,
  type InboundMessage,
  inboundMessages,
  messagesChange,
  type OutboundStatus,
  statusesChange,
} from '../../../cli/meta-traffic/webhook-bodies.ts';

export const STATUS_SEQUENCE = ['sent', 'delivered', 'read'] as const;

export interface Workload {
  /** One body per original delivery. */
  readonly deliveries: readonly string[];
  /** Indexes into `deliveries` that Meta sends a second time. */
  readonly repeated: readonly number[];
  /** Every distinct event key, from the generator's ids, in no particular order. */
  readonly keys: readonly string[];
  /** Event keys of each delivery, from the generator's ids, in the body's walk order. */
  readonly keysOf: readonly (readonly string[])[];
  /** Outbound wamids whose statuses the workload carries (each gets the whole STATUS_SEQUENCE). */
  readonly outboundWamids: readonly string[];
}

export interface WorkloadOptions {
  readonly label: string;
  readonly deliveries: number;
  readonly messagesPerDelivery: number;
  /** Status events per delivery; their total must be a multiple of STATUS_SEQUENCE.length. */
  readonly statusesPerDelivery: number;
  /** Share of deliveries Meta repeats. */
  readonly repeatShare: number;
  readonly random: () => number;
}

/** docs/design.md §1: an inbound message's key. */
export function messageKey(message: Pick<InboundMessage, 'id'>): string {
  return `msg:${message.id}`;
}

/** docs/design.md §1: a status's key (the workload's statuses carry no `recipient_participant_id`). */
export function statusKey(status: Pick<OutboundStatus, 'id' | 'status'>): string {
  return `st:${status.id}:${status.status}`;
}

export function buildWorkload(options: WorkloadOptions): Workload {
  const { deliveries: count, messagesPerDelivery, statusesPerDelivery, random } = options;
  const totalStatuses = count * statusesPerDelivery;
  if (totalStatuses % STATUS_SEQUENCE.length !== 0) {
    throw new Error(`${totalStatuses} statuses are not whole ${STATUS_SEQUENCE.join('/')} sequences.`);
  }
  const messages = inboundMessages(count * messagesPerDelivery, options.label);
  const outboundWamids = Array.from(
    { length: totalStatuses / STATUS_SEQUENCE.length },
    (_, i) => `wamid.${options.label}out${String(i).padStart(5, '0')}`,
  );
  const statuses: OutboundStatus[] = shuffled(
    outboundWamids.flatMap((id, i) =>
      STATUS_SEQUENCE.map((status, rank) => ({
        id,
        status,
        recipientId: `1650556${String(i % 10_000).padStart(4, '0')}`,
        timestamp: String(1_749_416_400 + rank),
      })),
    ),
    random,
  );
  const messagesOf = (d: number) => messages.slice(d * messagesPerDelivery, (d + 1) * messagesPerDelivery);
  const statusesOf = (d: number) => statuses.slice(d * statusesPerDelivery, (d + 1) * statusesPerDelivery);
  const deliveries = Array.from({ length: count }, (_, d) => {
    const changes: object[] = [messagesChange(messagesOf(d))];
    if (statusesPerDelivery > 0) changes.push(statusesChange(statusesOf(d)));
    return envelope(changes);
  });
  // The messages change comes first in each body, so its keys come first in the walk order.
  const keysOf = deliveries.map((_, d) => [
    ...messagesOf(d).map(messageKey),
    ...statusesOf(d).map(statusKey),
  ]);
  const keys = [...new Set(keysOf.flat())];
  const repeated = shuffled(
    Array.from({ length: count }, (_, i) => i),
    random,
  ).slice(0, Math.round(count * options.repeatShare));
  return { deliveries, repeated, keys, keysOf, outboundWamids };
}
