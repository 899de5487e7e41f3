/**
 * The receiver's routing by number and account (docs/design.md §10): which part of a delivery each
 * subscriber limited to `numbers` or `wabas` stores, and the fairness group each part carries.
 */
import { describe, expect, it } from 'vitest';
import {
  inboundMessages,
  messagesChange,
  type NumberMetadata,
  statusesChange,
  WABA_ID,
  webhookPayload,
} from '../../../cli/meta-traffic/webhook-bodies.ts';
import type { SubscriberQueue } from '../../../contract/subscribers.ts';
import { RecordingQueues } from '../../support/recording-queues.ts';
import { deliverSigned } from '../../support/signed-delivery.ts';
import { keysOfEnvelope } from '../../support/webhooks/event-keys.ts';

const SAO_PAULO: NumberMetadata = { display_phone_number: '551155550100', phone_number_id: '201' };
const MONTERREY: NumberMetadata = { display_phone_number: '528155550100', phone_number_id: '202' };

const lanes = (name: string) => ({
  name,
  queueUrl: `memory://${name}`,
  messageQueueUrl: `memory://${name}-messages.fifo`,
  messageLaneOrdered: true,
});
const BRAZIL: SubscriberQueue = { ...lanes('brazil'), numbers: ['201'] };
const MEXICO: SubscriberQueue = { ...lanes('mexico'), numbers: ['202'] };
const TENANT: SubscriberQueue = { ...lanes('tenant'), wabas: [WABA_ID] };
const ELSEWHERE: SubscriberQueue = { ...lanes('elsewhere'), numbers: ['999'], wabas: ['998'] };
/** Without a message lane: the body whole, when it holds something of its number. */
const BRAZIL_WHOLE: SubscriberQueue = {
  name: 'brazil-whole',
  queueUrl: 'memory://brazil-whole',
  numbers: ['201'],
};

const [ana, bruno] = inboundMessages(2, 'br');
if (ana === undefined || bruno === undefined) throw new Error('two messages expected');
const templateUpdate = {
  field: 'message_template_status_update',
  value: { event: 'APPROVED', message_template_id: 1, message_template_name: 'welcome', reason: 'NONE' },
};
/** São Paulo's customers write; Monterrey's outbound message is read; the account's template is approved. */
const body = JSON.stringify(
  webhookPayload([
    messagesChange([ana, bruno], SAO_PAULO),
    statusesChange(
      [{ id: 'wamid.mx1', status: 'read', recipientId: '5218100000001', timestamp: '1749416390' }],
      MONTERREY,
    ),
    templateUpdate,
  ]),
);

function stored(queue: RecordingQueues, queueUrl: string) {
  return (queue.storedIn.get(queueUrl) ?? []).flatMap(({ parts }) =>
    parts.map((part) => ({ keys: keysOfEnvelope(part.body), fairnessGroup: part.fairnessGroup })),
  );
}

describe('routing by number and account', () => {
  it("gives each number's subscriber the conversations of its number only, and the rest only when it holds its number", async () => {
    const { status, queue } = await deliverSigned(
      body,
      [BRAZIL, MEXICO, TENANT],
      new RecordingQueues(100_000),
    );
    expect(status).toBe(200);

    expect(stored(queue, 'memory://brazil-messages.fifo').map(({ keys }) => keys)).toEqual([
      [`msg:${ana.id}`],
      [`msg:${bruno.id}`],
    ]);
    // The rest holds Monterrey's status and the account's template: nothing of São Paulo.
    expect(stored(queue, 'memory://brazil')).toEqual([]);

    expect(stored(queue, 'memory://mexico-messages.fifo')).toEqual([]);
    const rest = stored(queue, 'memory://mexico');
    expect(rest.map(({ keys }) => keys)).toEqual([
      ['st:wamid.mx1:read', expect.stringMatching(/^message_template_status_update:/)],
    ]);

    // The account's subscriber gets both numbers and the template.
    expect(stored(queue, 'memory://tenant-messages.fifo')).toHaveLength(2);
    expect(stored(queue, 'memory://tenant')).toEqual(rest);
  });

  it('groups each part for fairness by its phone number, else by its account', async () => {
    const { queue } = await deliverSigned(body, [TENANT], new RecordingQueues(100_000));
    expect(stored(queue, 'memory://tenant-messages.fifo').map(({ fairnessGroup }) => fairnessGroup)).toEqual([
      '201',
      '201',
    ]);
    expect(stored(queue, 'memory://tenant').map(({ fairnessGroup }) => fairnessGroup)).toEqual(['202']);

    const accountOnly = JSON.stringify(webhookPayload([templateUpdate]));
    const { queue: templates } = await deliverSigned(accountOnly, [TENANT], new RecordingQueues(100_000));
    expect(stored(templates, 'memory://tenant').map(({ fairnessGroup }) => fairnessGroup)).toEqual([WABA_ID]);
  });

  it('gives a subscriber without a message lane the body whole when it holds its number', async () => {
    const { queue } = await deliverSigned(body, [BRAZIL_WHOLE], new RecordingQueues(100_000));
    expect(
      queue.storedIn.get('memory://brazil-whole')?.map(({ parts }) => parts.map((part) => part.body)),
    ).toEqual([[body]]);
  });

  it('acknowledges a delivery of numbers nobody declared and counts it unrouted, storing nothing', async () => {
    const { status, queue, metrics } = await deliverSigned(body, [ELSEWHERE], new RecordingQueues(100_000));
    expect(status).toBe(200);
    expect(queue.storedIn.size).toBe(0);
    expect(metrics.DeliveriesUnrouted).toBe(1);
  });
});
