/**
 * The real receiver handler on the SQS emulator with a subscriber's two lanes: an ordered message lane (a FIFO
 * queue in high-throughput mode, as the construct makes it) and its standard status lane. Each conversation of
 * a delivery is one FIFO message in its own group, in the order the deliveries were accepted; a repeat of the
 * same delivery within SQS's 5 minutes is absorbed by the deduplication id.
 */
import { createHash } from 'node:crypto';
import { CreateQueueCommand, type Message, ReceiveMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { interceptLocalhostDns } from 'fauxqs';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { readQueueCounts, totalMessages } from '../../../cli/local/queue-counts.ts';
import {
  envelope,
  inboundMessages,
  messagesChange,
  PHONE_NUMBER_ID,
  statusesChange,
} from '../../../cli/meta-traffic/webhook-bodies.ts';
import { receiverEnvironment } from '../../../contract/environment.ts';
import { resolveSettings } from '../../../contract/settings.ts';
import type { SubscriberQueue } from '../../../contract/subscribers.ts';
import { createReceiverHandler } from '../../../functions/receiver.ts';
import {
  createSqsClient,
  sqsEndpoint,
  TEST_CREDENTIALS,
  TEST_REGION,
  uniqueName,
} from '../../support/aws-clients.ts';
import { keysOfEnvelope } from '../../support/webhooks/event-keys.ts';
import { signedPost } from '../../support/webhooks/webhook-requests.ts';

const SECRET = 'lanes-test-app-secret';
const settings = resolveSettings();

let sqs: SQSClient;
let restoreDns: () => void;

beforeAll(() => {
  sqs = createSqsClient();
  restoreDns = interceptLocalhostDns();
  vi.stubEnv('AWS_REGION', TEST_REGION);
  vi.stubEnv('AWS_ACCESS_KEY_ID', TEST_CREDENTIALS.accessKeyId);
  vi.stubEnv('AWS_SECRET_ACCESS_KEY', TEST_CREDENTIALS.secretAccessKey);
  vi.stubEnv('AWS_ENDPOINT_URL_SQS', sqsEndpoint());
  vi.stubEnv('POWERTOOLS_LOG_LEVEL', 'ERROR');
  vi.stubEnv('POWERTOOLS_METRICS_DISABLED', 'true');
});

afterAll(() => {
  vi.unstubAllEnvs();
  restoreDns();
  sqs.destroy();
});

async function createQueue(name: string, attributes: Record<string, string> = {}): Promise<string> {
  const { QueueUrl } = await sqs.send(
    new CreateQueueCommand({
      QueueName: name,
      Attributes: { MaximumMessageSize: String(settings.maximumMessageSizeBytes), ...attributes },
    }),
  );
  if (QueueUrl === undefined) throw new Error(`no URL for queue ${name}`);
  return QueueUrl;
}

async function laneReceiver() {
  const [queueUrl, messageQueueUrl, quarantineQueueUrl] = await Promise.all([
    createQueue(uniqueName('bot')),
    createQueue(`${uniqueName('bot-messages')}.fifo`, {
      FifoQueue: 'true',
      DeduplicationScope: 'messageGroup',
      FifoThroughputLimit: 'perMessageGroupId',
    }),
    createQueue(uniqueName('quarantine')),
  ]);
  const bot: SubscriberQueue = { name: 'bot', queueUrl, messageQueueUrl, messageLaneOrdered: true };
  const handler = createReceiverHandler({
    ...process.env,
    ...receiverEnvironment({
      subscriberQueues: [bot],
      quarantineQueueUrl,
      maximumMessageSizeBytes: settings.maximumMessageSizeBytes,
      webhookSecrets: { appSecrets: [SECRET] },
    }),
  });
  const post = async (body: string) =>
    ((await handler(signedPost(body, SECRET))) as APIGatewayProxyStructuredResultV2).statusCode;
  return { post, queueUrl, messageQueueUrl, quarantineQueueUrl };
}

/** Every message of a queue, deleting none: a FIFO group stays locked while its batch is in flight, so each
 * receive returns the available groups' messages in order. */
async function drain(queueUrl: string, expected: number): Promise<Message[]> {
  const messages: Message[] = [];
  for (let attempt = 0; attempt < 10 && messages.length < expected; attempt++) {
    const { Messages = [] } = await sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: queueUrl,
        MaxNumberOfMessages: 10,
        WaitTimeSeconds: 1,
        VisibilityTimeout: 60,
        MessageAttributeNames: ['All'],
        MessageSystemAttributeNames: ['MessageGroupId', 'MessageDeduplicationId', 'SequenceNumber'],
      }),
    );
    messages.push(...Messages);
  }
  return messages;
}

