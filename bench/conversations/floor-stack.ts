/**
 * The pass-through floor of the reply-latency figure: the local stack's receiver, queues and pollers with a
 * consumer that calls the handler with no claim. Run as a child process by ./conversations.ts:
 *
 *   PORT=… WHATSAPP_APP_SECRETS=… LOCAL_SUBSCRIBERS=bench/conversations/journal-subscribers.ts \
 *     node --import tsx bench/conversations/floor-stack.ts
 *
 * The local stack takes a subscriber module (LOCAL_SUBSCRIBERS) but no consumer of its own (local/stack/
 * local-stack.ts always builds `createConsumerFromEnv`), so this assembles the same parts as
 * `startLocalStack` from the modules it uses, with the same configuration: `readLocalConfig` and
 * `loadLocalSubscribers` over the same environment, `createPipelineQueues` on fauxqs with each lane's
 * settings (the message lane FIFO when ordered), the receiver handler (functions/receiver.ts) behind the same
 * API Gateway v2 adapter, and one `createSqsEventSource` per lane with that lane's batch size, window,
 * timeout and pollers. What it leaves out is the consumer: no claim, ledger, logging or metrics; records run
 * one after the other, so a conversation's order holds as it would. Nothing of DynamoDB runs.
 *
 * Prints `ready <port>` on stdout once it serves POST /webhook.
 */
import '../../local/silence-sdk-node-version-warning.ts';
import { createServer } from 'node:http';
import { fileURLToPath } from 'node:url';
import { SQSClient } from '@aws-sdk/client-sqs';
import type { APIGatewayProxyEventV2, APIGatewayProxyResultV2, Context, SQSEvent } from 'aws-lambda';
import { interceptLocalhostDns } from 'fauxqs';
import { receiverEnvironment } from '../../contract/environment.ts';
import type { PipelineSettings } from '../../contract/settings.ts';
import type { WebhookHandlers } from '../../functions/consumer/handler-api.ts';
import {
  createPipelineQueues,
  createQuarantineQueue,
  messageLaneQueueNames,
  type PipelineQueues,
  startSqsEmulator,
  subscriberQueueNames,
} from '../../local/emulators/sqs.ts';
import {
  fromApiGatewayV2Result,
  readBody,
  toApiGatewayV2Event,
  writeAnswer,
} from '../../local/http/api-gateway-v2.ts';
import { createLambdaContext } from '../../local/lambda-context.ts';
import { createSqsEventSource } from '../../local/sqs-event-source.ts';
import { importSubscriberHandlers } from '../../local/stack/consumer-runtime.ts';
import { readLocalConfig } from '../../local/stack/local-config.ts';
import { loadLocalSubscribers } from '../../local/stack/local-subscribers.ts';

const REPOSITORY_ROOT = fileURLToPath(new URL('../../', import.meta.url));
const REGION = 'us-east-1';
const CREDENTIALS = { accessKeyId: 'local', secretAccessKey: 'local' };

interface Lane {
  readonly settings: PipelineSettings;
  readonly queues: PipelineQueues;
}

interface WebhookItem {
  readonly id?: unknown;
  readonly status?: unknown;
}
interface WebhookBody {
  readonly entry?: readonly {
    readonly changes?: readonly {
      readonly field?: unknown;
      readonly value?: { messages?: WebhookItem[]; statuses?: WebhookItem[] } & Record<string, unknown>;
    }[];
  }[];
}

/**
 * The handler called on every message and status of the batch's records, in order, with no claim: the least
 * any consumer of this queue does. The context holds what the bench's handlers read (key, payload).
 */
export function passThroughConsumer(handlers: WebhookHandlers) {
  return async (event: SQSEvent): Promise<{ batchItemFailures: [] }> => {
    for (const record of event.Records) {
      const body = JSON.parse(record.body) as WebhookBody;
      for (const entry of body.entry ?? []) {
        for (const change of entry.changes ?? []) {
          const value = change.value ?? {};
          for (const payload of value.messages ?? []) {
            await handlers.onMessage?.({ key: `msg:${String(payload.id)}`, payload, value } as never);
          }
          for (const payload of value.statuses ?? []) {
            const key = `st:${String(payload.id)}:${String(payload.status)}`;
            await handlers.onStatus?.({ key, payload, value } as never);
          }
        }
      }
    }
    return { batchItemFailures: [] };
  };
}

