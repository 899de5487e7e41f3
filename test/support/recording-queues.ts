/**
 * In-memory queues for the receiver's orchestration: the subscribers' delivery queues (`FanOutPort`) and the
 * quarantine queue (`QuarantinePort`). By default they store what they are given and never fail, so that any
 * 5xx from `receiveWebhook` over them can only come from the receiver itself; a test can make a subscriber's
 * queue refuse parts or stay unavailable, as the SQS adapter reports it.
 */
import type { SubscriberQueue } from '../../contract/subscribers.ts';
import type {
  DeliveryMeta,
  DeliveryPart,
  DeliveryRoute,
  FanOutPort,
  FanOutResult,
  QuarantinePort,
  QuarantineReason,
  QuarantineResult,
  RejectedPart,
} from '../../functions/queue/delivery-queue-port.ts';
import { EnqueueFailedError } from '../../functions/queue/errors.ts';

export interface QuarantinedBody {
  readonly raw: Buffer;
  readonly reason: QuarantineReason;
  readonly meta: DeliveryMeta;
}

export interface RecordingQueuesBehaviour {
  /** Parts a subscriber's queue refuses as the sender's fault (`InvalidMessageContents`). */
  readonly refuse?: Readonly<Record<string, readonly number[]>>;
  /** Subscribers whose queue stays unavailable: nothing stored there, `EnqueueFailedError` naming them. */
  readonly unavailable?: readonly string[];
}

export class RecordingQueues implements FanOutPort, QuarantinePort {
  /** Subscriber name → the parts of each delivery its queues stored (both lanes), in order. */
  readonly stored = new Map<string, string[][]>();
  /** Queue URL → the parts of each delivery it stored, with the route's ordering. */
  readonly storedIn = new Map<string, { parts: DeliveryPart[]; ordered: boolean }[]>();
  readonly quarantined: QuarantinedBody[] = [];

  constructor(
    readonly maximumBodyBytes = 256 * 1024 - 256,
    private readonly behaviour: RecordingQueuesBehaviour = {},
  ) {}

  async enqueue(parts: readonly DeliveryPart[], routes: readonly DeliveryRoute[]): Promise<FanOutResult> {
    const unavailable = routes.filter(({ subscriber }) => this.behaviour.unavailable?.includes(subscriber));
    const rejected: RejectedPart[] = [];
    const delivered = new Map<string, string[]>();
    for (const { subscriber, queueUrl, parts: routed, ordered } of routes) {
      if (unavailable.some((route) => route.subscriber === subscriber)) continue;
      const refused = this.behaviour.refuse?.[subscriber] ?? [];
      const kept = routed.filter((part) => !refused.includes(part));
      for (const part of routed.filter((index) => refused.includes(index)))
        rejected.push({ subscriber, part, code: 'InvalidMessageContents' });
      delivered.set(subscriber, [
        ...(delivered.get(subscriber) ?? []),
        ...kept.map((part) => parts[part]?.body ?? ''),
      ]);
      this.storedIn.set(queueUrl, [
        ...(this.storedIn.get(queueUrl) ?? []),
        { parts: kept.map((part) => parts[part] as DeliveryPart), ordered: ordered === true },
      ]);
    }
    for (const [subscriber, bodies] of delivered) {
      this.stored.set(subscriber, [...(this.stored.get(subscriber) ?? []), bodies]);
    }
    if (unavailable.length > 0) {
      const missing = unavailable.reduce((sum, route) => sum + route.parts.length, 0);
      throw new EnqueueFailedError('delivery', missing, missing, 'InternalError', [
        ...new Set(unavailable.map(({ subscriber }) => subscriber)),
      ]);
    }
    return { rejected };
  }

  async quarantine(raw: Uint8Array, reason: QuarantineReason, meta: DeliveryMeta): Promise<QuarantineResult> {
    this.quarantined.push({ raw: Buffer.from(raw), reason, meta });
    return { messages: 1 };
  }

  /** The parts of each delivery stored for `subscriber`. */
  storedFor(subscriber: string): string[][] {
    return this.stored.get(subscriber) ?? [];
  }

  get touched(): boolean {
    return this.stored.size > 0 || this.quarantined.length > 0;
  }
}

/** One subscriber wanting every field, as a pipeline configured without `subscribers` has. */
export const DEFAULT_SUBSCRIBERS: readonly SubscriberQueue[] = [
  { name: 'default', queueUrl: 'memory://default' },
];
