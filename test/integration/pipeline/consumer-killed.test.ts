/**
 * A consumer killed mid-batch (SIGKILL), then a new one: SQS redelivers the killed worker's messages after the
 * visibility timeout, the new worker takes the lapsed claims over. Every event must be effected at least once,
 * and only events inside the effect→complete window (effect journalled, claim still `processing` at the
 * kill) may be effected twice. See docs/consumer.md.
 */
import { afterAll, afterEach, expect, it } from 'vitest';
import { type ConsumerWorker, startConsumerWorker } from '../../support/consumer-worker-process.ts';
import { envelope, inboundMessages, messagesChange } from '../../unit/consumer/webhook-bodies.ts';
import {
  createPipeline,
  type Pipeline,
  readEffects,
  restoreEnvironment,
  waitFor,
} from './pipeline-fixture.ts';

const DELIVERIES = 60;
const EVENTS_PER_DELIVERY = 3;
/** Early, within A's first invocations: far from the moment A's own records would come back to it. */
const KILL_AFTER_EFFECTS = 20;
/**
 * Visibility timeout = 6 × this = 12 s: longer than worker A lives after its first receive, so A never gets
 * its own records back (which would make A take over its own claims and blur what the kill did), short
 * enough for the test to stay in seconds.
 */
const FUNCTION_TIMEOUT_SECONDS = 2;

let pipeline: Pipeline | undefined;
const workers: ConsumerWorker[] = [];
afterEach(async () => {
  await Promise.all(workers.map((worker) => worker.kill()));
  await pipeline?.close();
});
afterAll(() => restoreEnvironment());

function startWorker(p: Pipeline): ConsumerWorker {
  const worker = startConsumerWorker(p, { functionTimeoutSeconds: FUNCTION_TIMEOUT_SECONDS });
  workers.push(worker);
  return worker;
}

function total(effects: Map<string, number>): number {
  return [...effects.values()].reduce((sum, n) => sum + n, 0);
}

const phases: string[] = [];
const mark = (label: string, since: number) => phases.push(`${label} ${Date.now() - since} ms`);

it('effects every event after a SIGKILL mid-batch, twice only inside the effect→complete window', async () => {
  pipeline = await createPipeline('killed', {
    consumerTimeoutSeconds: FUNCTION_TIMEOUT_SECONDS,
    leaseMarginMs: 500,
  });
  const p = pipeline;
  // The killed worker's records come back after the visibility timeout; its leases (invocation deadline +
  // 0.5 s) have lapsed long before, so worker B takes those claims over.
  expect(p.settings.visibilityTimeoutSeconds).toBe(6 * FUNCTION_TIMEOUT_SECONDS);

  const t0 = Date.now();
  const messages = inboundMessages(DELIVERIES * EVENTS_PER_DELIVERY, 'kill');
  const keys = messages.map((m) => `msg:${m.id}`);
  for (let i = 0; i < DELIVERIES; i += 25) {
    const answers = await Promise.all(
      Array.from({ length: Math.min(25, DELIVERIES - i) }, (_, j) => {
        const first = (i + j) * EVENTS_PER_DELIVERY;
        return p.post(envelope([messagesChange(messages.slice(first, first + EVENTS_PER_DELIVERY))]));
      }),
    );
    expect(answers.every((answer) => answer.statusCode === 200)).toBe(true);
  }
  expect(await p.queueDepth()).toBe(DELIVERIES);
  mark('seeded', t0);

  // Worker A: killed once it has effected KILL_AFTER_EFFECTS events.
  const a = startWorker(p);
  let firstEffectAt: number | undefined;
  await waitFor(
    () => {
      const effected = total(readEffects(p.journalPath));
      if (effected > 0) firstEffectAt ??= Date.now();
      return effected >= KILL_AFTER_EFFECTS;
    },
    30_000,
    () => `worker A effected ${total(readEffects(p.journalPath))} events; stderr: ${a.stderr()}`,
  );
  mark('A killed', t0);
  a.child.kill('SIGKILL');
  const killedAfterMs = Date.now() - (firstEffectAt ?? Date.now());
  await a.exited;
  expect(a.child.signalCode).toBe('SIGKILL');
  // A write that was already on the wire when the signal landed is still applied by DynamoDB: let such
  // requests settle before reading what the kill left behind.
  await new Promise((resolve) => setTimeout(resolve, 1000));
  const effectedByA = readEffects(p.journalPath);
  const claimsAtKill = await p.claims();
  const processingAtKill = new Set(
    [...claimsAtKill].filter(([, state]) => state === 'processing').map(([pk]) => pk),
  );
  const inWindow = new Set([...effectedByA.keys()].filter((key) => processingAtKill.has(key)));
  expect(total(effectedByA)).toBeLessThan(keys.length);
  // Precondition of the exactness check below: A was killed before any of its records could come back to it.
  expect(killedAfterMs).toBeLessThan(p.settings.visibilityTimeoutSeconds * 1000);

  // Worker B: a fresh process; it gets the rest at once and A's in-flight records after the visibility timeout.
  const b = startWorker(p);
  await waitFor(
    async () => keys.every((key) => readEffects(p.journalPath).has(key)) && (await p.queueDepth()) === 0,
    30_000,
    () =>
      `${keys.filter((key) => !readEffects(p.journalPath).has(key)).length} events never effected; stderr: ${b.stderr()}`,
  );
  mark('B done', t0);
  b.child.kill('SIGTERM');
  await b.exited;

  const effects = readEffects(p.journalPath);
  const twice = [...effects].filter(([, count]) => count > 1).map(([key]) => key);
  console.info(
    `kill test: ${keys.length} events, killed after ${total(effectedByA)} effects, ` +
      `${processingAtKill.size} claims left processing, ${inWindow.size} in the effect→complete window, ` +
      `${twice.length} effected twice (A killed ${killedAfterMs} ms after its first effect; ` +
      `A invocations: ${a.invocationOutcomes()}; B invocations: ${b.invocationOutcomes()}; ` +
      `${phases.join(', ')})`,
  );

  // At least once: every event.
  expect(keys.filter((key) => !effects.has(key))).toEqual([]);
  expect([...effects.keys()].filter((key) => !keys.includes(key))).toEqual([]);
  // Exactly once outside the window: a second effect only for a claim the killed worker left `processing`
  // after its effect was journalled; never a third.
  expect(twice.filter((key) => !inWindow.has(key))).toEqual([]);
  expect([...effects.values()].every((count) => count <= 2)).toBe(true);

  // Every claim ends done.
  const claims = await p.claims();
  expect(keys.filter((key) => claims.get(key) !== 'done')).toEqual([]);
}, 90_000);
