/**
 * One replay run over in-memory ports: which keys are counted done, in flight or not done, what --rerun
 * forgets (never what this replay completed itself), the rate, --max and the cursor, a failed send.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type ArchiveRecord, archivedBodyBytes } from '../../../../../contract/archive.ts';
import { acceptedRecord } from '../../../../../test/support/archive-objects.ts';
import {
  envelope,
  inboundMessagesWithIds,
  messagesChange,
  statusesChange,
} from '../../../../meta-traffic/webhook-bodies.ts';
import type { ArchivePosition } from '../../../../ops/adapters/archive-reader.ts';
import type { ClaimView } from '../../../../ops/inspect/claim-view.ts';
import { ReplayCursorStore } from '../../../../ops/replay/replay-cursor.ts';
import {
  type ReplayCounts,
  ReplayFailedError,
  type ReplayPorts,
  runReplay,
  type SendOutcome,
} from '../../../../ops/replay/run-replay.ts';

const T0 = Date.parse('2026-12-01T10:00:00Z');
const STARTED = Date.parse('2026-12-02T00:00:00Z');

function claim(status: ClaimView['status'], doneAtMs?: number): ClaimView {
  return {
    pk: 'pk',
    status,
    state: status === 'done' ? 'done' : 'processing',
    field: 'messages',
    attempt: 1,
    claimedAt: undefined,
    leaseUntil: undefined,
    doneAt: doneAtMs === undefined ? undefined : new Date(doneAtMs).toISOString(),
    expiresAt: undefined,
    messageId: 'm',
    owner: 'o',
  };
}

/** Delivery i holds message msg-i and a status of it. */
function records(count: number): ArchiveRecord[] {
  return Array.from({ length: count }, (_, i) =>
    acceptedRecord(
      `d${i}`,
      T0 + i * 1000,
      envelope([
        messagesChange(inboundMessagesWithIds([`msg-${i}`])),
        statusesChange([{ id: `out-${i}`, status: 'read', timestamp: '1780000000', recipientId: '1555' }]),
      ]),
    ),
  );
}

function harness(all: readonly ArchiveRecord[], stored: Map<string, ClaimView> = new Map()) {
  const sent: string[] = [];
  const forgotten: string[] = [];
  const sleeps: number[] = [];
  const cursors: ArchivePosition[] = [];
  let now = STARTED + 60_000;
  let sendOutcome: (record: ArchiveRecord) => SendOutcome = () => ({ outcome: 'stored' });
  const ports: ReplayPorts = {
    records: async function* (after) {
      for (const record of all) {
        if (after === undefined || record.arrivedAt > after.arrivedAt) yield record;
      }
    },
    claims: async (keys) =>
      new Map(keys.flatMap((key) => (stored.has(key) ? [[key, stored.get(key) as ClaimView]] : []))),
    forget: async (key) => {
      forgotten.push(key);
      stored.delete(key);
      return true;
    },
    send: async (record) => {
      sent.push(record.deliveryId);
      return sendOutcome(record);
    },
    saveCursor: (position) => cursors.push(position),
    clock: () => now,
    sleep: async (ms) => {
      sleeps.push(ms);
      now += ms;
    },
  };
  return {
    ports,
    sent,
    forgotten,
    sleeps,
    cursors,
    failWith: (outcome: (record: ArchiveRecord) => SendOutcome) => {
      sendOutcome = outcome;
    },
  };
}

const OPTIONS = {
  fields: ['messages'],
  rerun: false,
  dryRun: false,
  ratePerSecond: 1000,
  maxDeliveries: undefined,
  resumeFrom: undefined,
  startedAtMs: STARTED,
};

