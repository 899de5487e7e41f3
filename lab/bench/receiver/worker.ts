/**
 * Child process of `npm run bench`: the receiver Lambda handler (`createReceiverHandler`, the same code API
 * Gateway invokes) on signed bodies of 1, 100 and 1000 updates for one subscriber, with SQS answered in memory,
 * side by side with the floor: HMAC-SHA256 of the raw body plus one `JSON.parse`. Each iteration times both, in
 * alternating order; medians are reported.
 *
 * The fan-out case sends one body to several subscriber queues (docs/design.md §7) and times, in each iteration
 * and in rotating order, the floor, the same body to one subscriber and to all of them: the ratio to one
 * subscriber compares samples taken side by side, not runs minutes apart on a machine whose load changes.
 *
 * SQS is answered at the SDK's HTTP request handler (sqs-answered-in-memory.ts): the command, its JSON
 * serialisation, SigV4 signing and the answer's MD5 checks run as in Lambda; only the network is left out.
 */
import { createHmac } from 'node:crypto';
import { CreateQueueCommand, PurgeQueueCommand, SQSClient } from '@aws-sdk/client-sqs';
import type { APIGatewayProxyEventV2, APIGatewayProxyResultV2 } from 'aws-lambda';
import { interceptLocalhostDns } from 'fauxqs';
import { seededRandom } from '../../../cli/local/seeded-random.ts';
import { batchedBody } from '../../../cli/meta-traffic/webhook-bodies.ts';
import { median } from '../../../cli/tools/statistics.ts';
import { receiverEnvironment } from '../../../contract/environment.ts';
import { resolveSettings } from '../../../contract/settings.ts';
import { DEFAULT_SUBSCRIBER_NAME, type SubscriberQueue } from '../../../contract/subscribers.ts';
import { createReceiverHandler } from '../../../functions/receiver.ts';
import { type Timer as SideBySideTimer, timeSideBySide } from '../support/side-by-side.ts';
import { serveWorker } from '../support/worker-process.ts';
import { BENCH_APP_SECRET, signedPostEvent } from './signed-post.ts';
import { answerSqsInMemory, type SqsInMemory } from './sqs-answered-in-memory.ts';

export interface ReceiverBenchInput {
  /** Updates per body, and measured iterations for each, sent to one subscriber. */
  readonly bodies: readonly { readonly updates: number; readonly iterations: number }[];
  /** A body of `updates` sent to `subscribers` queues, timed beside the same body sent to one. */
  readonly fanOut?: {
    readonly updates: number;
    readonly subscribers: number;
    readonly iterations: number;
  };
  /**
   * Bodies of these sizes to one subscriber with the archive on (the copy to the archive queue beside the
   * subscriber's send, docs/design.md §9) and off, timed side by side.
   */
  readonly archive?: {
    readonly updates: readonly number[];
    readonly iterations: number;
    /**
     * The acknowledgement's wall-clock latency, on and off alternating in pairs: SQS answering after a fixed
     * modelled round trip (with each call's CPU time, `process.cpuUsage`), and (with `sqsEndpoint`, fauxqs in
     * another process) over a real connection.
     */
    readonly latency?: {
      readonly iterations: number;
      readonly modelledRoundTripMs: number;
      readonly sqsEndpoint?: string;
    };
  };
  /** Unmeasured iterations first, as a share of the measured ones. */
  readonly warmupShare: number;
}

export interface ReceiverArchiveResult {
  readonly updates: number;
  readonly bodyBytes: number;
  readonly iterations: number;
  /** Medians of the same iterations: archive off, archive on. */
  readonly offMs: number;
  readonly onMs: number;
  /** Archive queue messages one delivery became (more than one: chunks). */
  readonly archiveMessages: number;
  /** Every measured sample, in iteration order (sample i of off and of on ran side by side). */
  readonly samples: {
    /** SQS answered in memory at once: processor time. */
    readonly cpu: PairedSamples;
    /** SQS answered in memory after the modelled round trip. */
    readonly modelled?: PairedSamples;
    /** The processor time (`process.cpuUsage`, user + system) of the same modelled pairs. */
    readonly modelledCpu?: PairedSamples;
    /** SQS over a real connection (fauxqs). */
    readonly network?: PairedSamples;
  };
}

