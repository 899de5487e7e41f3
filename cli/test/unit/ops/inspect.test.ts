import type { MessageAttributeValue } from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import type { ClaimSnapshot } from '../../../../functions/claims/claim-record.ts';
import type { QueuedMessage } from '../../../ops/adapters/queue-messages.ts';
import { claimStatus, viewClaim } from '../../../ops/inspect/claim-view.ts';
import { eventKeyShape } from '../../../ops/inspect/event-key-shape.ts';
import { groupQuarantined, summarise } from '../../../ops/quarantine/quarantined-bodies.ts';

const NOW = Date.UTC(2026, 0, 10);

function claim(overrides: Partial<ClaimSnapshot>): ClaimSnapshot {
  return {
    state: 'done',
    owner: 'owner-1',
    leaseUntil: NOW - 60_000,
    expiresAt: NOW / 1000 + 86_400,
    field: 'messages',
    claimedAt: NOW - 120_000,
    doneAt: NOW - 100_000,
    attempt: 1,
    messageId: 'message-1',
    ...overrides,
  };
}

describe('claim view', () => {
  it.each([
    [{}, 'done'],
    [{ state: 'processing', leaseUntil: NOW + 1 }, 'in-flight'],
    [{ state: 'processing', leaseUntil: NOW - 1 }, 'lease-lapsed'],
    [{ expiresAt: NOW / 1000 - 1 }, 'expired'],
    [{ state: 'processing', expiresAt: NOW / 1000 - 1, leaseUntil: NOW + 1 }, 'expired'],
    [{ state: 'archived' }, 'unknown-state'],
  ] as const)('%j is %s, as the claim condition would judge it', (overrides, status) => {
    expect(claimStatus(claim(overrides), NOW)).toBe(status);
  });

  it('gives every time as an ISO date (expiresAt is stored in epoch seconds)', () => {
    expect(viewClaim('bot#msg:x', claim({}), NOW)).toEqual({
      pk: 'bot#msg:x',
      status: 'done',
      state: 'done',
      field: 'messages',
      attempt: 1,
      claimedAt: '2026-01-09T23:58:00.000Z',
      leaseUntil: '2026-01-09T23:59:00.000Z',
      doneAt: '2026-01-09T23:58:20.000Z',
      expiresAt: '2026-01-11T00:00:00.000Z',
      messageId: 'message-1',
      owner: 'owner-1',
    });
  });
});

describe('event key shape', () => {
  it.each([
    ['msg:wamid.A', { field: 'messages', kind: 'message' }],
    ['err:102290129340398:1750000000:106540352242922:131051', { field: 'messages', kind: 'error' }],
    ['account_update:102290129340398:1750000000:VERIFIED_ACCOUNT:-', { field: 'account_update' }],
    ['calls:1:2:wacid.X:RINGING', { field: 'calls', kind: 'management' }],
    ['st:wamid.A:read', { kind: 'status', ledger: { wamid: 'wamid.A', recipientParticipantId: undefined } }],
    [
      'st:wamid.A:delivered:4915112345678',
      { ledger: { wamid: 'wamid.A', recipientParticipantId: '4915112345678' } },
    ],
  ])('%s', (key, shape) => {
    expect(eventKeyShape(key)).toMatchObject({ key, ...shape });
  });
});

const text = (value: string): MessageAttributeValue => ({ DataType: 'String', StringValue: value });
const number = (value: number): MessageAttributeValue => ({ DataType: 'Number', StringValue: String(value) });

function message(id: string, body: string, attributes: Record<string, MessageAttributeValue>): QueuedMessage {
  return {
    messageId: id,
    receiptHandle: `r-${id}`,
    body,
    attributes: { reason: text('invalid-json'), contentEncoding: text('base64'), ...attributes },
    sentAt: 0,
    receiveCount: 1,
    sourceQueueArn: undefined,
    messageGroupId: undefined,
  };
}

describe('quarantined bodies', () => {
  const raw = Buffer.from([0xff, 0x00, 0x7b, 0x22]);
  const base64 = raw.toString('base64');
  const chunk = (id: string, n: number, of: number, part: string) =>
    message(id, part, { quarantineId: text('q-1'), chunk: number(n), chunks: number(of) });

  it('reassembles chunks in chunk order, whatever order they were read in, a chunk read twice once', () => {
    const [body] = groupQuarantined([
      chunk('m3', 3, 3, base64.slice(6)),
      chunk('m1', 1, 3, base64.slice(0, 3)),
      chunk('m2', 2, 3, base64.slice(3, 6)),
      chunk('m1-again', 1, 3, base64.slice(0, 3)),
    ]);

    expect(body?.id).toBe('q-1');
    expect(body?.bytes).toEqual(raw);
    expect(body?.messages.map((m) => m.messageId)).toEqual(['m1', 'm1-again', 'm2', 'm3']);
    expect(summarise(body as NonNullable<typeof body>)).toMatchObject({
      chunks: 3,
      chunksPresent: 3,
      bytes: 4,
      reads: 'invalid-json (body is not valid UTF-8)',
    });
  });

  it('keeps a body with a missing chunk undecoded', () => {
    const [body] = groupQuarantined([chunk('m1', 1, 3, 'AAAA'), chunk('m3', 3, 3, 'AAAA')]);

    expect(body?.bytes).toBeUndefined();
    expect(summarise(body as NonNullable<typeof body>)).toMatchObject({
      chunksPresent: 2,
      bytes: undefined,
      reads: 'incomplete: chunks missing',
    });
  });

  it('says which items of a body had no usable id, and so were kept here unrun', () => {
    const body = JSON.stringify({
      object: 'whatsapp_business_account',
      entry: [
        {
          id: '1',
          changes: [
            {
              field: 'messages',
              value: {
                metadata: { phone_number_id: '2' },
                messages: [
                  { from_user_id: 'US.1', type: 'text' },
                  { id: 'wamid.kept', type: 'text' },
                ],
                statuses: [{ status: 'read' }],
              },
            },
          ],
        },
      ],
    });
    const [summary] = groupQuarantined([
      message('unkeyed', Buffer.from(body).toString('base64'), { reason: text('event-without-id') }),
    ]).map(summarise);

    expect(summary).toMatchObject({
      reason: 'event-without-id',
      reads: '1 event, 1 message without a usable id, 1 status without a usable id',
    });
  });

  it('knows a one-message body by its message id', () => {
    const bodies = groupQuarantined([
      message('single', Buffer.from('{"object":"page"}').toString('base64'), { deliveryId: text('d-1') }),
    ]);

    expect(bodies.map(summarise)).toEqual([
      {
        id: 'single',
        reason: 'invalid-json',
        receivedAt: undefined,
        deliveryId: 'd-1',
        chunks: 1,
        chunksPresent: 1,
        bytes: 17,
        reads: 'not-whatsapp-envelope ("object" is not "whatsapp_business_account")',
      },
    ]);
  });
});
