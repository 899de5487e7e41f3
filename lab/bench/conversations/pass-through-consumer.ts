/**
 * The bench's pass-through floor (docs/benchmarks.md, "Conversations"): a consumer that calls the handlers on
 * every message and status of its records, in order, with no claim, no ledger, no logging and no metrics. The
 * local stack runs it in every lane instead of the real consumer when `LOCAL_CONSUMER` names this module, so
 * that the floor is `npm start` itself (the same receiver, queues, pollers and observers) minus the consumer.
 */
import type { SQSEvent } from 'aws-lambda';
import type { WebhookHandlers } from '../../../functions/consumer/handler-api.ts';

interface WebhookItem {
  readonly id?: unknown;
  readonly status?: unknown;
}
interface WebhookBody {
  readonly entry?: readonly {
    readonly changes?: readonly {
      readonly field?: unknown;
      readonly value?: { messages?: WebhookItem[]; statuses?: WebhookItem[] } & Record<string, unknown>;
    }[];
  }[];
}

/**
 * The handler called on every message and status of the batch's records, in order, with no claim: the least
 * any consumer of this queue does. The context holds what the bench's handlers read (key, payload).
 */
export function passThroughConsumer(handlers: WebhookHandlers) {
  return async (event: SQSEvent): Promise<{ batchItemFailures: [] }> => {
    for (const record of event.Records) {
      const body = JSON.parse(record.body) as WebhookBody;
      for (const entry of body.entry ?? []) {
        for (const change of entry.changes ?? []) {
          const value = change.value ?? {};
          for (const payload of value.messages ?? []) {
            await handlers.onMessage?.({ key: `msg:${String(payload.id)}`, payload, value } as never);
          }
          for (const payload of value.statuses ?? []) {
            const key = `st:${String(payload.id)}:${String(payload.status)}`;
            await handlers.onStatus?.({ key, payload, value } as never);
          }
        }
      }
    }
    return { batchItemFailures: [] };
  };
}

/** `LOCAL_CONSUMER`'s entry point: the local stack calls it once per lane. */
export function createConsumer(handlers: WebhookHandlers): ReturnType<typeof passThroughConsumer> {
  return passThroughConsumer(handlers);
}