describe('runReplay', () => {
  it('sends every delivery in order and counts each key by its claim', async () => {
    const stored = new Map([
      ['msg:msg-0', claim('done', T0)],
      ['st:out-1:read', claim('in-flight')],
      ['msg:msg-2', claim('lease-lapsed')],
    ]);
    const h = harness(records(3), stored);

    const result = await runReplay(h.ports, OPTIONS, archivedBodyBytes);

    expect(h.sent).toEqual(['d0', 'd1', 'd2']);
    expect(result.complete).toBe(true);
    expect(result.counts).toEqual({
      deliveries: { read: 3, sent: 3, quarantined: 0, notForSubscriber: 0 },
      keys: { total: 6, done: 1, inFlight: 1, notDone: 4, forgotten: 0 },
      byField: { messages: 6 },
    } satisfies ReplayCounts);
    expect(h.cursors.map((position) => position.deliveryId)).toEqual(['d0', 'd1', 'd2']);
  });

  it('skips quarantined records and deliveries without an event of the fields, sending nothing for them', async () => {
    const [first, second] = records(2) as [ArchiveRecord, ArchiveRecord];
    const quarantined: ArchiveRecord = { ...second, verdict: 'quarantined', body: 'not json' };
    const h = harness([first, quarantined]);

    const result = await runReplay(h.ports, { ...OPTIONS, fields: ['calls'] }, archivedBodyBytes);

    expect(h.sent).toEqual([]);
    expect(result.counts.deliveries).toEqual({ read: 2, sent: 0, quarantined: 1, notForSubscriber: 1 });
    expect(result.counts.keys.total).toBe(0);
  });

  it('--rerun forgets the done claims, but not those this replay completed itself', async () => {
    const stored = new Map([
      ['msg:msg-0', claim('done', T0)],
      ['msg:msg-1', claim('done', STARTED + 1)],
      ['st:out-1:read', claim('in-flight')],
    ]);
    const h = harness(records(2), stored);

    const result = await runReplay(h.ports, { ...OPTIONS, rerun: true }, archivedBodyBytes);

    expect(h.forgotten).toEqual(['msg:msg-0']);
    expect(result.counts.keys).toEqual({ total: 4, done: 1, inFlight: 1, notDone: 1, forgotten: 1 });
  });

  it('a dry run sends, forgets and saves nothing, and says what --rerun would forget', async () => {
    const h = harness(records(2), new Map([['msg:msg-0', claim('done', T0)]]));

    const result = await runReplay(h.ports, { ...OPTIONS, rerun: true, dryRun: true }, archivedBodyBytes);

    expect([h.sent, h.forgotten, h.cursors]).toEqual([[], [], []]);
    expect(result.counts.keys.forgotten).toBe(1);
    expect(result.counts.deliveries.sent).toBe(0);
  });

  it('keeps to the rate: 10 deliveries at 5/s take 1.8 s of waiting', async () => {
    const h = harness(records(10));

    await runReplay(h.ports, { ...OPTIONS, ratePerSecond: 5 }, archivedBodyBytes);

    expect(h.sleeps.reduce((sum, ms) => sum + ms, 0)).toBe(1800);
    expect(h.sleeps.every((ms) => ms === 200)).toBe(true);
  });

  it('stops after --max deliveries, and a second run from the cursor sends the rest once', async () => {
    const all = records(5);
    const h = harness(all);

    const first = await runReplay(h.ports, { ...OPTIONS, maxDeliveries: 3 }, archivedBodyBytes);
    expect(first.complete).toBe(false);
    expect(first.position?.deliveryId).toBe('d2');

    const second = await runReplay(
      h.ports,
      { ...OPTIONS, resumeFrom: { position: first.position as ArchivePosition, counts: first.counts } },
      archivedBodyBytes,
    );
    expect(second.complete).toBe(true);
    expect(h.sent).toEqual(['d0', 'd1', 'd2', 'd3', 'd4']);
    expect(second.counts.deliveries.sent).toBe(5);
  });

  it('a --max that ends with the range is complete', async () => {
    const h = harness(records(2));
    expect((await runReplay(h.ports, { ...OPTIONS, maxDeliveries: 2 }, archivedBodyBytes)).complete).toBe(
      true,
    );
  });

  it('stops at a delivery the queues did not store, the cursor on the one before', async () => {
    const h = harness(records(3));
    h.failWith((record) =>
      record.deliveryId === 'd1'
        ? { outcome: 'failed', problem: 'the receiver answered 503' }
        : { outcome: 'stored' },
    );

    const failure = await runReplay(h.ports, OPTIONS, archivedBodyBytes).catch((error: unknown) => error);

    expect(failure).toBeInstanceOf(ReplayFailedError);
    expect((failure as ReplayFailedError).message).toMatch(
      /^delivery d1 .* not stored: the receiver answered 503$/,
    );
    expect((failure as ReplayFailedError).position?.deliveryId).toBe('d0');
    expect(h.cursors.map((position) => position.deliveryId)).toEqual(['d0']);
  });
});

describe('ReplayCursorStore', () => {
  const identity = {
    target: 'local stack at http://localhost:3000',
    subscriber: 'bot',
    since: '-1d',
    until: 'now',
    fields: undefined,
    rerun: false,
  };

  it('finds the cursor of the same command, not of another, and forgets it once removed', () => {
    const directory = mkdtempSync(join(tmpdir(), 'replay-cursor-'));
    const store = new ReplayCursorStore<{ sent: number }>(directory, identity);
    expect(store.load()).toBeUndefined();
    const cursor = {
      sinceMs: 1,
      untilMs: 2,
      startedAtMs: 3,
      position: { arrivedAt: '2026-12-01T10:00:00.000Z', deliveryId: 'd1' },
      counts: { sent: 4 },
    };
    store.save(cursor);

    expect(store.load()).toEqual({ v: 1, identity, ...cursor });
    expect(new ReplayCursorStore(directory, { ...identity, subscriber: 'crm' }).load()).toBeUndefined();
    expect(new ReplayCursorStore(directory, { ...identity, rerun: true }).path).not.toBe(store.path);
    store.remove();
    expect(store.load()).toBeUndefined();
  });
});