async function main(): Promise<void> {
  const config = readLocalConfig();
  const { subscribers } = await loadLocalSubscribers({
    root: REPOSITORY_ROOT,
    settings: config.settingsInput,
    env: process.env,
  });
  const emulator = await startSqsEmulator();
  const sqs = new SQSClient({ region: REGION, credentials: CREDENTIALS, endpoint: emulator.endpoint });
  const quarantineQueueUrl = await createQuarantineQueue(sqs, config.settings);
  interceptLocalhostDns();
  const lanesOf = new Map<string, { status: Lane; message?: Lane; ordered: boolean }>();
  for (const subscriber of subscribers) {
    const status: Lane = {
      settings: subscriber.settings,
      queues: await createPipelineQueues(sqs, subscriber.settings, subscriberQueueNames(subscriber.name)),
    };
    const lane = subscriber.messageLane;
    const message: Lane | undefined =
      lane === undefined
        ? undefined
        : {
            settings: lane.settings,
            queues: await createPipelineQueues(
              sqs,
              lane.settings,
              messageLaneQueueNames(subscriber.name, lane.ordered),
              { fifo: lane.ordered },
            ),
          };
    lanesOf.set(subscriber.name, {
      status,
      ...(message ? { message } : {}),
      ordered: lane?.ordered ?? false,
    });
  }
  Object.assign(process.env, {
    AWS_REGION: REGION,
    AWS_ACCESS_KEY_ID: CREDENTIALS.accessKeyId,
    AWS_SECRET_ACCESS_KEY: CREDENTIALS.secretAccessKey,
    AWS_ENDPOINT_URL_SQS: new URL(quarantineQueueUrl).origin,
    ...receiverEnvironment({
      subscriberQueues: subscribers.map(({ name, fields }) => {
        const lanes = lanesOf.get(name) as { status: Lane; message?: Lane; ordered: boolean };
        return {
          name,
          queueUrl: lanes.status.queues.queueUrl,
          ...(fields === undefined ? {} : { fields }),
          ...(lanes.message === undefined
            ? {}
            : { messageQueueUrl: lanes.message.queues.queueUrl, messageLaneOrdered: lanes.ordered }),
        };
      }),
      quarantineQueueUrl,
      maximumMessageSizeBytes: config.settings.maximumMessageSizeBytes,
      webhookSecrets: { appSecrets: config.appSecrets, verifyToken: config.verifyToken },
    }),
  });
  const { handler: receiver } = (await import('../../functions/receiver.ts')) as {
    handler: (event: APIGatewayProxyEventV2, context: Context) => Promise<APIGatewayProxyResultV2>;
  };
  for (const subscriber of subscribers) {
    const consume = passThroughConsumer(await importSubscriberHandlers(subscriber, REPOSITORY_ROOT));
    const lanes = lanesOf.get(subscriber.name) as { status: Lane; message?: Lane };
    for (const lane of [lanes.status, lanes.message]) {
      if (lane === undefined) continue;
      const source = createSqsEventSource({
        sqs,
        queueUrl: lane.queues.queueUrl,
        handler: consume,
        batchSize: lane.settings.batchSize,
        maxBatchingWindowSeconds: lane.settings.maxBatchingWindowSeconds,
        functionTimeoutSeconds: lane.settings.consumerTimeoutSeconds,
        pollers: lane.settings.maxConcurrency,
        log: (line) => process.stderr.write(`${line}\n`),
      });
      await source.start();
    }
  }
  const server = createServer((request, response) => {
    void (async () => {
      if (request.method === 'GET' && request.url === '/ready') {
        response.writeHead(200).end('ready');
        return;
      }
      const receivedAt = Date.now();
      const body = await readBody(request, 10 * 1024 * 1024);
      const event = toApiGatewayV2Event({
        method: request.method ?? 'GET',
        url: request.url ?? '/',
        rawHeaders: request.rawHeaders,
        body,
        receivedAt,
      });
      const context = createLambdaContext({
        functionName: 'receiver',
        region: REGION,
        deadlineMs: receivedAt + config.settings.receiverTimeoutSeconds * 1000,
      });
      writeAnswer(response, fromApiGatewayV2Result(await receiver(event, context)));
    })().catch((error: unknown) => {
      process.stderr.write(`floor stack: ${String(error)}\n`);
      if (!response.headersSent) response.writeHead(500).end();
    });
  });
  server.listen(config.port, '127.0.0.1', () => {
    const address = server.address();
    process.stdout.write(`ready ${typeof address === 'object' && address ? address.port : config.port}\n`);
  });
  const stop = () => process.exit(0);
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main().catch((error: unknown) => {
    process.stderr.write(
      `floor stack failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    process.exit(1);
  });
}
