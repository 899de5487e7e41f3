import { SendMessageBatchCommand } from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import { SeededRandom } from '../../../cli/local/seeded-random.ts';
import { percentile } from '../../../cli/tools/statistics.ts';
import {
  DYNAMODB_NEW_TABLE_WARM_WRITE_UNITS,
  EVENT_SOURCE_CONCURRENCY_ADDED_PER_MINUTE,
  EVENT_SOURCE_INITIAL_CONCURRENCY,
} from '../../../contract/capacity.ts';
import { conversationOf } from '../../../functions/consumer/consumer-batch.ts';
import { extractEvents } from '../../../functions/events/extract-events.ts';
import type { WebhookEvent } from '../../../functions/events/types.ts';
import { SqsService, scaleSqsClient } from '../../capacity-simulation/aws-services.ts';
import {
  PARTITION_WRITE_UNITS,
  PEAK_ADAPTATION_MS,
  TableThroughput,
} from '../../capacity-simulation/dynamodb-throughput.ts';
import { EventSource } from '../../capacity-simulation/event-source.ts';
import { LambdaAccount } from '../../capacity-simulation/lambda-account.ts';
import {
  FAIR_QUEUE,
  FifoLaneQueue,
  type Received,
  StandardLaneQueue,
} from '../../capacity-simulation/lane-queues.ts';
import { LATENCIES, Latency } from '../../capacity-simulation/latency.ts';
import { LatencySeries } from '../../capacity-simulation/measures.ts';
import { TokenBucket } from '../../capacity-simulation/token-bucket.ts';
import { TrafficGenerator } from '../../capacity-simulation/traffic.ts';
import { Engine } from '../../virtual-time/engine.ts';

const START = Date.UTC(2026, 0, 1);

describe('latency', () => {
  it("draws a log-normal whose median and p99 are the cited figure's", () => {
    const latency = new Latency(LATENCIES.dynamoDbWrite, new SeededRandom(11));
    const draws = Array.from({ length: 20_000 }, () => latency.draw());
    expect(percentile(draws, 50)).toBeCloseTo(LATENCIES.dynamoDbWrite.p50Ms, 0);
    expect(Math.abs(percentile(draws, 99) / LATENCIES.dynamoDbWrite.p99Ms - 1)).toBeLessThan(0.1);
  });
});

describe('latency series', () => {
  it("gives whole milliseconds below 32,768 ms the samples' own nearest-rank percentiles", () => {
    const random = new SeededRandom(23);
    const samples = Array.from({ length: 5_000 }, () => random.int(0, 32_767));
    const series = new LatencySeries();
    for (const sample of samples) series.add(sample);
    expect(series.count).toBe(samples.length);
    for (const p of [0, 1, 25, 50, 90, 99, 100]) expect(series.percentile(p)).toBe(percentile(samples, p));
  });

  it('merges series into one of all their samples (a set of numbers)', () => {
    const low = new LatencySeries();
    const high = new LatencySeries();
    for (let ms = 1; ms <= 50; ms++) low.add(ms);
    for (let ms = 51; ms <= 100; ms++) high.add(ms);
    const all = LatencySeries.merged([low, high]);
    expect([all.count, all.percentile(50), all.percentile(99)]).toEqual([100, 50, 99]);
    expect(low.count).toBe(50);
    expect(LatencySeries.merged([]).percentile(99)).toBe(0);
  });

  it('keeps longer waits within 1/16,384 of theirs, rounds to the millisecond, and gives 0 for none', () => {
    const series = new LatencySeries();
    expect(series.percentile(99)).toBe(0);
    for (const ms of [40_000, 1_000_000, 3_600_000]) {
      const one = new LatencySeries();
      one.add(ms);
      expect(Math.abs(one.percentile(50) - ms) / ms).toBeLessThanOrEqual(1 / 16_384);
    }
    series.add(12.4);
    series.add(12.6);
    expect([series.percentile(50), series.percentile(100)]).toEqual([12, 13]);
  });
});

describe('API Gateway token bucket', () => {
  it('admits a burst of `burst` requests at one instant, refuses the next, and refills at `rate`', () => {
    const bucket = new TokenBucket(4_000, 4_000, START);
    let admitted = 0;
    for (let index = 0; index < 4_500; index++) if (bucket.take(START)) admitted++;
    expect(admitted).toBe(4_000);
    expect(bucket.take(START + 100)).toBe(true);
    let after = 0;
    for (let index = 0; index < 1_000; index++) if (bucket.take(START + 100)) after++;
    // 100 ms at 4,000/s: 400 tokens, one of them taken above.
    expect(after).toBe(399);
  });
});

