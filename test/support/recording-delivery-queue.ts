/**
 * An in-memory `DeliveryQueuePort` for the receiver's orchestration: it stores what it is given and never
 * fails, so that any 5xx from `receiveWebhook` over it can only come from the receiver itself.
 */
import type {
  DeliveryMeta,
  DeliveryQueuePort,
  EnqueueResult,
  QuarantineReason,
  QuarantineResult,
} from '../../functions/queue/delivery-queue-port.ts';

export interface QuarantinedBody {
  readonly raw: Buffer;
  readonly reason: QuarantineReason;
  readonly meta: DeliveryMeta;
}

export class RecordingDeliveryQueue implements DeliveryQueuePort {
  readonly enqueued: (readonly string[])[] = [];
  readonly quarantined: QuarantinedBody[] = [];

  constructor(readonly maximumBodyBytes = 256 * 1024 - 256) {}

  async enqueue(parts: readonly string[]): Promise<EnqueueResult> {
    this.enqueued.push([...parts]);
    return { rejected: [] };
  }

  async quarantine(raw: Uint8Array, reason: QuarantineReason, meta: DeliveryMeta): Promise<QuarantineResult> {
    this.quarantined.push({ raw: Buffer.from(raw), reason, meta });
    return { messages: 1 };
  }

  get touched(): boolean {
    return this.enqueued.length > 0 || this.quarantined.length > 0;
  }
}
