import { describe, expect, it } from 'vitest';
import type { MetricPoint } from '../../../local/observe/emf.ts';
import { SubscriberStats } from '../../../local/observe/subscriber-stats.ts';

function point(name: string, value: number, dimensions: Record<string, string>): MetricPoint {
  return { namespace: 'WhatsAppWebhookDedup', name, value, dimensions, timestamp: 10_000 };
}

describe('SubscriberStats', () => {
  it('sums every subscriber into the pipeline totals and keeps each one’s apart', () => {
    const stats = new SubscriberStats(['bot', 'crm'], {
      clock: () => 10_500,
      effectsOf: (name) => (name === 'bot' ? 2 : 5),
    });
    stats.addMetric(point('EventsFresh', 2, { Field: 'message' }), 'bot');
    stats.addMetric(point('EventsFresh', 3, { Field: 'message' }), 'crm');
    stats.addMetric(point('EventsDuplicate', 1, { Field: 'message' }), 'crm');
    stats.addMetric(point('DeliveriesAccepted', 4, {}), undefined);
    stats.addDuplicate({ key: 'msg:a', subscriber: 'crm', at: 10_100, inFlight: false });

    const snapshot = stats.snapshot();

    expect(snapshot.totals.byField.message).toMatchObject({ fresh: 5, duplicate: 1 });
    expect(snapshot.totals.counters.DeliveriesAccepted).toBe(4);
    expect(snapshot.recentDuplicates.map((d) => d.key)).toEqual(['msg:a']);
    expect(Object.keys(snapshot.subscribers)).toEqual(['bot', 'crm']);
    expect(snapshot.subscribers.bot?.effects).toBe(2);
    expect(snapshot.subscribers.bot?.totals.byField.message).toMatchObject({ fresh: 2, duplicate: 0 });
    expect(snapshot.subscribers.bot?.totals.counters.DeliveriesAccepted).toBeUndefined();
    expect(snapshot.subscribers.bot?.recentDuplicates).toEqual([]);
    expect(snapshot.subscribers.crm?.effects).toBe(5);
    expect(snapshot.subscribers.crm?.totals.byField.message).toMatchObject({ fresh: 3, duplicate: 1 });
    expect(snapshot.subscribers.crm?.recentDuplicates.map((d) => d.key)).toEqual(['msg:a']);
  });

  it('adds the subscriber queues up for the pipeline, with the quarantine queue beside them', () => {
    const stats = new SubscriberStats(['bot', 'crm']);
    stats.addQueueSamples(
      { bot: { backlog: 1, inFlight: 2, dlq: 0 }, crm: { backlog: 3, inFlight: 0, dlq: 4 } },
      7,
    );

    const snapshot = stats.snapshot();

    expect(snapshot.queue).toEqual({ backlog: 4, inFlight: 2, dlq: 4, quarantine: 7 });
    expect(snapshot.subscribers.bot?.queue).toEqual({ backlog: 1, inFlight: 2, dlq: 0 });
    expect(snapshot.subscribers.crm?.queue).toEqual({ backlog: 3, inFlight: 0, dlq: 4 });
  });
});
