/**
 * Child process of `npm run bench`: the receiver Lambda handler (`createReceiverHandler`, the same code API
 * Gateway invokes) on signed bodies of 1, 100 and 1000 updates, with SQS answered in memory, side by side
 * with the floor: HMAC-SHA256 of the raw body plus one `JSON.parse`. Each iteration times both, in
 * alternating order; medians are reported.
 *
 * SQS is answered at the SDK's HTTP request handler (sqs-answered-in-memory.ts): the command, its JSON
 * serialisation, SigV4 signing and the answer's MD5 checks run as in Lambda; only the network is left out.
 */
import { createHmac } from 'node:crypto';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { receiverEnvironment } from '../../contract/environment.ts';
import { resolveSettings } from '../../contract/settings.ts';
import { DEFAULT_SUBSCRIBER_NAME } from '../../contract/subscribers.ts';
import { signBody } from '../../functions/receiver/signature.ts';
import { createReceiverHandler } from '../../functions/receiver.ts';
import { toApiGatewayV2Event } from '../../local/http/api-gateway-v2.ts';
import { seededRandom } from '../../local/seeded-random.ts';
import { batchedBody } from '../../test/support/webhooks/webhook-bodies.ts';
import { median } from '../support/stats.ts';
import { serveWorker } from '../support/worker-process.ts';
import { answerSqsInMemory } from './sqs-answered-in-memory.ts';

export interface ReceiverBenchInput {
  /** Updates per body, and measured iterations for each. */
  readonly bodies: readonly { readonly updates: number; readonly iterations: number }[];
  /** Unmeasured iterations first, as a share of the measured ones. */
  readonly warmupShare: number;
}

export interface ReceiverBodyResult {
  readonly updates: number;
  readonly bodyBytes: number;
  readonly iterations: number;
  /** Queue messages the delivery became (more than one: the body was split to fit SQS). */
  readonly queueMessages: number;
  readonly msPerDelivery: number;
  readonly floorMs: number;
  readonly ratio: number;
  readonly handlerMinMs: number;
  readonly floorMinMs: number;
}

const APP_SECRET = 'bench-app-secret';
const QUEUE_URL = 'https://sqs.us-east-1.amazonaws.com/000000000000/bench-deliveries';
const DLQ_URL = 'https://sqs.us-east-1.amazonaws.com/000000000000/bench-dlq';

/** The floor: what any receiver must do with a signed body, and nothing else. */
function floor(body: string): unknown {
  const digest = createHmac('sha256', APP_SECRET).update(body).digest('hex');
  const parsed = JSON.parse(body) as unknown;
  return digest.length > 0 ? parsed : undefined;
}

serveWorker<ReceiverBenchInput, ReceiverBodyResult[]>(async (input, progress) => {
  // Signing needs credentials; the requests never leave the process.
  process.env.AWS_ACCESS_KEY_ID ??= 'bench';
  process.env.AWS_SECRET_ACCESS_KEY ??= 'bench';
  process.env.AWS_REGION ??= 'us-east-1';
  const sqs = answerSqsInMemory();
  const handler = createReceiverHandler({
    ...process.env,
    ...receiverEnvironment({
      subscriberQueues: [{ name: DEFAULT_SUBSCRIBER_NAME, queueUrl: QUEUE_URL }],
      quarantineQueueUrl: DLQ_URL,
      maximumMessageSizeBytes: resolveSettings().maximumMessageSizeBytes,
      webhookSecrets: { appSecrets: [APP_SECRET] },
    }),
  });

  const results: ReceiverBodyResult[] = [];
  const random = seededRandom(42);
  let sink = 0;
  for (const { updates, iterations } of input.bodies) {
    const body = batchedBody(updates, random, updates * 10);
    const signature = signBody(body, APP_SECRET);
    const warmup = Math.ceil(iterations * input.warmupShare);
    const handlerMs: number[] = [];
    const floorMs: number[] = [];
    const entriesBefore = sqs.entries();
    // The Lambda runtime JSON.parses each invocation's payload: the handler gets a fresh, flat string each
    // time, not the two-byte string the generator built (V8 string layout changes the cost of every pass).
    const payload = JSON.stringify(
      toApiGatewayV2Event({
        method: 'POST',
        url: '/webhook',
        rawHeaders: [
          'content-type',
          'application/json',
          'user-agent',
          'facebookexternalua',
          'x-hub-signature-256',
          signature,
        ],
        body: Buffer.from(body),
        sourceIp: '173.252.0.1',
      }),
    );
    for (let i = 0; i < warmup + iterations; i++) {
      const event = JSON.parse(payload) as APIGatewayProxyEventV2;
      event.requestContext.requestId = `bench-${updates}-${i}`;
      const raw = event.body as string;
      const timeHandler = async () => {
        const started = performance.now();
        const response = await handler(event);
        const elapsed = performance.now() - started;
        const status = typeof response === 'object' ? response.statusCode : undefined;
        if (status !== 200)
          throw new Error(`The receiver answered ${status} to a valid ${updates}-update body.`);
        return elapsed;
      };
      const timeFloor = () => {
        const started = performance.now();
        sink += floor(raw) === undefined ? 0 : 1;
        return performance.now() - started;
      };
      let h: number;
      let f: number;
      if (i % 2 === 0) {
        f = timeFloor();
        h = await timeHandler();
      } else {
        h = await timeHandler();
        f = timeFloor();
      }
      if (i >= warmup) {
        handlerMs.push(h);
        floorMs.push(f);
      }
    }
    const result: ReceiverBodyResult = {
      updates,
      bodyBytes: Buffer.byteLength(body),
      iterations,
      queueMessages: (sqs.entries() - entriesBefore) / (warmup + iterations),
      msPerDelivery: median(handlerMs),
      floorMs: median(floorMs),
      ratio: median(handlerMs) / median(floorMs),
      handlerMinMs: Math.min(...handlerMs),
      floorMinMs: Math.min(...floorMs),
    };
    results.push(result);
    progress(
      `receiver ${updates} updates (${(result.bodyBytes / 1024).toFixed(0)} KiB): ${result.msPerDelivery.toFixed(3)} ms vs floor ${result.floorMs.toFixed(3)} ms (×${result.ratio.toFixed(2)})`,
    );
  }
  if (sink === 0) throw new Error('The floor parsed nothing.');
  sqs.restore();
  return results;
});
