/** The conversations bench's figures from made-up journals: handler runs, waits, order inversions. */
import { describe, expect, it } from 'vitest';
import { singleMessageBody, statusesBody } from '../../../cli/meta-traffic/webhook-bodies.ts';
import { defineWebhookHandlers } from '../../../functions/consumer/handler-api.ts';
import {
  foldJournal,
  judgeOrder,
  type Sent,
  summarizeLatencies,
  waits,
} from '../../bench/conversations/conversations-results.ts';
import { sleepText } from '../../bench/conversations/journal-handlers.ts';
import { passThroughConsumer } from '../../bench/conversations/pass-through-consumer.ts';

const sent = (key: string, postedAtMs: number): Sent => ({ key, postedAtMs });

describe('foldJournal', () => {
  it("keeps each key's first start and first end, and counts its starts", () => {
    const runs = foldJournal([
      'S msg:a 100.5',
      'S msg:b 101',
      'E msg:a 130.25',
      'S msg:a 140',
      'E msg:a 150',
      'not a line',
      '',
    ]);
    expect(runs.get('msg:a')).toEqual({ startMs: 100.5, endMs: 130.25, starts: 2 });
    expect(runs.get('msg:b')).toEqual({ startMs: 101, starts: 1 });
    expect(runs.size).toBe(2);
  });

  it('adds to the runs it is given, so that a journal can be read in pieces', () => {
    const runs = foldJournal(['S msg:a 1']);
    foldJournal(['E msg:a 9'], runs);
    expect(runs.get('msg:a')).toEqual({ startMs: 1, endMs: 9, starts: 1 });
  });
});

describe('waits', () => {
  it('measure POST → handler start, and count the messages that reached no handler', () => {
    const runs = foldJournal(['S msg:a 150', 'S msg:b 1300']);
    expect(waits([sent('msg:a', 100), sent('msg:b', 1000), sent('msg:c', 1000)], runs)).toEqual({
      waitsMs: [50, 300],
      missing: 1,
    });
  });
});

describe('judgeOrder', () => {
  const pair = (first: string, second: string, at = 0) => ({
    first: sent(first, at),
    second: sent(second, at + 30),
  });

  it('count a pair whose second handler started before the first finished, not one that waited', () => {
    const runs = foldJournal([
      // in order: b starts once a ended
      'S msg:a 10',
      'E msg:a 60',
      'S msg:b 60',
      'E msg:b 70',
      // overtaken while running: d starts before c ended
      'S msg:c 10',
      'S msg:d 40',
      'E msg:c 90',
      'E msg:d 95',
      // reversed: f before e
      'S msg:f 10',
      'E msg:f 20',
      'S msg:e 30',
      'E msg:e 40',
    ]);
    expect(
      judgeOrder([pair('msg:a', 'msg:b'), pair('msg:c', 'msg:d'), pair('msg:e', 'msg:f')], runs),
    ).toEqual({ inversions: 2, judged: 3, missing: 0, repeated: 0, medianGapSentMs: 30 });
  });

  it('count a second start while the first never finished as an inversion', () => {
    const runs = foldJournal(['S msg:a 10', 'S msg:b 50', 'E msg:b 60']);
    expect(judgeOrder([pair('msg:a', 'msg:b')], runs).inversions).toBe(1);
  });

  it('leave a pair with a missing handler unjudged, and count repeated handler calls', () => {
    const runs = foldJournal([
      'S msg:a 10',
      'E msg:a 20',
      'S msg:a 30',
      'E msg:a 35',
      'S msg:c 1',
      'E msg:c 2',
    ]);
    expect(judgeOrder([pair('msg:a', 'msg:b'), pair('msg:c', 'msg:d')], runs)).toMatchObject({
      inversions: 0,
      judged: 0,
      missing: 2,
      repeated: 1,
    });
  });
});

describe('summarizeLatencies', () => {
  it('keeps every sample and gives the median with its quartiles and range', () => {
    expect(summarizeLatencies([40, 10, 30, 20, 50.123])).toEqual({
      samplesMs: [40, 10, 30, 20, 50.12],
      medianMs: 30,
      p25Ms: 20,
      p75Ms: 40,
      minMs: 10,
      maxMs: 50.1,
    });
  });
});

describe('passThroughConsumer (the floor)', () => {
  it('calls the handlers on every message and status of the records, in order, and fails none', async () => {
    const calls: string[] = [];
    const consume = passThroughConsumer(
      defineWebhookHandlers({
        onMessage: ({ key }) => void calls.push(key),
        onStatus: ({ key }) => void calls.push(key),
      }),
    );
    const message = { id: 'wamid.M1', from: '16505550001', name: 'A', text: sleepText(0), timestamp: '1' };
    const status = { id: 'wamid.S1', status: 'read', recipientId: '16505550001', timestamp: '1' };
    const record = (body: string) => ({ body }) as never;
    await expect(
      consume({ Records: [record(singleMessageBody(message)), record(statusesBody([status]))] }),
    ).resolves.toEqual({ batchItemFailures: [] });
    expect(calls).toEqual(['msg:wamid.M1', 'st:wamid.S1:read']);
  });
});

describe('journal handlers', () => {
  it('write a start and an end line per call that foldJournal reads back', async () => {
    const { mkdtempSync, readFileSync, rmSync } = await import('node:fs');
    const { join } = await import('node:path');
    const { tmpdir } = await import('node:os');
    const { JOURNAL_ENV, webhookHandlers } = await import('../../bench/conversations/journal-handlers.ts');
    const directory = mkdtempSync(join(tmpdir(), 'journal-handlers-'));
    const path = join(directory, 'journal');
    process.env[JOURNAL_ENV] = path;
    try {
      await webhookHandlers.onMessage({ key: 'msg:a', payload: { text: { body: sleepText(1) } } } as never);
      await webhookHandlers.onStatus({ key: 'st:b:read', payload: {} } as never);
      const lines = readFileSync(path, 'utf8').trim().split('\n');
      expect(lines.map((line) => line.split(' ').slice(0, 2).join(' '))).toEqual([
        'S msg:a',
        'E msg:a',
        'S st:b:read',
        'E st:b:read',
      ]);
      const runs = foldJournal(lines);
      const a = runs.get('msg:a');
      expect(a?.endMs).toBeGreaterThanOrEqual(a?.startMs ?? Number.POSITIVE_INFINITY);
      expect(runs.get('st:b:read')?.starts).toBe(1);
    } finally {
      delete process.env[JOURNAL_ENV];
      rmSync(directory, { recursive: true, force: true });
    }
  });
});
