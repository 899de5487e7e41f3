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
import {
  PARTITION_WRITE_UNITS,
  PEAK_ADAPTATION_MS,
  TableThroughput,
} from '../../capacity-simulation/dynamodb-throughput.ts';
import { EventSource } from '../../capacity-simulation/event-source.ts';
import { LambdaAccount } from '../../capacity-simulation/lambda-account.ts';
import { FifoLaneQueue, StandardLaneQueue } from '../../capacity-simulation/lane-queues.ts';
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
