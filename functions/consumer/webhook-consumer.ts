import type { BatchClaimResult, ClaimRequest } from '../claims/claim-store.ts';
import { toClaimStoreError } from '../claims/errors.ts';
import { deadlineFromRemainingTime } from '../claims/lease.ts';
import { extractEvents } from '../events/extract-events.ts';
import type { EventExtraction, WebhookEvent } from '../events/types.ts';
import type { QueueRecord } from '../queue/consumer-queue-port.ts';
import { ConsumerBatch } from './consumer-batch.ts';
import type { Invocation, PreparedRecord, WebhookConsumerOptions } from './consumer-ports.ts';
import { selectEvents } from './event-selection.ts';
import { hasHandler } from './handler-api.ts';
import { describeError } from './handler-logger.ts';

export class WebhookConsumer {
  readonly #options: WebhookConsumerOptions;
  readonly #clock: () => number;

  constructor(options: WebhookConsumerOptions) {
    this.#options = options;
    this.#clock = options.clock ?? Date.now;
  }

  /** Parses every record and claims every event of the batch at once. Never throws for a record. */
  async prepareBatch(records: readonly QueueRecord[], invocation: Invocation): Promise<ConsumerBatch> {
    const selections = records.map((record) => selectEvents(extractEvents(record.body), this.#options));
    const extractions = selections.map((selection) => selection.extraction);
    const plans = extractions.map((extraction, index) =>
      extraction.ok
        ? extraction.events.map((event) =>
            this.#claimRequest(event, (records[index] as QueueRecord).messageId),
          )
        : [],
    );
    const claimed = await this.#claimAll(
      plans.flat().filter((request) => request !== undefined),
      invocation,
    );
    const results = claimed.map((result) => judgedForItsOwnRecord(result, claimed));
    let next = 0;
    const prepared = records.map(
      (record, index): PreparedRecord => ({
        record,
        extraction: extractions[index] as EventExtraction,
        claims: (plans[index] ?? []).map((request) => (request === undefined ? undefined : results[next++])),
        filteredOut: selections[index]?.filteredOut ?? [],
      }),
    );
    return new ConsumerBatch(prepared, invocation, this.#options);
  }

  /** What to claim for an event: with a lease when it has a side effect, as done when not, or nothing. */
  #claimRequest(event: WebhookEvent, messageId: string): ClaimRequest | undefined {
    const sideEffect =
      hasHandler(this.#options.handlers, event) ||
      (event.kind === 'status' && this.#options.statusLedger === 'always');
    if (!sideEffect && this.#options.claimUnhandledEvents === false) return undefined;
    return { key: event.key, field: event.field, messageId, sideEffect };
  }

  async #claimAll(events: readonly ClaimRequest[], invocation: Invocation): Promise<BatchClaimResult[]> {
    if (events.length === 0) return [];
    const deadlineMs = deadlineFromRemainingTime(this.#clock(), invocation.remainingTimeMs());
    try {
      return await this.#options.claims.claimMany(events, { deadlineMs });
    } catch (error) {
      // claimMany reports per-event failures itself; this is a failure of the call as a whole.
      this.#options.logger.error('Claiming the batch failed', {
        events: events.length,
        ...describeError(error),
      });
      return events.map((event) => ({
        key: event.key,
        pk: event.key,
        field: event.field,
        outcome: 'failed' as const,
        error: toClaimStoreError('claim', event.key, error),
      }));
    }
  }
}

/**
 * A key repeated across records of the batch is claimed once; its repeats share the first occurrence's fate,
 * except where that fate depends on which record holds the claim. Found in flight, or not claimed at all (the
 * request failed: its put may still have landed), the repeat's record may be the very message that holds the
 * claim, and acknowledging it could delete the only message able to retry the event. So such a repeat takes
 * the first occurrence's result and is judged for its own record, like any other duplicate in flight.
 */
function judgedForItsOwnRecord(
  result: BatchClaimResult,
  claimed: readonly BatchClaimResult[],
): BatchClaimResult {
  if (result.outcome !== 'repeat') return result;
  const first = claimed[result.firstIndex];
  if (first?.outcome !== 'duplicate-in-flight' && first?.outcome !== 'failed') return result;
  return { ...first, key: result.key, pk: result.pk };
}