describe('Lambda account concurrency', () => {
  it('throttles the execution above its limit and frees one on release', () => {
    const account = new LambdaAccount(2);
    expect(account.acquire('receiver')).toBe(true);
    expect(account.acquire('consumer')).toBe(true);
    expect(account.acquire('consumer')).toBe(false);
    expect(account.throttles).toBe(1);
    account.release('receiver');
    expect(account.acquire('consumer')).toBe(true);
    expect(account.peakOf('consumer')).toBe(2);
  });
});

describe('DynamoDB throughput', () => {
  it('throttles a new table above its warm throughput within the first 30 minutes, and serves twice a peak older than that', () => {
    const table = new TableThroughput({
      warmWriteUnits: DYNAMODB_NEW_TABLE_WARM_WRITE_UNITS,
      startMs: START,
    });
    let served = 0;
    // 6,000 distinct keys within 100 ms: far above 4,000 WU/s.
    for (let index = 0; index < 6_000; index++)
      if (table.write(START + Math.floor(index / 60), `key-${index}`)) served++;
    expect(table.throttled).toBeGreaterThan(0);
    expect(served).toBeLessThanOrEqual(DYNAMODB_NEW_TABLE_WARM_WRITE_UNITS * 1.1);
    const later = START + PEAK_ADAPTATION_MS + 2_000;
    expect(table.capacity(later)).toBe(Math.max(DYNAMODB_NEW_TABLE_WARM_WRITE_UNITS, 2 * served));
  });

  it('throttles one hot partition at 1,000 WU/s though the table has room', () => {
    const table = new TableThroughput({ warmWriteUnits: 10_000, startMs: START });
    let served = 0;
    for (let index = 0; index < 2_000; index++)
      if (table.write(START + Math.floor(index / 2), 'one-hot-key')) served++;
    expect(served).toBeLessThanOrEqual(PARTITION_WRITE_UNITS + 1_000);
    expect(table.throttledByPartition).toBeGreaterThan(0);
    expect(table.partitions).toHaveLength(10);
  });

  it('a table with 1,000 WU/s of warm throughput throttles a load its 11,000 WU/s default carries', () => {
    const load = (warmWriteUnits: number) => {
      const table = new TableThroughput({ warmWriteUnits, startMs: START });
      for (let index = 0; index < 5_000; index++) table.write(START + Math.floor(index / 5), `key-${index}`);
      return table.throttled;
    };
    expect(load(1_000)).toBeGreaterThan(0);
    expect(load(11_000)).toBe(0);
  });

  it("throttles a lane catching up at its drain rate on a table warm for the peak's mean only", () => {
    // A backlog drained at 12,000 WU/s for 30 s, as Poisson writes of distinct keys.
    const drain = 12_000;
    const throttledAt = (warmWriteUnits: number) => {
      const random = new SeededRandom(19);
      const table = new TableThroughput({ warmWriteUnits, startMs: START });
      let at = START;
      for (let index = 0; index < drain * 30; index++) {
        at += (-Math.log(1 - random.next()) * 1000) / drain;
        table.write(at, `key-${index}`);
      }
      return table.throttled;
    };
    expect(throttledAt(11_000)).toBeGreaterThan(0);
    expect(throttledAt(Math.ceil(drain / 0.9))).toBe(0);
  });
});

describe('lane queues', () => {
  it('a FIFO group is handed out again only once its message in flight is deleted', () => {
    const engine = new Engine(START, { wholeMilliseconds: true });
    const queue = new FifoLaneQueue('m', { visibilityTimeoutMs: 30_000, maxReceiveCount: 5 }, engine);
    queue.send('a1', {}, { groupId: 'a', deduplicationId: 'a1' });
    queue.send('a2', {}, { groupId: 'a', deduplicationId: 'a2' });
    queue.send('b1', {}, { groupId: 'b', deduplicationId: 'b1' });
    expect(queue.send('a1 again', {}, { groupId: 'a', deduplicationId: 'a1' }).deduplicated).toBe(true);
    const first = queue.receive(1);
    expect(first.map((r) => r.message.body)).toEqual(['a1']);
    expect(queue.receive(10).map((r) => r.message.body)).toEqual(['b1']);
    expect(queue.receive(10)).toEqual([]);
    queue.delete((first[0] as { receiptHandle: string }).receiptHandle);
    expect(queue.receive(10).map((r) => r.message.body)).toEqual(['a2']);
  });

  it('a standard message comes back after its visibility timeout and goes to the DLQ past maxReceiveCount', async () => {
    const engine = new Engine(START, { wholeMilliseconds: true });
    const queue = new StandardLaneQueue('s', { visibilityTimeoutMs: 1_000, maxReceiveCount: 2 }, engine);
    queue.send('x', {});
    expect(queue.receive(10)).toHaveLength(1);
    await engine.run({ untilMs: START + 1_000 });
    expect(queue.receive(10)).toHaveLength(1);
    await engine.run({ untilMs: START + 2_000 });
    expect(queue.receive(10)).toHaveLength(0);
    expect(queue.deadLettered).toBe(1);
    expect(queue.backlog).toBe(0);
  });
});

