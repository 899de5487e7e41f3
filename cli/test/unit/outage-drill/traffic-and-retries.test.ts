import { describe, expect, it } from 'vitest';
import { conversationOf } from '../../../../functions/consumer/consumer-batch.ts';
import { extractEvents } from '../../../../functions/events/extract-events.ts';
import type { WebhookEvent } from '../../../../functions/events/types.ts';
import { seededRandom } from '../../../local/seeded-random.ts';
import {
  compressedMetaRetries,
  META_RETRIES,
  nextArrivalGapMs,
  retryDelayMs,
} from '../../../meta-traffic/retries.ts';
import { CUSTOMERS, TrafficGenerator, webhookBody } from '../../../outage-drill/traffic.ts';
import { judge } from '../../../outage-drill/verdict.ts';

describe('TrafficGenerator', () => {
  const generate = (n: number, seed = 1) => {
    const traffic = new TrafficGenerator({
      runId: 'test',
      random: seededRandom(seed),
      clock: () => 1_780_000_000_000,
    });
    return Array.from({ length: n }, () => traffic.next());
  };

  it('produces distinct events whose keys are the extractor’s', () => {
    const events = generate(500);
    expect(new Set(events.map((e) => e.key)).size).toBe(500);
    for (const event of events.slice(0, 50)) {
      const extraction = extractEvents(webhookBody([event]));
      expect(extraction.ok && extraction.events.map((e) => e.key)).toEqual([event.key]);
    }
  });

  it('mixes inbound messages, statuses and template updates', () => {
    const fields = new Set(generate(500).map((e) => e.metricField));
    expect(fields).toEqual(new Set(['message', 'status', 'message_template_status_update']));
  });

  it('sends each outbound message’s statuses, sometimes out of order', () => {
    const statuses = generate(2000)
      .map((e) => e.key.split(':'))
      .filter((parts) => parts[0] === 'st');
    const byMessage = new Map<string, string[]>();
    for (const [, wamid, status] of statuses)
      byMessage.set(wamid as string, [...(byMessage.get(wamid as string) ?? []), status as string]);
    const complete = [...byMessage.values()].filter((s) => s.length === 3);
    expect(complete.length).toBeGreaterThan(50);
    for (const sequence of complete) expect([...sequence].sort()).toEqual(['delivered', 'read', 'sent']);
    expect(complete.some((s) => s.join() !== 'sent,delivered,read')).toBe(true);
  });

  const extracted = (field: string, n = 2000) =>
    generate(n)
      .filter((e) => e.metricField === field)
      .flatMap((e) => {
        const extraction = extractEvents(webhookBody([e]));
        return extraction.ok ? extraction.events : [];
      });
  const has = (event: WebhookEvent, member: string) => typeof event.payload[member] === 'string';

  it('has customers by BSUID alone and customers whose phone number comes and goes, each one conversation', () => {
    const conversations = new Map<string, WebhookEvent[]>();
    for (const message of extracted('message')) {
      const id = conversationOf(message);
      conversations.set(id, [...(conversations.get(id) ?? []), message]);
    }
    expect(conversations.size).toBe(CUSTOMERS);
    const byBsuid = [...conversations].filter(([id]) => id.includes(':US.')).map(([, messages]) => messages);
    const withPhone = byBsuid.map((messages) => messages.filter((message) => has(message, 'from')).length);
    // Of 20 customers, 4 by their BSUID alone and 4 whose phone number came with some messages, not all.
    expect(withPhone.filter((count) => count === 0)).toHaveLength(4);
    expect(withPhone.filter((count, i) => count > 0 && count < (byBsuid[i]?.length ?? 0))).toHaveLength(4);
  });

  it("names a reply's customer in its statuses by the ids their message carried", () => {
    const statuses = extracted('status');
    const byBsuidAlone = statuses.filter((s) => has(s, 'recipient_user_id') && !has(s, 'recipient_id'));
    const byPhoneAlone = statuses.filter((s) => has(s, 'recipient_id') && !has(s, 'recipient_user_id'));
    expect(byBsuidAlone.length).toBeGreaterThan(0);
    expect(byPhoneAlone.length).toBeGreaterThan(byBsuidAlone.length);
  });

  it('re-batches events into one body without changing their keys', () => {
    const events = generate(7);
    const extraction = extractEvents(webhookBody(events));
    expect(extraction.ok && extraction.events.map((e) => e.key)).toEqual(events.map((e) => e.key));
  });
});

describe('Meta-style retries', () => {
  it('retry with decreasing frequency, up to the cap', () => {
    const noJitter = { ...compressedMetaRetries(1_000, 16_000), jitter: 0 };
    expect([1, 2, 3, 4, 5, 6, 7].map((n) => retryDelayMs(n, noJitter))).toEqual([
      1_000, 2_000, 4_000, 8_000, 16_000, 16_000, 16_000,
    ]);
    expect(compressedMetaRetries(500, 4_000).delaysMs).toEqual([500, 1_000, 2_000, 4_000]);
    expect(compressedMetaRetries(1_000, 10_000).delaysMs).toEqual([1_000, 2_000, 4_000, 8_000, 10_000]);
  });

  it("the assumed schedule: minutes apart, then hourly, within Meta's seven days", () => {
    const noJitter = { ...META_RETRIES, jitter: 0 };
    expect([1, 2, 8, 9, 100].map((n) => retryDelayMs(n, noJitter) / 1000)).toEqual([
      15, 60, 3_600, 3_600, 3_600,
    ]);
    expect(META_RETRIES.windowMs).toBe(7 * 24 * 3600 * 1000);
  });

  it('jitter stays within its bounds', () => {
    const random = seededRandom(3);
    for (let i = 0; i < 1000; i++) {
      const delay = retryDelayMs(2, compressedMetaRetries(1_000, 16_000), random);
      expect(delay).toBeGreaterThanOrEqual(1_600);
      expect(delay).toBeLessThanOrEqual(2_400);
    }
  });

  it('Poisson arrivals average 1/λ apart', () => {
    const random = seededRandom(5);
    const gaps = Array.from({ length: 20_000 }, () => nextArrivalGapMs(8, random));
    const mean = gaps.reduce((a, b) => a + b, 0) / gaps.length;
    expect(mean).toBeGreaterThan(120);
    expect(mean).toBeLessThan(130);
  });

  it('a seed replays the same sequence', () => {
    const a = seededRandom(42);
    const b = seededRandom(42);
    expect([a(), a(), a()]).toEqual([b(), b(), b()]);
  });
});

describe('judge', () => {
  const events = ['msg:a', 'msg:b', 'msg:c', 'msg:a'].map((key) => ({ event: { key } }));

  it('passes when every distinct event was effected exactly once', () => {
    const verdict = judge(events, {
      total: 3,
      effects: ['msg:a', 'msg:b', 'msg:c', 'msg:other-run'].map((key) => ({ key, count: 1 })),
    });
    expect(verdict).toEqual({
      exactlyOnce: true,
      distinctEvents: 3,
      effectedOnce: 3,
      missing: [],
      duplicated: [],
    });
  });

  it('fails on a missing or a repeated effect', () => {
    const verdict = judge(events, {
      total: 3,
      effects: [
        { key: 'msg:a', count: 2 },
        { key: 'msg:b', count: 1 },
      ],
    });
    expect(verdict).toEqual({
      exactlyOnce: false,
      distinctEvents: 3,
      effectedOnce: 1,
      missing: ['msg:c'],
      duplicated: [{ key: 'msg:a', count: 2 }],
    });
  });
});