export interface PairedSamples {
  readonly offMs: readonly number[];
  readonly onMs: readonly number[];
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

export interface ReceiverFanOutResult {
  readonly updates: number;
  readonly subscribers: number;
  readonly bodyBytes: number;
  readonly iterations: number;
  /** Queue messages of one delivery, every subscriber queue counted. */
  readonly queueMessages: number;
  /** Medians of the same iterations: the body to every subscriber, to one, and the floor. */
  readonly msPerDelivery: number;
  readonly oneSubscriberMs: number;
  readonly floorMs: number;
  readonly handlerMinMs: number;
  readonly oneSubscriberMinMs: number;
}

export interface ReceiverBenchOutput {
  readonly bodies: readonly ReceiverBodyResult[];
  readonly fanOut?: ReceiverFanOutResult;
  readonly archive?: readonly ReceiverArchiveResult[];
}

/**
 * The origin of the in-memory queues' URLs: SQS's, or the emulator's when the run has one, so that every client
 * in this process resolves the endpoint its queue URLs name (the SDK warns on every request otherwise).
 */
let sqsOrigin = 'https://sqs.us-east-1.amazonaws.com';
/** Queue URLs of one length, so that the in-memory SQS answers every queue's identical request from its cache. */
const queueUrl = (index: number) =>
  `${sqsOrigin}/000000000000/bench-subscriber-${String(index).padStart(2, '0')}`;

type Handler = (event: APIGatewayProxyEventV2) => Promise<APIGatewayProxyResultV2>;

/** The floor: what any receiver must do with a signed body, and nothing else. */
function floor(body: string): unknown {
  const digest = createHmac('sha256', BENCH_APP_SECRET).update(body).digest('hex');
  const parsed = JSON.parse(body) as unknown;
  return digest.length > 0 ? parsed : undefined;
}

interface QueueUrls {
  readonly subscriber: (index: number) => string;
  readonly quarantine: string;
  readonly archive: string;
}

function receiverFor(subscribers: number, options: { archive?: boolean; urls?: QueueUrls } = {}): Handler {
  const urls = options.urls ?? {
    subscriber: queueUrl,
    quarantine: `${sqsOrigin}/000000000000/bench-quarantine`,
    archive: `${sqsOrigin}/000000000000/bench-archive`,
  };
  const subscriberQueues: SubscriberQueue[] = Array.from({ length: subscribers }, (_, index) => ({
    name: subscribers === 1 ? DEFAULT_SUBSCRIBER_NAME : `subscriber-${index + 1}`,
    queueUrl: urls.subscriber(index),
  }));
  return createReceiverHandler({
    ...process.env,
    ...receiverEnvironment({
      subscriberQueues,
      quarantineQueueUrl: urls.quarantine,
      maximumMessageSizeBytes: resolveSettings().maximumMessageSizeBytes,
      webhookSecrets: { appSecrets: [BENCH_APP_SECRET] },
      ...(options.archive === true && { archiveQueueUrl: urls.archive }),
    }),
  });
}

/** The queues on fauxqs, as the stack creates them (the message size of the settings). */
async function createNetworkQueues(endpoint: string): Promise<QueueUrls & { purge(): Promise<void> }> {
  const client = new SQSClient({ endpoint, region: process.env.AWS_REGION });
  const maximum = String(resolveSettings().maximumMessageSizeBytes);
  const create = async (name: string) => {
    const { QueueUrl } = await client.send(
      new CreateQueueCommand({ QueueName: name, Attributes: { MaximumMessageSize: maximum } }),
    );
    if (QueueUrl === undefined) throw new Error(`CreateQueue ${name} returned no URL.`);
    return QueueUrl;
  };
  const [subscriber, quarantine, archive] = await Promise.all(
    ['bench-subscriber', 'bench-quarantine', 'bench-archive'].map(create),
  );
  return {
    subscriber: () => subscriber as string,
    quarantine: quarantine as string,
    archive: archive as string,
    // The emulator keeps every message in memory: 1000-update bodies would fill it.
    purge: async () => {
      await Promise.all(
        [subscriber, archive].map((url) => client.send(new PurgeQueueCommand({ QueueUrl: url }))),
      );
    },
  };
}

/** A signed body of `updates`, as Lambda hands it over: a fresh event parsed from the runtime's payload. */
function signedDelivery(updates: number, random: () => number) {
  const body = batchedBody(updates, random, updates * 10);
  // The Lambda runtime JSON.parses each invocation's payload: the handler gets a fresh, flat string each
  // time, not the two-byte string the generator built (V8 string layout changes the cost of every pass).
  const payload = JSON.stringify(signedPostEvent(body));
  let invocation = 0;
  return {
    bodyBytes: Buffer.byteLength(body),
    event(): APIGatewayProxyEventV2 {
      const event = JSON.parse(payload) as APIGatewayProxyEventV2;
      event.requestContext.requestId = `bench-${updates}-${invocation++}`;
      return event;
    },
  };
}

let sink = 0;

/** Times one measurement: the handler on a fresh event (refusing anything but a 200), or the floor. */
type Timer = SideBySideTimer<APIGatewayProxyEventV2>;

function handlerTimer(handler: Handler, label: string): Timer {
  return async (event) => {
    const started = performance.now();
    const response = await handler(event);
    const elapsed = performance.now() - started;
    const status = typeof response === 'object' ? response.statusCode : undefined;
    if (status !== 200) throw new Error(`The receiver answered ${status} to a valid body (${label}).`);
    return elapsed;
  };
}

const floorTimer: Timer = async (event) => {
  const raw = event.body as string;
  const started = performance.now();
  sink += floor(raw) === undefined ? 0 : 1;
  return performance.now() - started;
};

async function measureBody(
  handler: Handler,
  sqs: SqsInMemory,
  updates: number,
  iterations: number,
  warmupShare: number,
  random: () => number,
): Promise<ReceiverBodyResult> {
  const delivery = signedDelivery(updates, random);
  const warmup = Math.ceil(iterations * warmupShare);
  const entriesBefore = sqs.entries();
  const [floorMs, handlerMs] = (await timeSideBySide(
    [floorTimer, handlerTimer(handler, `${updates} updates`)],
    () => delivery.event(),
    warmup,
    iterations,
  )) as [number[], number[]];
  return {
    updates,
    bodyBytes: delivery.bodyBytes,
    iterations,
    queueMessages: (sqs.entries() - entriesBefore) / (warmup + iterations),
    msPerDelivery: median(handlerMs),
    floorMs: median(floorMs),
    ratio: median(handlerMs) / median(floorMs),
    handlerMinMs: Math.min(...handlerMs),
    floorMinMs: Math.min(...floorMs),
  };
}

async function measureFanOut(
  oneSubscriber: Handler,
  sqs: SqsInMemory,
  fanOut: NonNullable<ReceiverBenchInput['fanOut']>,
  warmupShare: number,
  random: () => number,
): Promise<ReceiverFanOutResult> {
  const { updates, subscribers, iterations } = fanOut;
  const delivery = signedDelivery(updates, random);
  const warmup = Math.ceil(iterations * warmupShare);
  const allSubscribers = handlerTimer(receiverFor(subscribers), `${subscribers} subscribers`);
  const sent = { before: 0, entries: 0 };
  // Counts the entries of the fan-out calls alone (the one-subscriber calls run in the same loop).
  const counted: Timer = async (event) => {
    sent.before = sqs.entries();
    const elapsed = await allSubscribers(event);
    sent.entries += sqs.entries() - sent.before;
    return elapsed;
  };
  const [fanOutMs, oneMs, floorMs] = (await timeSideBySide(
    [counted, handlerTimer(oneSubscriber, `${updates} updates`), floorTimer],
    () => delivery.event(),
    warmup,
    iterations,
  )) as [number[], number[], number[]];
  return {
    updates,
    subscribers,
    bodyBytes: delivery.bodyBytes,
    iterations,
    queueMessages: sent.entries / (warmup + iterations),
    msPerDelivery: median(fanOutMs),
    oneSubscriberMs: median(oneMs),
    floorMs: median(floorMs),
    handlerMinMs: Math.min(...fanOutMs),
    oneSubscriberMinMs: Math.min(...oneMs),
  };
}

/**
 * Off and on timed side by side, their order flipped every iteration (pairs), after the warm-up; with the
 * process's CPU time of each handler call beside its wall time.
 */
async function pairedOnOff(
  off: Handler,
  on: Handler,
  delivery: ReturnType<typeof signedDelivery>,
  label: string,
  warmup: number,
  iterations: number,
  before?: () => Promise<void>,
): Promise<{ wall: PairedSamples; cpu: PairedSamples }> {
  const cpu = { offMs: [] as number[], onMs: [] as number[] };
  const wrap = (timer: Timer, cpuMs: number[]): Timer => {
    const measured = withCpuTime(timer, cpuMs);
    return before === undefined
      ? measured
      : async (event) => {
          await before();
          return measured(event);
        };
  };
  const [offMs, onMs] = (await timeSideBySide(
    [
      wrap(handlerTimer(off, `${label}, archive off`), cpu.offMs),
      wrap(handlerTimer(on, `${label}, archive on`), cpu.onMs),
    ],
    () => delivery.event(),
    warmup,
    iterations,
  )) as [number[], number[]];
  // Each timer runs once per iteration: its CPU samples are in iteration order, the warm-up's first.
  return { wall: { offMs, onMs }, cpu: { offMs: cpu.offMs.slice(warmup), onMs: cpu.onMs.slice(warmup) } };
}

/**
 * `timer`, recording the process's CPU time (user + system, every thread: the SDK's hashing, GC) over the
 * call in `cpuMs`. While the modelled round trip waits on a timer the process is idle, so the figure is the
 * handler's own work.
 */
function withCpuTime(timer: Timer, cpuMs: number[]): Timer {
  return async (event) => {
    const before = process.cpuUsage();
    const elapsed = await timer(event);
    const used = process.cpuUsage(before);
    cpuMs.push((used.user + used.system) / 1000);
    return elapsed;
  };
}

interface NetworkReceivers {
  readonly off: Handler;
  readonly on: Handler;
  purge(): Promise<void>;
}

async function measureArchive(
  off: Handler,
  sqs: SqsInMemory,
  updates: number,
  input: NonNullable<ReceiverBenchInput['archive']>,
  warmupShare: number,
  random: () => number,
  network: NetworkReceivers | undefined,
): Promise<ReceiverArchiveResult> {
  const { iterations, latency } = input;
  const delivery = signedDelivery(updates, random);
  const warmup = Math.ceil(iterations * warmupShare);
  const onHandler = receiverFor(1, { archive: true });
  const on = handlerTimer(onHandler, `${updates} updates, archive on`);
  // The archive's messages: what the receiver sent with the archive on, less what it sent with it off.
  const sent = { before: 0, entries: 0 };
  const offTimer = handlerTimer(off, `${updates} updates, archive off`);
  const counted = async (event: APIGatewayProxyEventV2) => {
    sent.before = sqs.entries();
    const elapsed = await offTimer(event);
    sent.entries -= sqs.entries() - sent.before;
    return elapsed;
  };
  const countedOn = async (event: APIGatewayProxyEventV2) => {
    sent.before = sqs.entries();
    const elapsed = await on(event);
    sent.entries += sqs.entries() - sent.before;
    return elapsed;
  };
  const [offMs, onMs] = (await timeSideBySide(
    [counted, countedOn],
    () => delivery.event(),
    warmup,
    iterations,
  )) as [number[], number[]];
  let modelled: Awaited<ReturnType<typeof pairedOnOff>> | undefined;
  let networkSamples: PairedSamples | undefined;
  if (latency !== undefined) {
    const latencyWarmup = Math.ceil(latency.iterations * warmupShare);
    const label = `${updates} updates`;
    sqs.setRoundTripMs(latency.modelledRoundTripMs);
    try {
      modelled = await pairedOnOff(off, onHandler, delivery, label, latencyWarmup, latency.iterations);
    } finally {
      sqs.setRoundTripMs(0);
    }
    if (network !== undefined) {
      sqs.setPassThrough(true);
      let calls = 0;
      try {
        ({ wall: networkSamples } = await pairedOnOff(
          network.off,
          network.on,
          delivery,
          `${label} over fauxqs`,
          latencyWarmup,
          latency.iterations,
          // Untimed: before the handler's clock starts.
          async () => {
            if (++calls % 8 === 0) await network.purge();
          },
        ));
      } finally {
        sqs.setPassThrough(false);
      }
    }
  }
  return {
    updates,
    bodyBytes: delivery.bodyBytes,
    iterations,
    offMs: median(offMs),
    onMs: median(onMs),
    archiveMessages: sent.entries / (warmup + iterations),
    samples: {
      cpu: { offMs, onMs },
      modelled: modelled?.wall,
      modelledCpu: modelled?.cpu,
      network: networkSamples,
    },
  };
}

serveWorker<ReceiverBenchInput, ReceiverBenchOutput>(async (input, progress) => {
  // Signing needs credentials; the requests never leave the process.
  process.env.AWS_ACCESS_KEY_ID ??= 'bench';
  process.env.AWS_SECRET_ACCESS_KEY ??= 'bench';
  process.env.AWS_REGION ??= 'us-east-1';
  const sqs = answerSqsInMemory();
  let network: NetworkReceivers | undefined;
  let restoreDns: (() => void) | undefined;
  const endpoint = input.archive?.latency?.sqsEndpoint;
  if (endpoint !== undefined) {
    // fauxqs queue URLs name `sqs.<region>.localhost`, which the receiver's client calls directly.
    restoreDns = interceptLocalhostDns();
    sqs.setPassThrough(true);
    const urls = await createNetworkQueues(endpoint);
    sqs.setPassThrough(false);
    sqsOrigin = new URL(urls.archive).origin;
    process.env.AWS_ENDPOINT_URL_SQS = sqsOrigin;
    network = {
      off: receiverFor(1, { urls }),
      on: receiverFor(1, { urls, archive: true }),
      purge: urls.purge,
    };
  }
  const oneSubscriber = receiverFor(1);
  const random = seededRandom(42);

  const bodies: ReceiverBodyResult[] = [];
  for (const { updates, iterations } of input.bodies) {
    const result = await measureBody(oneSubscriber, sqs, updates, iterations, input.warmupShare, random);
    bodies.push(result);
    progress(
      `receiver ${updates} updates (${(result.bodyBytes / 1024).toFixed(0)} KiB): ${result.msPerDelivery.toFixed(3)} ms vs floor ${result.floorMs.toFixed(3)} ms (×${result.ratio.toFixed(2)})`,
    );
  }
  let fanOut: ReceiverFanOutResult | undefined;
  if (input.fanOut) {
    fanOut = await measureFanOut(oneSubscriber, sqs, input.fanOut, input.warmupShare, random);
    progress(
      `receiver ${fanOut.updates} updates to ${fanOut.subscribers} subscribers: ${fanOut.msPerDelivery.toFixed(3)} ms vs one subscriber ${fanOut.oneSubscriberMs.toFixed(3)} ms (×${(fanOut.msPerDelivery / fanOut.oneSubscriberMs).toFixed(2)})`,
    );
  }
  const archive: ReceiverArchiveResult[] = [];
  const ratio = (paired: PairedSamples | undefined) =>
    paired === undefined
      ? 'not run'
      : `×${(median(paired.onMs) / median(paired.offMs)).toFixed(3)} (${median(paired.offMs).toFixed(2)} → ${median(paired.onMs).toFixed(2)} ms)`;
  for (const updates of input.archive?.updates ?? []) {
    const result = await measureArchive(
      oneSubscriber,
      sqs,
      updates,
      input.archive as NonNullable<ReceiverBenchInput['archive']>,
      input.warmupShare,
      random,
      network,
    );
    archive.push(result);
    progress(
      `receiver ${updates} updates, archive on ${result.onMs.toFixed(3)} ms vs off ${result.offMs.toFixed(3)} ms (×${(result.onMs / result.offMs).toFixed(3)}, ${result.archiveMessages} archive messages); modelled round trip ${ratio(result.samples.modelled)}, its CPU ${ratio(result.samples.modelledCpu)}; over fauxqs ${ratio(result.samples.network)}`,
    );
  }
  restoreDns?.();
  if (sink === 0 && input.bodies.length > 0) throw new Error('The floor parsed nothing.');
  sqs.restore();
  return {
    bodies,
    fanOut,
    ...(archive.length > 0 && { archive }),
  };
});
