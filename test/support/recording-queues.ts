/**
 * In-memory queues for the receiver's orchestration: the subscribers' delivery queues (`FanOutPort`) and the
 * quarantine queue (`QuarantinePort`). By default they store what they are given and never fail, so that any
 * 5xx from `receiveWebhook` over them can only come from the receiver itself; a test can make a subscriber's
 * queue refuse parts or stay unavailable, as the SQS adapter reports it.
 */
import type { SubscriberQueue } from '../../contract/subscribers.ts';
import type {
  DeliveryMeta,
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
  /** Subscriber name → the parts of each delivery its queue stored, in order. */
  readonly stored = new Map<string, string[][]>();
  readonly quarantined: QuarantinedBody[] = [];

  constructor(
    readonly maximumBodyBytes = 256 * 1024 - 256,
    private readonly behaviour: RecordingQueuesBehaviour = {},
  ) {}

  async enqueue(subscribers: readonly SubscriberQueue[], parts: readonly string[]): Promise<FanOutResult> {
    const unavailable = subscribers.filter(({ name }) => this.behaviour.unavailable?.includes(name));
    const rejected: RejectedPart[] = [];
    for (const { name } of subscribers) {
      if (unavailable.some((subscriber) => subscriber.name === name)) continue;
      const refused = this.behaviour.refuse?.[name] ?? [];
      for (const part of refused) rejected.push({ subscriber: name, part, code: 'InvalidMessageContents' });
      this.stored.set(name, [
        ...(this.stored.get(name) ?? []),
        parts.filter((_, index) => !refused.includes(index)),
      ]);
    }
    if (unavailable.length > 0) {
      throw new EnqueueFailedError(
        'delivery',
        parts.length * unavailable.length,
        parts.length * unavailable.length,
        'InternalError',
        unavailable.map(({ name }) => name),
      );
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
