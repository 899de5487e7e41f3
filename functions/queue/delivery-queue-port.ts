/**
 * What the receiver's orchestration and the consumer's quarantine need from the queues, and the shapes they
 * exchange with them: the subscribers' delivery queues (`SubscriberFanOut`) and the pipeline's quarantine
 * queue (`SqsQuarantineQueue`). Tests substitute recording queues.
 */
import type { SubscriberQueue } from '../../contract/subscribers.ts';

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
  /** The subscriber whose queue refused the part. */
  readonly subscriber: string;
  /** Index of the part in the `enqueue` call. */
  readonly part: number;
  /** The SQS error code, e.g. `InvalidMessageContents`. */
  readonly code: string;
}

export interface FanOutResult {
  /** Parts SQS refused as the sender's fault, per subscriber; not retried. The caller decides where they go. */
  readonly rejected: readonly RejectedPart[];
}

export interface QuarantineResult {
  /** Quarantine messages written: 1, or more when the base64 body had to be spread over chunks. */
  readonly messages: number;
}

/** The delivery side: the same parts into the queue of each subscriber that wants the delivery. */
export interface FanOutPort {
  /** Largest part body `enqueue` takes, in UTF-8 bytes: the message size limit minus our attributes. */
  readonly maximumBodyBytes: number;
  /**
   * Stores every part in each subscriber's queue, the subscribers in parallel, and returns once all are settled.
   * @throws EnqueueFailedError naming the subscribers whose queue still misses a part after the retries.
   */
  enqueue(
    subscribers: readonly SubscriberQueue[],
    parts: readonly string[],
    meta: DeliveryMeta,
  ): Promise<FanOutResult>;
}

/** The quarantine side: one queue for the whole pipeline, written by the receiver and every consumer. */
export interface QuarantinePort {
  /** @throws EnqueueFailedError when the body could not be stored in the quarantine queue. */
  quarantine(raw: Uint8Array, reason: QuarantineReason, meta: DeliveryMeta): Promise<QuarantineResult>;
}
