/**
 * Child process of `npm run bench` (the bot-mix part): every delivery of the bot mix POSTed through the receiver
 * Lambda handler (`createReceiverHandler`, the code API Gateway or a function URL invokes) with a Lambda context
 * shaped like AWS's, counting the bytes it writes to stdout: its log lines and its EMF document, what CloudWatch
 * Logs ingests. The level is the process's (`POWERTOOLS_LOG_LEVEL`, read when the handler's module makes its
 * logger), so the parent runs this worker once per level. SQS is answered in memory.
 */
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { createLambdaContext } from '../../../cli/local/lambda-context.ts';
import { receiverEnvironment } from '../../../contract/environment.ts';
import { resolveSettings } from '../../../contract/settings.ts';
import { DEFAULT_SUBSCRIBER_NAME } from '../../../contract/subscribers.ts';
import { createReceiverHandler } from '../../../functions/receiver.ts';
import { DEFAULT_RECEIVER_MEMORY_MB } from '../../../lib/defaults.ts';
import { type BotMixOptions, buildBotMixWorkload } from '../consumer/bot-mix-workload.ts';
import { RECEIVER_FUNCTION_NAME } from '../support/lambda-names.ts';
import { countStdoutBytes } from '../support/stdout-bytes.ts';
import { serveWorker } from '../support/worker-process.ts';
import { BENCH_APP_SECRET, signedPostEvent } from './signed-post.ts';
import { answerSqsInMemory } from './sqs-answered-in-memory.ts';

export type ReceiverLogVolumeInput = BotMixOptions;

export interface ReceiverLogVolumeOutput {
  readonly level: string;
  readonly deliveries: number;
  readonly logBytes: number;
}

const QUEUES = 'https://sqs.us-east-1.amazonaws.com/000000000000';

const stdoutBytes = countStdoutBytes();

serveWorker<ReceiverLogVolumeInput, ReceiverLogVolumeOutput>(async (input, progress) => {
  process.env.AWS_ACCESS_KEY_ID ??= 'bench';
  process.env.AWS_SECRET_ACCESS_KEY ??= 'bench';
  process.env.AWS_REGION ??= 'us-east-1';
  answerSqsInMemory({ cache: false });
  // The stack's default layout: a status lane and a FIFO message lane.
  const handler = createReceiverHandler({
    ...process.env,
    ...receiverEnvironment({
      subscriberQueues: [
        {
          name: DEFAULT_SUBSCRIBER_NAME,
          queueUrl: `${QUEUES}/WhatsAppWebhook-StatusLane`,
          messageQueueUrl: `${QUEUES}/WhatsAppWebhook-MessageLane.fifo`,
          messageLaneOrdered: true,
        },
      ],
      quarantineQueueUrl: `${QUEUES}/WhatsAppWebhook-Quarantine`,
      maximumMessageSizeBytes: resolveSettings().maximumMessageSizeBytes,
      webhookSecrets: { appSecrets: [BENCH_APP_SECRET] },
    }),
  });
  const bodies = buildBotMixWorkload(input).records.map((record) => record.body);
  const before = stdoutBytes();
  for (const [index, body] of bodies.entries()) {
    const context = createLambdaContext({
      functionName: RECEIVER_FUNCTION_NAME,
      memoryLimitInMB: DEFAULT_RECEIVER_MEMORY_MB,
      region: 'us-east-1',
      deadlineMs: Date.now() + 10_000,
    });
    const response = await handler(signedEvent(body, index), context);
    const status = typeof response === 'object' ? response.statusCode : undefined;
    if (status !== 200) throw new Error(`The receiver answered ${status} to a bot-mix delivery.`);
  }
  const logBytes = stdoutBytes() - before;
  const level = process.env.POWERTOOLS_LOG_LEVEL ?? 'INFO';
  progress(`receiver log volume at ${level}: ${(logBytes / bodies.length).toFixed(0)} bytes per delivery`);
  return { level, deliveries: bodies.length, logBytes };
});

/** A signed POST as API Gateway hands it over, with a request id of AWS's length. */
function signedEvent(body: string, index: number): APIGatewayProxyEventV2 {
  const event = signedPostEvent(body);
  event.requestContext.requestId = `Bench${String(index).padStart(10, '0')}A=`;
  return event;
}
