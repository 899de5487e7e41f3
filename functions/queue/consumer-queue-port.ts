/**
 * What the consumer needs of the queue it reads: the queued record, and the ports that bring a failed record
 * back at a chosen time and move one aside on an ordered lane (`SqsRedeliveryScheduler`,
 * `SqsConversationDeadLetters`). Types only; tests substitute recording ports.
 */

/** One queued message: an SQS record fits as is. */
export interface QueueRecord {
  readonly messageId: string;
  readonly body: string;
  /** Needed to bring a failed record back at a chosen time; without it the queue's visibility timeout rules. */
  readonly receiptHandle?: string;
  /**
   * `ApproximateReceiveCount` sets the backoff of a failed record (absent: a first receive); `SentTimestamp`
   * (epoch ms, the receiver's enqueue) is where the wait before the handler is counted from, and where a
   * conversation's burst window starts; `MessageGroupId` is the conversation on an ordered lane.
   */
  readonly attributes?: {
    readonly ApproximateReceiveCount?: string;
    readonly SentTimestamp?: string;
    readonly MessageGroupId?: string;
  };
  /** As Lambda passes them; kept when a record is moved to the dead-letter queue. */
  readonly messageAttributes?: Readonly<
    Record<
      string,
      { readonly dataType: string; readonly stringValue?: string; readonly binaryValue?: string }
    >
  >;
}

/** A failed record and when it should become visible again, in seconds from now. */
export interface RecordRedelivery {
  readonly record: QueueRecord;
  readonly delaySeconds: number;
}

/**
 * The consumer's own dead-lettering: on an ordered lane, a record that fails on its `maxReceives`-th receive
 * is moved to the DLQ, and its conversation goes on in the same invocation; on any lane, a record a handler
 * gave up on (`DeadLetter`) once it was received as often as the handler asked. Throws when it could not.
 */
export interface DeadLetterPort {
  readonly maxReceives: number;
  /** `reasons`: for a record a handler gave up on, why, written on its dead-letter message. */
  move(records: readonly QueueRecord[], reasons?: ReadonlyMap<string, DeadLetterReason>): Promise<void>;
}

/** Why a handler gave up on a record (`DeadLetter`): a short code and details for `ops dlq`. */
export interface DeadLetterReason {
  readonly reason: string;
  readonly details: Readonly<Record<string, string>>;
}

/** Sets when failed records come back (SQS: their visibility timeout). Throws when it could not. */
export interface RedeliveryScheduler {
  redeliverAfter(redeliveries: readonly RecordRedelivery[]): Promise<void>;
}
