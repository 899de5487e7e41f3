/**
 * What the receiver's orchestration and the consumer's quarantine need from the queues, and the shapes they
 * exchange with them: the subscribers' delivery queues, both lanes (`SubscriberFanOut`), and the pipeline's
 * quarantine queue (`SqsQuarantineQueue`), and its archive queue (`SqsArchiveQueue`). Tests substitute recording
 * queues.
 */
import type { ArchiveVerdict } from '../../contract/archive.ts';

export type QuarantineReason =
  /** The signed body is not UTF-8 JSON. */
  | 'invalid-json'
  /** JSON, but not `{"object":"whatsapp_business_account","entry":[…]}`. */
  | 'not-whatsapp-envelope'
  /** One event (or one change/entry that cannot be cut) is larger than a queue message. */
  | 'event-too-large'
  /** SQS refused a part as the sender's fault (e.g. `InvalidMessageContents`); retrying would not help. */
  | 'rejected-by-queue'
  /**
   * The parts planned for one subscriber would pass the output bound (functions/receiver/output-budget.ts):
   * the body is kept whole instead of being multiplied into the queues.
   */
  | 'amplifying-body'
  /** A part cut from an accepted body could not be read back as an envelope: the body is kept whole. */
  | 'unreadable-part'
  /** A message or status without a usable `id` (docs/design.md §1, "No identity, no key"): kept, never run. */
  | 'event-without-id';

export interface DeliveryMeta {
  /** Correlates the messages of one delivery (API Gateway's request id); at most 64 characters are kept. */
  readonly deliveryId: string;
  /** ISO-8601 time the receiver got the request. */
  readonly receivedAt: string;
  /** Epoch ms after which no new retry starts (one attempt is always made). */
  readonly retryDeadline: number;
  /**
   * The receiver's proof of the bytes (functions/commons/provenance.ts), when the writer has one but not the
   * key: a consumer quarantining a record passes on the proof the receiver gave it.
   */
  readonly proof?: string;
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

/** One queue message's body: a part of a delivery. */
export interface DeliveryPart {
  readonly body: string;
  /** A message-lane part's conversation: its message group on an ordered lane, and an attribute for ops. */
  readonly conversationId?: string;
  /** The part's event keys, in order: on an ordered lane their SHA-256 is its deduplication id. */
  readonly eventKeys?: readonly string[];
  /**
   * Its phone number id (else its WABA id): its `MessageGroupId` on a standard queue, which SQS then serves
   * fairly between groups (docs/design.md §10). An ordered lane groups by conversation instead.
   */
  readonly fairnessGroup?: string;
}

/** Which parts go into one queue: a subscriber's status lane (its `queueUrl`) or its message lane. */
export interface DeliveryRoute {
  readonly subscriber: string;
  readonly queueUrl: string;
  /** Indexes into the parts of the `enqueue` call, in the order they are to be stored. */
  readonly parts: readonly number[];
  /**
   * A FIFO queue (an ordered message lane): each message carries its conversation as `MessageGroupId` and a
   * deduplication id, and a conversation's messages are stored in order, retries included.
   */
  readonly ordered?: boolean;
}

/** The delivery side: each route's parts into its queue, the queues in parallel. */
export interface FanOutPort {
  /** Largest part body `enqueue` takes, in UTF-8 bytes: the message size limit minus our attributes. */
  readonly maximumBodyBytes: number;
  /**
   * Stores every route's parts in its queue, the queues in parallel, and returns once all are settled.
   * @throws EnqueueFailedError naming the subscribers whose queue still misses a part after the retries.
   */
  enqueue(
    parts: readonly DeliveryPart[],
    routes: readonly DeliveryRoute[],
    meta: DeliveryMeta,
  ): Promise<FanOutResult>;
}

/** The quarantine side: one queue for the whole pipeline, written by the receiver and every consumer. */
export interface QuarantinePort {
  /** @throws EnqueueFailedError when the body could not be stored in the quarantine queue. */
  quarantine(raw: Uint8Array, reason: QuarantineReason, meta: DeliveryMeta): Promise<QuarantineResult>;
}

/** What the archive keeps of a delivery beside its bytes and `DeliveryMeta` (contract/archive.ts). */
export interface ArchiveCopy {
  readonly verdict: ArchiveVerdict;
  /** The subscribers the delivery was routed to, in configuration order; none for a quarantined body. */
  readonly subscribers: readonly string[];
}

/** The archive lane: one copy of every delivery the receiver accepted, for the archiver to write to S3. */
export interface ArchivePort {
  /**
   * `body`: the delivery's bytes, or the text the receiver got (then its UTF-8 bytes are the delivery).
   * @throws EnqueueFailedError when the copy could not be stored in the archive queue after the retries.
   */
  archive(body: Uint8Array | string, copy: ArchiveCopy, meta: DeliveryMeta): Promise<QuarantineResult>;
}
