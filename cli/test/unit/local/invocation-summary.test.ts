import { describe, expect, it } from 'vitest';
import { ConsumerFieldMetric } from 'whatsapp-webhook-dedup/contract/metric-names';
import {
  countInvocationEvents,
  type InvocationEvents,
  summariseInvocation,
} from '../../../local/observe/invocation-summary.ts';

const report = (records: number, failed = 0) => ({
  records: Array.from({ length: records }, () => ({}) as never),
  durationMs: 12,
  outcome: failed > 0 ? ('partial-failure' as const) : ('success' as const),
  failedMessageIds: Array.from({ length: failed }, (_, i) => `m${i}`),
});

describe("the local stack's line per invocation", () => {
  it('says a repeat a claim caught is a duplicate, counting in-flight repeats too', () => {
    const events: InvocationEvents = { fresh: 0, duplicates: 0 };
    countInvocationEvents(events, { name: ConsumerFieldMetric.EventsDuplicate, value: 1 });
    expect(summariseInvocation('default-message', report(1), events)).toBe(
      'default-message: 1 record, 1 duplicate in 12 ms, success',
    );
    countInvocationEvents(events, { name: ConsumerFieldMetric.EventsDuplicateInFlight, value: 1 });
    countInvocationEvents(events, { name: ConsumerFieldMetric.EventsFresh, value: 3 });
    countInvocationEvents(events, { name: ConsumerFieldMetric.HandlerErrors, value: 5 });
    expect(summariseInvocation('default-status', report(4, 1), events)).toBe(
      'default-status: 4 records, 3 fresh, 2 duplicates in 12 ms, partial-failure (1 left for retry)',
    );
  });

  it('names only the records when the consumer counted no event', () => {
    expect(summariseInvocation('default-status', report(2), undefined)).toBe(
      'default-status: 2 records in 12 ms, success',
    );
  });
});
