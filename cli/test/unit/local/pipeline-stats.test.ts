import type { SQSRecord } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { parseEmf, parseJsonLine } from '../../../local/observe/emf.ts';
import { duplicateRate, PipelineStats } from '../../../local/observe/pipeline-stats.ts';

/** An EMF document as Powertools Metrics prints it for the consumer. */
function consumerEmf(field: string, metrics: Record<string, number>, timestamp: number) {
  return {
    _aws: {
      Timestamp: timestamp,
      CloudWatchMetrics: [
        {
          Namespace: 'WhatsAppWebhookDedup',
          Dimensions: [['service', 'Field']],
          Metrics: Object.keys(metrics).map((Name) => ({ Name, Unit: 'Count' })),
        },
      ],
    },
    service: 'whatsapp-webhook-dedup',
    Field: field,
    ...metrics,
  };
}

describe('parseEmf', () => {
  it('reads each metric with its dimensions, keeps its values and sums them', () => {
    const points = parseEmf({
      ...consumerEmf('status', { EventsFresh: 2, EventsDuplicate: 1 }, 1000),
      EventsDuplicate: [1, 2],
    });
    expect(points).toEqual([
      {
        namespace: 'WhatsAppWebhookDedup',
        name: 'EventsFresh',
        value: 2,
        values: [2],
        dimensions: { service: 'whatsapp-webhook-dedup', Field: 'status' },
        timestamp: 1000,
      },
      {
        namespace: 'WhatsAppWebhookDedup',
        name: 'EventsDuplicate',
        value: 3,
        values: [1, 2],
        dimensions: { service: 'whatsapp-webhook-dedup', Field: 'status' },
        timestamp: 1000,
      },
    ]);
  });

  it('is undefined for a log line or anything else', () => {
    expect(parseEmf({ level: 'INFO', message: 'Batch processed' })).toBeUndefined();
    expect(parseEmf('text')).toBeUndefined();
    expect(parseJsonLine('not json')).toBeUndefined();
    expect(parseJsonLine('{"a":1}')).toEqual({ a: 1 });
  });
});

describe('PipelineStats', () => {
  it('tallies fresh and duplicate events per field, per second and in total', () => {
    let now = 10_000;
    const stats = new PipelineStats({ clock: () => now });
    for (const point of parseEmf(consumerEmf('message', { EventsFresh: 3 }, 10_100)) ?? [])
      stats.addMetric(point);
    for (const point of parseEmf(
      consumerEmf('message', { EventsDuplicate: 1, EventsDuplicateInFlight: 1 }, 11_200),
    ) ?? []) {
      stats.addMetric(point);
    }
    now = 12_000;

    const snapshot = stats.snapshot();
    expect(snapshot.totals.byField.message).toEqual({
      fresh: 3,
      duplicate: 2,
      duplicateInFlight: 1,
      handlerErrors: 0,
      duplicateRate: 40,
    });
    expect(snapshot.series.map((b) => b.t)).toEqual([10, 11, 12]);
    expect(snapshot.series[0]?.byField.message?.fresh).toBe(3);
    expect(snapshot.series[1]?.byField.message?.duplicate).toBe(2);
    expect(snapshot.totals.counters['EventsFresh/message']).toBe(3);
  });

  it('measures the wait of each record from its SentTimestamp to the invocation start', () => {
    const stats = new PipelineStats({ clock: () => 5_000 });
    const record = (sent: number) => ({ attributes: { SentTimestamp: String(sent) } }) as SQSRecord;
    stats.addInvocation({
      awsRequestId: 'r',
      records: [record(4_000), record(4_500)],
      startedAt: 4_900,
      durationMs: 50,
      outcome: 'success',
      failedMessageIds: [],
    });
    expect(stats.snapshot().totals).toMatchObject({
      records: 2,
      meanWaitMs: 650,
      invocations: 1,
      meanInvocationMs: 50,
    });
  });

  it('keeps only the most recent duplicates, newest first', () => {
    const stats = new PipelineStats({ recentDuplicates: 2 });
    for (const key of ['a', 'b', 'c']) stats.addDuplicate({ key, at: 1, inFlight: false });
    expect(stats.snapshot().recentDuplicates.map((d) => d.key)).toEqual(['c', 'b']);
  });

  it("counts a forward subscriber's answers by class", () => {
    const stats = new PipelineStats();
    for (const [answerClass, value] of [
      ['2xx', 3],
      ['5xx', 1],
      ['2xx', 2],
    ] as const) {
      stats.addMetric({
        namespace: 'WhatsAppWebhookDedup',
        name: 'ForwardAnswers',
        value,
        dimensions: { service: 'whatsapp-webhook-dedup', Subscriber: 'chatwoot', AnswerClass: answerClass },
        timestamp: Date.now(),
      });
    }
    expect(stats.snapshot().totals.counters).toEqual({ 'ForwardAnswers/2xx': 5, 'ForwardAnswers/5xx': 1 });
  });

  it("counts a declared number's repeat of its fields' counts no second time", () => {
    const stats = new PipelineStats();
    stats.addMetric({
      namespace: 'WhatsAppWebhookDedup',
      name: 'EventsFresh',
      value: 2,
      dimensions: { service: 'whatsapp-webhook-dedup', Subscriber: 'latam', PhoneNumberId: '201' },
      timestamp: Date.now(),
    });
    expect(stats.snapshot().totals.counters).toEqual({});
  });

  it('ignores metrics that are not the pipeline’s', () => {
    const stats = new PipelineStats();
    stats.addMetric({
      namespace: 'Other',
      name: 'ColdStart',
      value: 1,
      dimensions: {},
      timestamp: Date.now(),
    });
    expect(stats.snapshot().totals.counters).toEqual({});
  });
});

describe('duplicateRate', () => {
  it('is 100 × duplicates / (fresh + duplicates), 0 without events', () => {
    expect(duplicateRate({ fresh: 3, duplicate: 1 })).toBe(25);
    expect(duplicateRate({ fresh: 0, duplicate: 0 })).toBe(0);
  });
});
