/**
 * The real receiver handler (configured from `receiverEnvironment`, as in Lambda) on the SQS emulator, with
 * two subscriber queues and the quarantine queue: a signed delivery reaches every subscriber that wants it,
 * a field-filtered subscriber only deliveries of its fields, and a quarantined body the quarantine queue only.
 */
import { CreateQueueCommand, type Message, ReceiveMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { interceptLocalhostDns } from 'fauxqs';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { readQueueCounts, totalMessages } from '../../../cli/local/queue-counts.ts';
import { envelope, inboundMessages, messagesChange } from '../../../cli/meta-traffic/webhook-bodies.ts';
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

const SECRET = 'fan-out-test-app-secret';
const settings = resolveSettings();
const accountUpdate = {
  field: 'account_update',
  value: { phone_number: '15556013472', event: 'PARTNER_ADDED' },
};

let sqs: SQSClient;
let restoreDns: () => void;
let bot: SubscriberQueue;
let crm: SubscriberQueue;
let quarantineQueueUrl: string;

async function createQueue(label: string): Promise<string> {
  const { QueueUrl } = await sqs.send(
    new CreateQueueCommand({
      QueueName: uniqueName(label),
      Attributes: { MaximumMessageSize: String(settings.maximumMessageSizeBytes) },
    }),
  );
  if (QueueUrl === undefined) throw new Error(`no URL for queue ${label}`);
  return QueueUrl;
}

beforeAll(async () => {
  sqs = createSqsClient();
  // fauxqs queue URLs name `sqs.<region>.localhost`, which the handler's env-configured client calls directly.
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

/** Fresh queues per test, so that each test reads only what its own deliveries stored. */
async function createQueues(): Promise<void> {
  [bot, crm, quarantineQueueUrl] = await Promise.all([
    createQueue('bot').then((queueUrl) => ({ name: 'bot', queueUrl, fields: ['messages'] })),
    createQueue('crm').then((queueUrl) => ({ name: 'crm', queueUrl })),
    createQueue('quarantine'),
  ]);
}

function receiver(subscribers: readonly SubscriberQueue[] = [bot, crm]) {
  const handler = createReceiverHandler({
    ...process.env,
    ...receiverEnvironment({
      subscriberQueues: subscribers,
      quarantineQueueUrl,
      maximumMessageSizeBytes: settings.maximumMessageSizeBytes,
      webhookSecrets: { appSecrets: [SECRET] },
    }),
  });
  return async (body: Buffer | string) =>
    (await handler(signedPost(body, SECRET))) as APIGatewayProxyStructuredResultV2;
}

/** Every message of a queue (the test's deliveries are few: one receive of up to 10 finds them all). */
async function messagesOf(queueUrl: string): Promise<Message[]> {
  const { Messages = [] } = await sqs.send(
    new ReceiveMessageCommand({
      QueueUrl: queueUrl,
      MaxNumberOfMessages: 10,
      WaitTimeSeconds: 1,
      MessageAttributeNames: ['All'],
    }),
  );
  return Messages;
}

const depth = async (queueUrl: string) => totalMessages(await readQueueCounts(sqs, queueUrl));

describe('the receiver on the SQS emulator, with two subscribers', () => {
  it('stores one signed delivery in both subscriber queues, byte for byte, and nothing in the quarantine queue', async () => {
    await createQueues();
    const body = envelope([messagesChange(inboundMessages(3, 'fan'))]);
    expect((await receiver()(body)).statusCode).toBe(200);
    for (const subscriber of [bot, crm]) {
      const [message, ...others] = await messagesOf(subscriber.queueUrl);
      expect(others, subscriber.name).toEqual([]);
      expect(message?.Body, subscriber.name).toBe(body);
      expect(message?.MessageAttributes?.parts?.StringValue).toBe('1');
    }
    expect(await depth(quarantineQueueUrl)).toBe(0);
  });

  it('gives the field-filtered subscriber only the delivery holding its field', async () => {
    await createQueues();
    const post = receiver();
    const messages = envelope([messagesChange(inboundMessages(2, 'only-bot'))]);
    const account = envelope([accountUpdate]);
    expect((await post(messages)).statusCode).toBe(200);
    expect((await post(account)).statusCode).toBe(200);
    expect((await messagesOf(bot.queueUrl)).map((message) => message.Body)).toEqual([messages]);
    const toCrm = (await messagesOf(crm.queueUrl)).map((message) => message.Body);
    expect(toCrm.sort()).toEqual([messages, account].sort());
  });

  it("gives a number's subscriber that number's deliveries only, each in its phone number's fair-queue group", async () => {
    await createQueues();
    const post = receiver([
      { ...crm, name: 'brazil', numbers: ['201'] },
      { ...bot, name: 'mexico', fields: undefined, numbers: ['202'] },
    ]);
    const of = (phoneNumberId: string) =>
      envelope([
        messagesChange(inboundMessages(1, `n${phoneNumberId}`), {
          display_phone_number: '1',
          phone_number_id: phoneNumberId,
        }),
      ]);
    for (const number of ['201', '202', '203']) expect((await post(of(number))).statusCode).toBe(200);

    const stored = async (queueUrl: string) =>
      (
        await sqs.send(
          new ReceiveMessageCommand({
            QueueUrl: queueUrl,
            MaxNumberOfMessages: 10,
            WaitTimeSeconds: 1,
            MessageSystemAttributeNames: ['MessageGroupId'],
          }),
        )
      ).Messages?.map((message) => ({ body: message.Body, group: message.Attributes?.MessageGroupId })) ?? [];
    expect(await stored(crm.queueUrl)).toEqual([{ body: of('201'), group: '201' }]);
    expect(await stored(bot.queueUrl)).toEqual([{ body: of('202'), group: '202' }]);
  });

  it('acknowledges a delivery no subscriber wants without storing it anywhere', async () => {
    await createQueues();
    expect((await receiver([bot])(envelope([accountUpdate]))).statusCode).toBe(200);
    expect(await depth(bot.queueUrl)).toBe(0);
    expect(await depth(quarantineQueueUrl)).toBe(0);
  });

  it('quarantines a signed body that is not JSON once, in the quarantine queue only', async () => {
    await createQueues();
    const raw = Buffer.from('{"object":"whatsapp_business_account","entry":[');
    expect((await receiver()(raw)).statusCode).toBe(200);
    const [quarantined, ...others] = await messagesOf(quarantineQueueUrl);
    expect(others).toEqual([]);
    expect(Buffer.from(quarantined?.Body ?? '', 'base64').equals(raw)).toBe(true);
    expect(quarantined?.MessageAttributes?.reason?.StringValue).toBe('invalid-json');
    expect(await depth(bot.queueUrl)).toBe(0);
    expect(await depth(crm.queueUrl)).toBe(0);
  });

  it('answers 503 when one subscriber queue cannot be written, after the other stored the delivery', async () => {
    await createQueues();
    const missing: SubscriberQueue = { name: 'crm', queueUrl: `${crm.queueUrl}-deleted` };
    const body = envelope([messagesChange(inboundMessages(2, 'partial'))]);
    expect((await receiver([bot, missing])(body)).statusCode).toBe(503);
    const stored = await messagesOf(bot.queueUrl);
    expect(stored.flatMap((message) => keysOfEnvelope(message.Body ?? ''))).toEqual(keysOfEnvelope(body));
    expect(await depth(quarantineQueueUrl)).toBe(0);
  });
});