const depth = async (queueUrl: string) => totalMessages(await readQueueCounts(sqs, queueUrl));
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const [alice, bob] = inboundMessages(2, 'lane');
if (alice === undefined || bob === undefined) throw new Error('two senders expected');
const aliceSays = (id: string) => ({ ...alice, id });
const status = {
  id: 'wamid.out-lanes',
  status: 'delivered',
  recipientId: '16505559999',
  timestamp: '1749416390',
};

describe('the receiver on the SQS emulator, with an ordered message lane', () => {
  it('stores each conversation in its group, in the order of the deliveries, and the statuses in the status lane', async () => {
    const { post, queueUrl, messageQueueUrl, quarantineQueueUrl } = await laneReceiver();
    const first = envelope([
      messagesChange([aliceSays('wamid.a1'), bob, aliceSays('wamid.a2')]),
      statusesChange([status]),
    ]);
    const second = envelope([messagesChange([aliceSays('wamid.a3')])]);
    expect(await post(first)).toBe(200);
    expect(await post(second)).toBe(200);

    const received = await drain(messageQueueUrl, 3);
    const byGroup = new Map<string, string[][]>();
    for (const message of received) {
      const group = message.Attributes?.MessageGroupId ?? '';
      byGroup.set(group, [...(byGroup.get(group) ?? []), keysOfEnvelope(message.Body ?? '')]);
      expect(message.MessageAttributes?.conversation?.StringValue).toBe(group);
      expect(message.Attributes?.MessageDeduplicationId).toBe(
        sha256(keysOfEnvelope(message.Body ?? '').join('\n')),
      );
    }
    expect(byGroup).toEqual(
      new Map([
        [`${PHONE_NUMBER_ID}:${alice.from}`, [['msg:wamid.a1', 'msg:wamid.a2'], ['msg:wamid.a3']]],
        [`${PHONE_NUMBER_ID}:${bob.from}`, [[`msg:${bob.id}`]]],
      ]),
    );
    const [rest, ...more] = await drain(queueUrl, 1);
    expect(more).toEqual([]);
    expect(keysOfEnvelope(rest?.Body ?? '')).toEqual(['st:wamid.out-lanes:delivered']);
    expect(await depth(quarantineQueueUrl)).toBe(0);
  });

  it('stores deliveries of one conversation that arrive together in the order they arrived', async () => {
    const { post, messageQueueUrl } = await laneReceiver();
    // Ten: one receive hands out at most ten messages of a group, which then stays locked while they are in flight.
    const ids = Array.from({ length: 10 }, (_, index) => `wamid.burst${index}`);
    // Started one after the other without waiting: their SendMessageBatch calls overlap.
    const answers = await Promise.all(ids.map((id) => post(envelope([messagesChange([aliceSays(id)])]))));
    expect(answers).toEqual(ids.map(() => 200));
    const received = await drain(messageQueueUrl, ids.length);
    expect(received.flatMap((message) => keysOfEnvelope(message.Body ?? ''))).toEqual(
      ids.map((id) => `msg:${id}`),
    );
  });

  it('absorbs a repeat of the same delivery within 5 minutes: as many messages as distinct parts', async () => {
    const { post, messageQueueUrl } = await laneReceiver();
    const body = envelope([messagesChange([aliceSays('wamid.r1'), bob, aliceSays('wamid.r2')])]);
    for (let repeat = 0; repeat < 3; repeat++) expect(await post(body)).toBe(200);
    expect(await depth(messageQueueUrl)).toBe(2);
    const received = await drain(messageQueueUrl, 2);
    expect(received.map((message) => keysOfEnvelope(message.Body ?? '')).sort()).toEqual(
      [['msg:wamid.r1', 'msg:wamid.r2'], [`msg:${bob.id}`]].sort(),
    );
  });
});