describe('SQS fair queues (the status lane)', () => {
  const fairQueue = (fair = true) => {
    const engine = new Engine(START, { wholeMilliseconds: true });
    const queue = new StandardLaneQueue('s', { visibilityTimeoutMs: 600_000, maxReceiveCount: 10 }, engine, {
      fair,
    });
    const send = (group: string | undefined, ...bodies: string[]) => {
      for (const body of bodies) queue.send(body, {}, group);
    };
    const take = (count: number) => queue.receive(count).map((received) => received.message.body);
    const later = async (ms: number) => {
      engine.after(ms, () => undefined);
      await engine.run({ untilMs: engine.now + ms });
    };
    return { engine, queue, send, take, later };
  };
  const many = (prefix: string, count: number) => Array.from({ length: count }, (_, i) => `${prefix}${i}`);

  it(`serves quiet tenants first while one has ${FAIR_QUEUE.minimumInFlight} or more in flight and over a tenth of the queue's; without fairness, in the queue's order`, () => {
    for (const fair of [true, false]) {
      const { queue, send, take } = fairQueue(fair);
      send('campaign', ...many('c', 40));
      send('chat', 'a1', 'a2');
      send(undefined, 'u1');
      // 29 in flight: not yet noisy, the queue's order.
      expect(take(29)).toEqual(many('c', 29));
      expect(take(1)).toEqual(['c29']);
      expect(queue.tenant('campaign')).toMatchObject({ inFlight: 30, noisy: false });
      expect(take(5)).toEqual(fair ? ['a1', 'a2', 'u1', 'c30', 'c31'] : ['c30', 'c31', 'c32', 'c33', 'c34']);
      expect(queue.tenant('campaign')?.noisy).toBe(fair);
    }
  });

  it('flags a tenant over a tenth of the recent processing time, however few it has in flight, until its backlog is empty', async () => {
    const { queue, send, take, later } = fairQueue();
    send('slow', 's1');
    const [slow] = queue.receive(1) as [Received];
    await later(10_000);
    queue.delete(slow.receiptHandle);
    send('fast', 'f1');
    const [fast] = queue.receive(1) as [Received];
    await later(10);
    queue.delete(fast.receiptHandle);
    send('slow', 's2');
    send('fast', 'f2');
    expect(take(1)).toEqual(['f2']);
    expect(queue.tenant('slow')).toMatchObject({ inFlight: 0, noisy: true });
    // Its backlog empty, it is quiet; once its processing has left the window, it is not flagged again.
    expect(take(1)).toEqual(['s2']);
    expect(queue.tenant('slow')?.noisy).toBe(false);
    await later(FAIR_QUEUE.processingWindowMs);
    send('slow', 's3');
    send('fast', 'f3');
    expect(take(1)).toEqual(['s3']);
  });

  it('hands out the noisy tenant with the fewest messages in flight first when no quiet one waits', () => {
    const { queue, send, take } = fairQueue();
    send('x', ...many('x', 40));
    expect(take(40)).toHaveLength(40);
    send('y', ...many('y', 30));
    expect(take(30)).toHaveLength(30);
    send('x', 'x-late');
    send('y', 'y-late');
    expect(take(1)).toEqual(['y-late']);
    expect(take(1)).toEqual(['x-late']);
    expect([queue.tenant('x')?.inFlight, queue.tenant('y')?.inFlight]).toEqual([41, 31]);
  });

  it(`takes a noisy tenant for quiet once it has sent nothing for ${FAIR_QUEUE.quietAfterMs / 60_000} minutes, backlog or not`, async () => {
    const { queue, send, take, later } = fairQueue();
    send('campaign', ...many('c', 40));
    expect(take(30)).toHaveLength(30);
    send('chat', 'q1');
    expect(take(1)).toEqual(['q1']);
    expect(queue.tenant('campaign')?.noisy).toBe(true);
    await later(FAIR_QUEUE.quietAfterMs - 1);
    send('chat', 'q2');
    expect(take(1)).toEqual(['q2']);
    await later(1);
    send('chat', 'q3');
    expect(take(2)).toEqual(['c30', 'c31']);
    expect(queue.tenant('campaign')).toMatchObject({ visible: 8, inFlight: 32, noisy: false });
  });

  it('takes each message without a MessageGroupId for a tenant of its own, never noisy', () => {
    const { send, take } = fairQueue();
    send(undefined, ...many('u', 40));
    expect(take(40)).toHaveLength(40);
    send(undefined, 'u-late');
    send('chat', 'a1');
    expect(take(2)).toEqual(['u-late', 'a1']);
  });

  it("gets each SendMessageBatch entry's MessageGroupId from the SDK", async () => {
    const engine = new Engine(START, { wholeMilliseconds: true });
    const service = new SqsService(
      engine,
      new Latency({ p50Ms: 1, p99Ms: 2, source: 'test' }, new SeededRandom(3)),
    );
    const queue = new StandardLaneQueue('s', { visibilityTimeoutMs: 1_000, maxReceiveCount: 5 }, engine);
    const url = 'https://sqs.us-east-1.amazonaws.com/000000000000/deliveries';
    service.addQueue(url, queue);
    const sent = scaleSqsClient(service).send(
      new SendMessageBatchCommand({
        QueueUrl: url,
        Entries: [
          { Id: 'm0', MessageBody: 'a', MessageGroupId: '106540352242901' },
          { Id: 'm1', MessageBody: 'b', MessageGroupId: '106540352242901' },
          { Id: 'm2', MessageBody: 'c' },
        ],
      }),
    );
    await engine.run();
    expect((await sent).Successful).toHaveLength(3);
    expect(queue.tenant('106540352242901')).toMatchObject({ visible: 2, inFlight: 0 });
    expect(queue.visible).toBe(3);
  });
});

