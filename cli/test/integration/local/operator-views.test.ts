/**
 * The dashboard's operator views on the emulators: a key's view per subscriber is exactly what
 * `npm run ops -- key --json` prints for it, and the dead-letters view counts and describes DLQ records
 * and quarantined bodies without consuming them, without their content, and without scanning a queue
 * again on every poll.
 */
import { SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { type DynamoDBDocumentClient, PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_SETTINGS } from '../../../../contract/settings.ts';
import { storageKey } from '../../../../functions/claims/storage-key.ts';
import { StatusLedger } from '../../../../functions/ledger/status-ledger.ts';
import { SqsQuarantineQueue } from '../../../../functions/queue/sqs-quarantine-queue.ts';
import {
  createDocumentClient,
  createDynamoDbClient,
  createSqsClient,
  createTestClaimTable,
  dynamoDbEndpoint,
  sqsEndpoint,
  uniqueName,
} from '../../../../test/support/aws-clients.ts';
import { waitFor } from '../../../../test/support/wait-for.ts';
import { createPipelineQueues, createQuarantineQueue } from '../../../local/emulators/sqs.ts';
import type { LocalInfo, LocalSubscriberInfo } from '../../../local/local-stack-api.ts';
import { readQueueCounts } from '../../../local/queue-counts.ts';
import {
  createOperatorViews,
  inProcessTarget,
  type OperatorViews,
} from '../../../local/stack/operator-views.ts';
import {
  envelope,
  inboundMessagesWithIds,
  messagesChange,
  wamidFactory,
} from '../../../meta-traffic/webhook-bodies.ts';
import { UsageError } from '../../../ops/errors.ts';
import { runOps } from '../../../ops/run-ops.ts';
import type { OpsTarget } from '../../../ops/target/ops-target.ts';

const wamid = wamidFactory('operator-views');
const SECRET_TEXT = 'operator views must never show this sentence';
const PHONE = '4915112345678';

// Near the real time: DynamoDB Local's TTL deletes items whose expiry has passed.
let now = Date.now();
const clock = () => now;
let sqs: SQSClient;
let documentClient: DynamoDBDocumentClient;
let info: LocalInfo;
let target: OpsTarget;
let views: OperatorViews;
let receives = 0;

function subscriberInfo(
  name: string,
  queues: { queueUrl: string; dlqUrl: string },
  keyNamespace: string | null,
  fields: readonly string[] | null,
): LocalSubscriberInfo {
  return {
    name,
    entry: 'functions/handlers.ts',
    fields,
    numbers: null,
    wabas: null,
    keyNamespace,
    handlers: ['onMessage'],
    queueUrl: queues.queueUrl,
    dlqUrl: queues.dlqUrl,
    settings: DEFAULT_SETTINGS,
  };
}

beforeAll(async () => {
  sqs = createSqsClient();
  sqs.middlewareStack.add(
    (next, context) => (args) => {
      if (context.commandName === 'ReceiveMessageCommand') receives++;
      return next(args);
    },
    { step: 'initialize', name: 'countReceives' },
  );
  const dynamodb = createDynamoDbClient();
  documentClient = createDocumentClient(dynamodb);
  const tableName = await createTestClaimTable(dynamodb, 'operator-views');
  const queueNames = (label: string) => ({
    deliveryQueueName: uniqueName(`ov-${label}`),
    deadLetterQueueName: uniqueName(`ov-${label}-dlq`),
  });
  const [defaultQueues, crmQueues, quarantineQueueUrl] = await Promise.all([
    createPipelineQueues(sqs, DEFAULT_SETTINGS, queueNames('default')),
    createPipelineQueues(sqs, DEFAULT_SETTINGS, queueNames('crm')),
    createQuarantineQueue(sqs, DEFAULT_SETTINGS, uniqueName('ov-quarantine')),
  ]);
  info = {
    dynamodbEndpoint: dynamoDbEndpoint(),
    sqsEndpoint: sqsEndpoint(),
    tableName,
    queueUrl: defaultQueues.queueUrl,
    dlqUrl: defaultQueues.dlqUrl,
    quarantineQueueUrl,
    logDigestKey: 'log-digest-key',
    provenanceKey: 'provenance-key',
    subscribersSource: 'test',
    subscribers: [
      subscriberInfo('default', defaultQueues, null, null),
      subscriberInfo('crm', crmQueues, 'crm', ['messages']),
    ],
  };
  target = inProcessTarget({
    info,
    maximumMessageSizeBytes: DEFAULT_SETTINGS.maximumMessageSizeBytes,
    sqs,
    documentClient,
    consumer: () => undefined,
  });
  views = createOperatorViews({ target, clock });
});

afterAll(() => {
  sqs?.destroy();
  documentClient?.destroy();
});

async function putClaim(pk: string, item: Record<string, unknown>): Promise<void> {
  await documentClient.send(new PutCommand({ TableName: info.tableName, Item: { pk, ...item } }));
}

async function opsKeyJson(key: string, subscriber: string): Promise<unknown> {
  let stdout = '';
  let stderr = '';
  const code = await runOps(
    ['key', key, '--json', '--subscriber', subscriber],
    {
      stdout: { write: (text: string) => (stdout += text) },
      stderr: { write: (t: string) => (stderr += t) },
    },
    { resolveTarget: async () => target, clock, env: {} },
  );
  expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
  return JSON.parse(stdout);
}

describe('key lookup', () => {
  it('shows each subscriber its claim under its namespace, exactly as ops key --json prints it', async () => {
    const key = `msg:${wamid(1)}`;
    await putClaim(storageKey(key), {
      state: 'done',
      owner: 'owner-1',
      field: 'messages',
      claimedAt: now - 5_000,
      doneAt: now - 4_000,
      attempt: 2,
      expiresAt: Math.floor(now / 1000) + 8 * 86_400,
      messageId: 'message-1',
    });
    await putClaim(storageKey(key, 'crm'), {
      state: 'processing',
      owner: 'owner-2',
      field: 'messages',
      claimedAt: now - 1_000,
      leaseUntil: now + 60_000,
      attempt: 1,
      expiresAt: Math.floor(now / 1000) + 8 * 86_400,
      messageId: 'message-2',
    });

    const lookup = await views.keyLookup(key);

    expect(lookup.key).toBe(key);
    expect(lookup.subscribers.map((view) => [view.subscriber, view.claim?.status, view.pk])).toEqual([
      ['default', 'done', key],
      ['crm', 'in-flight', `crm#${key}`],
    ]);
    expect(lookup.subscribers[0]?.claim).toMatchObject({
      attempt: 2,
      doneAt: new Date(now - 4_000).toISOString(),
      messageId: 'message-1',
    });
    for (const view of lookup.subscribers) {
      expect(JSON.parse(JSON.stringify(view))).toEqual(await opsKeyJson(key, view.subscriber));
    }
    expect((await views.keyLookup(key, 'crm')).subscribers.map((view) => view.subscriber)).toEqual(['crm']);
  });

  it("shows a status key's ledger entry, and a field a subscriber does not receive", async () => {
    const key = `st:${wamid(2)}:read`;
    await new StatusLedger({ documentClient, tableName: info.tableName, retentionDays: 8, clock }).record({
      wamid: wamid(2),
      status: 'read',
      timestamp: 1_780_000_100,
      recipientParticipantId: undefined,
    });
    const template = 'message_template_status_update:102290129340398:123:APPROVED:-';

    const [status, other] = await Promise.all([views.keyLookup(key), views.keyLookup(template)]);

    expect(status.subscribers.map((view) => [view.subscriber, view.claim, view.ledger?.current])).toEqual([
      ['default', undefined, 'read'],
      ['crm', undefined, undefined],
    ]);
    expect(status.subscribers[0]?.ledger?.times).toEqual({ read: new Date(1_780_000_100_000).toISOString() });
    expect(other.subscribers.map((view) => [view.subscriber, view.receivesField])).toEqual([
      ['default', true],
      ['crm', false],
    ]);
  });

  it('refuses a malformed key with the ops message', async () => {
    await expect(views.keyLookup('no-such-prefix')).rejects.toThrow(UsageError);
    await expect(views.keyLookup('st:wamid.only')).rejects.toThrow(/must look like st:<wamid>:<status>/);
  });
});

describe('dead letters and quarantine', () => {
  it('counts and describes failed records and quarantined bodies, consumes none, shows no content', async () => {
    const doneKey = `msg:${wamid(10)}`;
    await putClaim(storageKey(doneKey), {
      state: 'done',
      owner: 'owner-10',
      field: 'messages',
      claimedAt: now - 9_000,
      doneAt: now - 8_000,
      attempt: 1,
      expiresAt: Math.floor(now / 1000) + 8 * 86_400,
    });
    const dlqUrl = info.subscribers[0]?.dlqUrl as string;
    for (const id of [wamid(10), wamid(11)]) {
      await sqs.send(
        new SendMessageCommand({
          QueueUrl: dlqUrl,
          MessageBody: envelope([messagesChange(inboundMessagesWithIds([id]))]),
          MessageAttributes: { deliveryId: { DataType: 'String', StringValue: `delivery-${id}` } },
        }),
      );
      // SentTimestamp has millisecond resolution: the second record is the newer one.
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const quarantine = new SqsQuarantineQueue({
      sqs,
      quarantineQueueUrl: info.quarantineQueueUrl,
      maximumMessageSizeBytes: 1024,
    });
    const meta = (id: string, at: string) => ({
      deliveryId: id,
      receivedAt: at,
      retryDeadline: now + 10_000,
    });
    await quarantine.quarantine(
      Buffer.from(`${SECRET_TEXT} +${PHONE}`),
      'invalid-json',
      meta('small', '2026-03-01T11:00:00.000Z'),
    );
    const large = Buffer.from(`${`${SECRET_TEXT} +${PHONE} `.repeat(60)}`);
    const { messages: chunks } = await quarantine.quarantine(
      large,
      'event-too-large',
      meta('large', '2026-03-01T11:30:00.000Z'),
    );
    expect(chunks).toBeGreaterThan(1);

    const view = await views.deadLetters();

    const [defaultView, crmView] = view.subscribers;
    expect(defaultView).toMatchObject({ subscriber: 'default', counts: { visible: 2 }, scanned: 2 });
    expect(defaultView?.newest.map((record) => [record.deliveryId, record.failure])).toEqual([
      [`delivery-${wamid(11)}`, ['a handler failed (its claims were released)']],
      [
        `delivery-${wamid(10)}`,
        ['every event is done: only the acknowledgement failed; a redrive skips them as duplicates'],
      ],
    ]);
    expect(defaultView?.newest[0]?.receiveCount).toBe(1);
    expect(crmView).toMatchObject({ subscriber: 'crm', counts: { visible: 0, inFlight: 0 }, newest: [] });
    expect(view.quarantine.counts.visible).toBe(1 + chunks);
    expect(view.quarantine.bodies).toBe(2);
    expect(
      view.quarantine.newest.map((body) => [
        body.deliveryId,
        body.reason,
        body.bytes,
        body.chunksPresent,
        body.chunks,
      ]),
    ).toEqual([
      ['large', 'event-too-large', large.byteLength, chunks, chunks],
      ['small', 'invalid-json', Buffer.byteLength(`${SECRET_TEXT} +${PHONE}`), 1, 1],
    ]);
    const text = JSON.stringify(view);
    for (const secret of [SECRET_TEXT, PHONE, Buffer.from(SECRET_TEXT).toString('base64').slice(0, 20)]) {
      expect(text).not.toContain(secret);
    }
    // Peeked, not consumed: everything is visible again at once.
    expect((await readQueueCounts(sqs, dlqUrl)).visible).toBe(2);
    expect((await readQueueCounts(sqs, info.quarantineQueueUrl)).visible).toBe(1 + chunks);
  });

  it('scans a queue again only when its count changed or its last scan is a minute old', async () => {
    await views.deadLetters();
    const before = receives;
    now += 5_000;
    await views.deadLetters();
    expect(receives).toBe(before);

    const dlqUrl = info.subscribers[0]?.dlqUrl as string;
    await sqs.send(
      new SendMessageCommand({
        QueueUrl: dlqUrl,
        MessageBody: envelope([messagesChange(inboundMessagesWithIds([wamid(12)]))]),
      }),
    );
    now += 5_000;
    const changed = await views.deadLetters();
    expect(receives).toBeGreaterThan(before);
    expect(changed.subscribers[0]).toMatchObject({ counts: { visible: 3 }, scanned: 3 });

    const afterChange = receives;
    now += 30_000;
    await views.deadLetters();
    expect(receives).toBe(afterChange);
    now += 31_000;
    await views.deadLetters();
    expect(receives).toBeGreaterThan(afterChange);
  });

  it("reports a queue's counts without the messages its own scan is hiding (two pages polling)", async () => {
    const dlqUrl = info.subscribers[0]?.dlqUrl as string;
    await sqs.send(
      new SendMessageCommand({
        QueueUrl: dlqUrl,
        MessageBody: envelope([messagesChange(inboundMessagesWithIds([wamid(13)]))]),
      }),
    );
    now += 5_000;
    const before = receives;
    const first = views.deadLetters();
    await waitFor(() => receives > before);

    const second = await views.deadLetters();

    expect(second.subscribers[0]).toMatchObject({ counts: { visible: 4, inFlight: 0 }, scanned: 4 });
    expect((await first).subscribers[0]).toMatchObject({ counts: { visible: 4, inFlight: 0 } });
  });
});
