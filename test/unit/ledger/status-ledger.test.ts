/**
 * The status ledger's rules (docs/design.md §3), on the in-memory DynamoDB model that
 * lab/test/protocol-checker/dynamodb/differential.test.ts holds to DynamoDB Local request by request: the real
 * StatusLedger sends its real conditional writes, so each rule is checked as DynamoDB evaluates it. The same
 * conditional write against DynamoDB Local: test/integration/ledger/status-ledger.test.ts.
 */
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { beforeEach, describe, expect, it } from 'vitest';
import type { WebhookEvent } from '../../../functions/events/types.ts';
import { observeStatus, type StatusObservation } from '../../../functions/ledger/status-event.ts';
import { StatusLedger, type StatusLedgerChange } from '../../../functions/ledger/status-ledger.ts';
import { LEGACY_FAILED_RANK } from '../../../functions/ledger/status-rank.ts';
import { DynamoDbModel } from '../../../lab/protocol-checker/dynamodb/dynamodb-model.ts';
import {
  type ModelRequest,
  modelDocumentClient,
} from '../../../lab/protocol-checker/dynamodb/model-document-client.ts';

const TABLE = 'claims';
const WAMID = 'wamid.HBgLMTY1MDU1NTEyMzQVAgARGBI';
const PHONE = '4915112345678';
const OTHER_PHONE = '5511912345678';
const BSUID = 'US.13491208655302741918';
const OTHER_BSUID = 'BR.80512093746512093847';

let requests: ModelRequest[];
let documentClient: ReturnType<typeof modelDocumentClient>;
let ledger: StatusLedger;

beforeEach(() => {
  requests = [];
  documentClient = modelDocumentClient(new DynamoDbModel(), async (request, apply) => {
    requests.push(request);
    return apply();
  });
  ledger = new StatusLedger({
    documentClient,
    tableName: TABLE,
    retentionDays: 8,
    clock: () => 1_780_000_000_000,
  });
});

const observe = (status: string, timestamp: number, participant?: string): StatusObservation => ({
  wamid: WAMID,
  status,
  timestamp,
  recipientParticipantId: participant,
});

/** Records the statuses in order; returns the change each reported and the ledger's final view. */
async function recordAll(statuses: readonly (readonly [string, number])[], participant?: string) {
  const changes: StatusLedgerChange[] = [];
  for (const [status, at] of statuses)
    changes.push((await ledger.record(observe(status, at, participant))).change);
  return { changes, view: await ledger.view(WAMID, participant) };
}

describe('StatusLedger: failed, delivered and the other devices (docs/design.md §3)', () => {
  it.each([
    {
      rule: 'failed first, then delivered: delivered advances (another device got it)',
      statuses: [
        ['failed', 10],
        ['delivered', 20],
      ],
      changes: ['advanced', 'advanced'],
      current: 'delivered',
    },
    {
      rule: 'delivered, then failed: failed is merged, delivered stays current',
      statuses: [
        ['delivered', 10],
        ['failed', 20],
      ],
      changes: ['advanced', 'merged'],
      current: 'delivered',
    },
    {
      rule: 'read with delivered skipped (read at once): read advances over sent',
      statuses: [
        ['sent', 10],
        ['read', 20],
      ],
      changes: ['advanced', 'advanced'],
      current: 'read',
    },
    {
      rule: 'read with delivered skipped, then failed: failed is merged',
      statuses: [
        ['sent', 10],
        ['read', 20],
        ['failed', 30],
      ],
      changes: ['advanced', 'advanced', 'merged'],
      current: 'read',
    },
    {
      rule: 'sent, then failed: failed advances',
      statuses: [
        ['sent', 10],
        ['failed', 20],
      ],
      changes: ['advanced', 'advanced'],
      current: 'failed',
    },
    {
      rule: 'failed, then a late sent: sent is merged, failed stays current',
      statuses: [
        ['failed', 20],
        ['sent', 10],
      ],
      changes: ['advanced', 'merged'],
      current: 'failed',
    },
    {
      rule: 'sent, failed, then read: read advances past failed',
      statuses: [
        ['sent', 10],
        ['failed', 20],
        ['read', 30],
      ],
      changes: ['advanced', 'advanced', 'advanced'],
      current: 'read',
    },
    {
      rule: 'played after failed advances',
      statuses: [
        ['failed', 10],
        ['played', 20],
      ],
      changes: ['advanced', 'advanced'],
      current: 'played',
    },
  ] as const)('$rule', async ({ statuses, changes, current }) => {
    const result = await recordAll(statuses);
    expect(result.changes).toEqual(changes);
    expect(result.view?.current).toBe(current);
    // Every status keeps its time, merged or not.
    expect(result.view?.times).toEqual(Object.fromEntries(statuses));
  });

  it('stores failed at rank 1.5 and leaves the stored ranks of the other statuses as they were', async () => {
    const ranks: Record<string, number> = {};
    for (const status of ['sent', 'failed', 'delivered', 'read', 'played']) {
      ranks[status] = (
        await ledger.record({ ...observe(status, 1), wamid: `wamid.${status}` })
      ).view.currentRank;
    }
    expect(ranks).toEqual({ sent: 1, failed: 1.5, delivered: 2, read: 3, played: 4 });
  });
});

