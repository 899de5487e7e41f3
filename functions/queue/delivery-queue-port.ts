/**
 * What the receiver's orchestration and the consumer's quarantine need from a queue, and the shapes they
 * exchange with it. The SQS adapters (`sqs-delivery-queue.ts`, `sqs-dead-letter-queue.ts`) implement it;
 * tests substitute a recording queue.
 */
export type QuarantineReason =
  /** The signed body is not UTF-8 JSON. */
  | 'invalid-json'
  /** JSON, but not `{"object":"whatsapp_business_account","entry":[…]}`. */
  | 'not-whatsapp-envelope'
  /** One event (or one change/entry that cannot be cut) is larger than a queue message. */
  | 'event-too-large'
  /** SQS refused a part as the sender's fault (e.g. `InvalidMessageContents`); retrying would not help. */
  | 'rejected-by-queue';

export interface DeliveryMeta {
  /** Correlates the messages of one delivery (API Gateway's request id); at most 64 characters are kept. */
  readonly deliveryId: string;
  /** ISO-8601 time the receiver got the request. */
  readonly receivedAt: string;
  /** Epoch ms after which no new retry starts (one attempt is always made). */
  readonly retryDeadline: number;
}

export interface RejectedPart {
  /** Index of the part in the `enqueue` call. */
  readonly part: number;
  /** The SQS error code, e.g. `InvalidMessageContents`. */
  readonly code: string;
}

export interface EnqueueResult {
  /** Parts SQS refused as the sender's fault; not retried. The caller decides where they go. */
  readonly rejected: readonly RejectedPart[];
}

export interface QuarantineResult {
  /** Dead-letter messages written: 1, or more when the base64 body had to be spread over chunks. */
  readonly messages: number;
}

/** What the receiver's orchestration needs from a queue. */
export interface DeliveryQueuePort {
  /** Largest part body `enqueue` takes, in UTF-8 bytes: the message size limit minus our attributes. */
  readonly maximumBodyBytes: number;
  /** @throws EnqueueFailedError when some part is still unstored after the retries. */
  enqueue(parts: readonly string[], meta: DeliveryMeta): Promise<EnqueueResult>;
  /** @throws EnqueueFailedError when the body could not be stored in the dead-letter queue. */
  quarantine(raw: Uint8Array, reason: QuarantineReason, meta: DeliveryMeta): Promise<QuarantineResult>;
}
