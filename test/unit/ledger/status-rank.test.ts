import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { WebhookEvent } from '../../../functions/events/types.ts';
import { MalformedStatusError, observeStatus } from '../../../functions/ledger/status-event.ts';
import { advancesStatus, rankOfStatus } from '../../../functions/ledger/status-rank.ts';

const KNOWN = ['sent', 'delivered', 'read', 'played', 'failed'] as const;

/** Folds statuses the way the ledger's conditional write does. */
function fold(statuses: readonly string[]): string | undefined {
  let current: string | undefined;
  for (const status of statuses) if (advancesStatus(current, status)) current = status;
  return current;
}

describe('status ranking', () => {
  it('orders sent < delivered < read < played, with failed above all', () => {
    const ranks = KNOWN.map(rankOfStatus);
    expect([...ranks].sort((a, b) => a - b)).toEqual(ranks);
    expect(new Set(ranks).size).toBe(KNOWN.length);
  });

  it.each([
    [['read', 'sent', 'delivered'], 'read'],
    [['delivered', 'sent'], 'delivered'],
    [['sent', 'failed', 'read'], 'failed'],
    [['read', 'failed'], 'failed'],
    [['played', 'read'], 'played'],
  ])('folds %j to %s', (statuses, current) => {
    expect(fold(statuses)).toBe(current);
  });

  it('never lets a known status be replaced by a lower one, and never leaves failed (any order)', () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...KNOWN), { minLength: 1, maxLength: 12 }), (statuses) => {
        const current = fold(statuses);
        const highest = statuses.reduce((a, b) => (rankOfStatus(b) > rankOfStatus(a) ? b : a));
        expect(current).toBe(highest);
        // Order does not matter: the ledger converges whatever order Meta delivers in.
        expect(fold([...statuses].reverse())).toBe(highest);
      }),
    );
  });

  it('records an unknown status without letting it replace a known one', () => {
    expect(advancesStatus(undefined, 'some_future_status')).toBe(true);
    expect(advancesStatus('sent', 'some_future_status')).toBe(false);
    expect(advancesStatus('some_future_status', 'sent')).toBe(true);
  });
});

function statusEvent(payload: WebhookEvent['payload']): WebhookEvent {
  return {
    key: 'st:x',
    field: 'messages',
    kind: 'status',
    metricField: 'status',
    entryId: '1',
    payload,
    value: {},
  };
}

describe('observeStatus', () => {
  it('reads wamid, status, timestamp and the group participant', () => {
    expect(
      observeStatus(
        statusEvent({
          id: 'wamid.A',
          status: 'read',
          timestamp: '1700000000',
          recipient_participant_id: '42',
        }),
        5,
      ),
    ).toEqual({ wamid: 'wamid.A', status: 'read', timestamp: 1700000000, recipientParticipantId: '42' });
  });

  it('falls back to now for a missing timestamp and has no participant for one-to-one sends', () => {
    expect(observeStatus(statusEvent({ id: 'wamid.A', status: 'sent' }), 123)).toEqual({
      wamid: 'wamid.A',
      status: 'sent',
      timestamp: 123,
      recipientParticipantId: undefined,
    });
  });

  it('refuses a status without id or status', () => {
    expect(() => observeStatus(statusEvent({ status: 'sent' }), 1)).toThrow(MalformedStatusError);
    expect(() => observeStatus(statusEvent({ id: 'wamid.A' }), 1)).toThrow(MalformedStatusError);
  });
});