describe('SQS event source', () => {
  it(`starts at ${EVENT_SOURCE_INITIAL_CONCURRENCY} pollers and adds up to ${EVENT_SOURCE_CONCURRENCY_ADDED_PER_MINUTE} a minute while messages wait`, async () => {
    const engine = new Engine(START, { wholeMilliseconds: true });
    const queue = new StandardLaneQueue('s', { visibilityTimeoutMs: 600_000, maxReceiveCount: 10 }, engine);
    for (let index = 0; index < 200_000; index++) queue.send(`m${index}`, {});
    const random = new SeededRandom(5);
    const fast = new Latency({ p50Ms: 1, p99Ms: 2, source: 'test' }, random);
    const source = new EventSource({
      name: 'consumer',
      engine,
      queue,
      queueArn: 'arn:aws:sqs:us-east-1:000000000000:s',
      account: new LambdaAccount(1_000),
      // A slow consumer: every poller stays busy, so the source keeps adding pollers.
      batchFunction: async () => {
        await engine.sleep(5_000);
        return { batchItemFailures: [] };
      },
      batchSize: 10,
      batchingWindowMs: 0,
      maxConcurrency: 1_000,
      functionTimeoutMs: 30_000,
      cpuMsPerRecord: 0,
      latency: { receive: fast, invoke: fast },
    });
    source.start();
    expect(source.pollers).toBe(EVENT_SOURCE_INITIAL_CONCURRENCY);
    await engine.run({ untilMs: START + 60_500 });
    source.stop();
    expect(source.pollers).toBe(EVENT_SOURCE_INITIAL_CONCURRENCY + EVENT_SOURCE_CONCURRENCY_ADDED_PER_MINUTE);
  });
});

describe('traffic', () => {
  const generator = new TrafficGenerator(
    [{ index: 0, outboundPerSecond: 20, inboundPerSecond: 200, conversations: 20 }],
    new SeededRandom(1),
  );
  const events = [0, 1000, 2000].flatMap((startMs) => generator.second(startMs));
  const extracted = (lane: 'message' | 'status') =>
    events
      .filter((event) => event.lane === lane)
      .flatMap((event) => {
        const extraction = extractEvents(event.body);
        return extraction.ok ? extraction.events : [];
      });
  const hasMember = (event: WebhookEvent, member: string) => typeof event.payload[member] === 'string';

  it('has username customers, and customers whose phone number comes and goes, each one conversation', () => {
    const conversations = new Map<string, WebhookEvent[]>();
    for (const message of extracted('message')) {
      const id = conversationOf(message);
      conversations.set(id, [...(conversations.get(id) ?? []), message]);
    }
    const byBsuid = [...conversations].filter(([id]) => id.includes(':US.')).map(([, messages]) => messages);
    // Of 20 customers, 4 by their BSUID alone, 4 whose phone number comes and goes, 12 by their phone number.
    expect(conversations.size).toBe(20);
    expect(byBsuid).toHaveLength(8);
    const withPhone = byBsuid.map(
      (messages) => messages.filter((message) => hasMember(message, 'from')).length,
    );
    expect(withPhone.filter((count) => count === 0)).toHaveLength(4);
    for (const [index, count] of withPhone.entries()) {
      if (count > 0) expect(count).toBeLessThan(byBsuid[index]?.length ?? 0);
    }
  });

  it("names a status's recipient by the BSUID alone for a username customer", () => {
    const statuses = extracted('status');
    const byUserIdAlone = statuses.filter(
      (status) => hasMember(status, 'recipient_user_id') && !hasMember(status, 'recipient_id'),
    );
    expect(byUserIdAlone.length).toBeGreaterThan(0);
    expect(byUserIdAlone.length).toBeLessThan(statuses.length);
  });
});
