import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { WebhookEvent } from '../../../functions/events/types.ts';
import { MalformedStatusError, observeStatus } from '../../../functions/ledger/status-event.ts';
import {
  advancesStatus,
  highestStatus,
  rankOfStatus,
  statusesRankedAbove,
} from '../../../functions/ledger/status-rank.ts';

/** In rank order. */
const KNOWN = ['sent', 'failed', 'delivered', 'read', 'played'] as const;
const REACHED = ['delivered', 'read', 'played'];

/** Folds statuses the way the ledger's conditional write does. */
function fold(statuses: readonly string[]): string | undefined {
  let current: string | undefined;
  for (const status of statuses) if (advancesStatus(current, status)) current = status;
  return current;
}

describe('status ranking', () => {
  it('orders sent < failed < delivered < read < played, keeping the ranks stored before failed moved', () => {
    const ranks = KNOWN.map(rankOfStatus);
    expect([...ranks].sort((a, b) => a - b)).toEqual(ranks);
    expect(new Set(ranks).size).toBe(KNOWN.length);
    expect(ranks).toEqual([1, 1.5, 2, 3, 4]);
  });

  it.each([
    [['failed', 'delivered'], 'delivered'],
    [['delivered', 'failed'], 'delivered'],
    [['sent', 'read'], 'read'],
    [['sent', 'failed'], 'failed'],
    [['failed', 'sent'], 'failed'],
    [['sent', 'failed', 'read'], 'read'],
    [['read', 'failed'], 'read'],
    [['failed', 'played'], 'played'],
    [['read', 'sent', 'delivered'], 'read'],
    [['delivered', 'sent'], 'delivered'],
    [['played', 'read'], 'played'],
  ])('folds %j to %s', (statuses, current) => {
    expect(fold(statuses)).toBe(current);
  });

  it('never lets a known status be replaced by a lower one, in any order', () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...KNOWN), { minLength: 1, maxLength: 12 }), (statuses) => {
        const current = fold(statuses);
        const highest = statuses.reduce((a, b) => (rankOfStatus(b) > rankOfStatus(a) ? b : a));
        expect(current).toBe(highest);
        expect(highestStatus(statuses)).toBe(highest);
        // Order does not matter: the ledger converges whatever order Meta delivers in.
        expect(fold([...statuses].reverse())).toBe(highest);
      }),
    );
  });

  it('makes failed current exactly while none of delivered, read, played was recorded', () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...KNOWN), { minLength: 1, maxLength: 12 }), (statuses) => {
        const failedSeen = statuses.includes('failed');
        const reached = statuses.some((status) => REACHED.includes(status));
        expect(fold(statuses) === 'failed').toBe(failedSeen && !reached);
      }),
    );
  });

  it('records an unknown status without letting it replace a known one', () => {
    expect(advancesStatus(undefined, 'some_future_status')).toBe(true);
    expect(advancesStatus('sent', 'some_future_status')).toBe(false);
    expect(advancesStatus('some_future_status', 'sent')).toBe(true);
    expect(highestStatus(['some_future_status'])).toBeUndefined();
    expect(highestStatus(['some_future_status', 'failed'])).toBe('failed');
  });

  it.each([
    ['sent', ['played', 'read', 'delivered', 'failed']],
    ['failed', ['played', 'read', 'delivered']],
    ['delivered', ['played', 'read']],
    ['played', []],
    ['some_future_status', ['played', 'read', 'delivered', 'failed', 'sent']],
  ])('lists the statuses ranked above %s, highest first', (status, above) => {
    expect(statusesRankedAbove(status)).toEqual(above);
  });
});

function statusEvent(payload: WebhookEvent['payload']): WebhookEvent {
  return {
    key: 'st:x',
    field: 'messages',
    kind: 'status',
    metricField: 'status',
    entryId: '1',
    wabaId: '1',
    phoneNumberId: undefined,
    payload,
    value: {},
    entry: { id: '1', changes: [] },
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

  it.each([
    ['only the BSUID', { recipient_participant_user_id: 'US.1349120865530274' }, 'US.1349120865530274'],
    [
      'both ids: the phone number, as in the event key',
      { recipient_participant_id: '42', recipient_participant_user_id: 'US.1349120865530274' },
      '42',
    ],
    [
      'an empty phone number: the BSUID',
      { recipient_participant_id: '', recipient_participant_user_id: 'US.1349120865530274' },
      'US.1349120865530274',
    ],
    [
      'a null phone number: the BSUID',
      { recipient_participant_id: null, recipient_participant_user_id: 'US.1349120865530274' },
      'US.1349120865530274',
    ],
    [
      'a one-to-one BSUID only (recipient_user_id): none',
      { recipient_user_id: 'US.1349120865530274' },
      undefined,
    ],
  ])('names the group participant by phone number, else BSUID: %s', (_case, ids, participant) => {
    const observation = observeStatus(statusEvent({ id: 'wamid.A', status: 'read', ...ids }), 5);
    expect(observation.recipientParticipantId).toBe(participant);
  });

  it('refuses a status without id or status', () => {
    expect(() => observeStatus(statusEvent({ status: 'sent' }), 1)).toThrow(MalformedStatusError);
    expect(() => observeStatus(statusEvent({ id: 'wamid.A' }), 1)).toThrow(MalformedStatusError);
  });
});