describe('StatusLedger: the change a handler sees is the same on every attempt', () => {
  it('failed then delivered, each retried (after a failed handler, a lost answer, a takeover)', async () => {
    const failed = await ledger.record(observe('failed', 10));
    const delivered = await ledger.record(observe('delivered', 20));
    const failedAgain = await ledger.record(observe('failed', 10));
    const deliveredAgain = await ledger.record(observe('delivered', 20));
    expect([failed.change, delivered.change, failedAgain.change, deliveredAgain.change]).toEqual([
      'advanced',
      'advanced',
      'advanced',
      'advanced',
    ]);
    // The retry of failed reports what its first attempt did, but the view is today's: delivered.
    expect(failedAgain.view).toMatchObject({ current: 'delivered', currentRank: 2 });
    expect(failedAgain.view.times).toEqual({ failed: 10, delivered: 20 });
  });

  it('delivered then failed: every attempt of failed reports merged', async () => {
    await ledger.record(observe('delivered', 20));
    const attempts: StatusLedgerChange[] = [];
    for (let attempt = 0; attempt < 3; attempt++)
      attempts.push((await ledger.record(observe('failed', 30))).change);
    expect(attempts).toEqual(['merged', 'merged', 'merged']);
  });

  it('a failed whose first attempt advanced still reports advanced once read came in between', async () => {
    await ledger.record(observe('sent', 10));
    expect((await ledger.record(observe('failed', 20))).change).toBe('advanced');
    expect((await ledger.record(observe('read', 30))).change).toBe('advanced');
    const retried = await ledger.record(observe('failed', 20));
    expect(retried.change).toBe('advanced');
    expect(retried.view.current).toBe('read');
  });
});

describe('StatusLedger: group sends, one ledger per participant', () => {
  it('keeps separate ledgers for participants that come only with recipient_participant_user_id', async () => {
    const first = observeStatus(groupStatus({ status: 'read', recipient_participant_user_id: BSUID }), 0);
    const second = observeStatus(
      groupStatus({ status: 'failed', recipient_participant_user_id: OTHER_BSUID }),
      0,
    );
    await ledger.record(first);
    await ledger.record(second);
    expect(await ledger.view(WAMID, BSUID)).toMatchObject({ current: 'read', recipientParticipantId: BSUID });
    expect(await ledger.view(WAMID, OTHER_BSUID)).toMatchObject({
      current: 'failed',
      recipientParticipantId: OTHER_BSUID,
    });
    expect(await ledger.view(WAMID)).toBeUndefined();
  });

  it('keeps phone-numbered participants apart from each other and from BSUID-only ones', async () => {
    await ledger.record(
      observeStatus(groupStatus({ status: 'delivered', recipient_participant_id: PHONE }), 0),
    );
    await ledger.record(
      observeStatus(groupStatus({ status: 'sent', recipient_participant_id: OTHER_PHONE }), 0),
    );
    await ledger.record(
      observeStatus(groupStatus({ status: 'read', recipient_participant_user_id: BSUID }), 0),
    );
    expect((await ledger.view(WAMID, PHONE))?.current).toBe('delivered');
    expect((await ledger.view(WAMID, OTHER_PHONE))?.current).toBe('sent');
    expect((await ledger.view(WAMID, BSUID))?.current).toBe('read');
  });

  it('files a participant by phone when a status has both ids, by BSUID when it has only that: two ledgers', async () => {
    // Keys stay phone-first (docs/design.md §1), and a BSUID-only status names nothing that leads to the
    // phone's ledger: docs/decisions.md, "Status ledger: failed below delivered, participants phone-first".
    const withPhone = observeStatus(
      groupStatus({
        status: 'delivered',
        recipient_participant_id: PHONE,
        recipient_participant_user_id: BSUID,
      }),
      0,
    );
    const withBsuidOnly = observeStatus(
      groupStatus({ status: 'read', recipient_participant_user_id: BSUID }),
      0,
    );
    expect(withPhone.recipientParticipantId).toBe(PHONE);
    expect(withBsuidOnly.recipientParticipantId).toBe(BSUID);
    expect((await ledger.record(withPhone)).change).toBe('advanced');
    expect((await ledger.record(withBsuidOnly)).change).toBe('advanced');
    expect(await ledger.view(WAMID, PHONE)).toMatchObject({ current: 'delivered', times: { delivered: 20 } });
    expect(await ledger.view(WAMID, BSUID)).toMatchObject({ current: 'read', times: { read: 20 } });
  });
});

describe('StatusLedger: items an older release wrote with failed at rank 5', () => {
  /** A ledger item as the release that ranked `failed` above everything left it. */
  async function legacyItem(times: Record<string, number>, participant?: string): Promise<void> {
    const statuses = Object.keys(times);
    await documentClient.send(
      new PutCommand({
        TableName: TABLE,
        Item: {
          pk: participant === undefined ? `ledger:${WAMID}` : `ledger:${WAMID}:${participant}`,
          wamid: WAMID,
          ...(participant === undefined ? {} : { recipientParticipantId: participant }),
          currentStatus: 'failed',
          currentRank: LEGACY_FAILED_RANK,
          statuses: new Set(statuses),
          ...Object.fromEntries(statuses.map((status) => [`at_${status}`, times[status]])),
          // Recorded in the order of their times, each advanced under the old ranks.
          ...Object.fromEntries(statuses.map((status) => [`change_${status}`, 'advanced'])),
          expiresAt: 1_780_600_000,
        },
      }),
    );
  }

  it('reads as failed while only sent and failed were recorded, until delivered advances over it', async () => {
    await legacyItem({ sent: 10, failed: 20 });
    expect(await ledger.view(WAMID)).toMatchObject({ current: 'failed', currentRank: 1.5 });
    // A retried sent reports what its first attempt saw, and moves nothing.
    const sent = await ledger.record(observe('sent', 10));
    expect(sent.change).toBe('advanced');
    expect(sent.view.current).toBe('failed');
    const delivered = await ledger.record(observe('delivered', 30));
    expect(delivered.change).toBe('advanced');
    expect(delivered.view).toMatchObject({ current: 'delivered', currentRank: 2 });
    expect((await ledger.record(observe('failed', 20))).change).toBe('advanced');
    expect((await ledger.view(WAMID))?.current).toBe('delivered');
  });

  it('a late sent over a legacy failed is merged and leaves it current', async () => {
    await legacyItem({ failed: 20 });
    const sent = await ledger.record(observe('sent', 10));
    expect(sent.change).toBe('merged');
    expect(sent.view).toMatchObject({ current: 'failed', currentRank: 1.5, times: { failed: 20, sent: 10 } });
  });

  it('reads as the highest status recorded when failed had overtaken it, and a late lower one does not win', async () => {
    // Old ranks: read, then failed (advanced to rank 5). By the new rule read is current.
    await legacyItem({ delivered: 10, read: 20, failed: 30 }, PHONE);
    expect(await ledger.view(WAMID, PHONE)).toMatchObject({ current: 'read', currentRank: 3 });
    const late = await ledger.record(observe('delivered', 10, PHONE));
    expect(late.change).toBe('advanced'); // what its first attempt, under the old release, saw
    expect(late.view).toMatchObject({ current: 'read', currentRank: 3 });
    const played = await ledger.record(observe('played', 40, PHONE));
    expect(played.view).toMatchObject({ current: 'played', currentRank: 4 });
  });

  it('lets a status that ranks above failed through only when none above it was recorded', async () => {
    await legacyItem({ read: 20, failed: 30 });
    requests.length = 0;
    const late = await ledger.record(observe('delivered', 10));
    expect(late.change).toBe('merged');
    const advance = firstRequestInput();
    expect(advance.ConditionExpression).toBe(
      'attribute_not_exists(currentRank) OR currentRank < :rank OR (currentRank = :legacyFailedRank ' +
        'AND NOT contains(statuses, :above0) AND NOT contains(statuses, :above1))',
    );
    expect(advance.ExpressionAttributeValues).toMatchObject({
      ':legacyFailedRank': { N: '5' },
      ':above0': { S: 'played' },
      ':above1': { S: 'read' },
    });
  });
});

describe('StatusLedger: the advance condition', () => {
  it.each([
    ['sent', 'attribute_not_exists(currentRank) OR currentRank < :rank'],
    ['failed', 'attribute_not_exists(currentRank) OR currentRank < :rank'],
    ['some_future_status', 'attribute_not_exists(currentRank) OR currentRank < :rank'],
    [
      'read',
      'attribute_not_exists(currentRank) OR currentRank < :rank OR (currentRank = :legacyFailedRank ' +
        'AND NOT contains(statuses, :above0))',
    ],
    [
      'played',
      'attribute_not_exists(currentRank) OR currentRank < :rank OR (currentRank = :legacyFailedRank)',
    ],
  ])('%s: %s', async (status, condition) => {
    await ledger.record(observe(status, 1));
    expect(firstRequestInput().ConditionExpression).toBe(condition);
  });
});

/** The advance write's input, as DynamoDB receives it (marshalled). */
function firstRequestInput(): { ConditionExpression?: string; ExpressionAttributeValues?: object } {
  const first = requests[0];
  if (first === undefined) throw new Error('The ledger sent no request.');
  return first.input;
}

function groupStatus(fields: Record<string, string>): WebhookEvent {
  return {
    key: 'st:x',
    field: 'messages',
    kind: 'status',
    metricField: 'status',
    entryId: '1',
    wabaId: '1',
    phoneNumberId: undefined,
    payload: { id: WAMID, timestamp: '20', recipient_type: 'group', recipient_id: 'group-id', ...fields },
    value: {},
    entry: { id: '1', changes: [] },
  };
}
