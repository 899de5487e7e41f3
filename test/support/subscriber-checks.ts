/** Checks shared by the several-subscriber integration tests (test/integration/subscribers). */
import { expect } from 'vitest';
import type { SqsEventSource } from '../../cli/local/sqs-event-source.ts';
import type { EventSourceOptions, Pipeline, PipelineSubscriber } from './pipeline-fixture.ts';

/** Starts every subscriber's consumer; subscriber name → its event source. */
export async function startEveryConsumer(
  pipeline: Pipeline,
  eventSource: (subscriber: PipelineSubscriber) => EventSourceOptions = () => ({}),
): Promise<Map<string, SqsEventSource>> {
  const sources = new Map<string, SqsEventSource>();
  for (const subscriber of pipeline.subscribers) {
    sources.set(subscriber.name, await subscriber.startConsumer(eventSource(subscriber)));
  }
  return sources;
}

/** Waits until every subscriber's queue is empty and its consumer idle. */
export async function drainEvery(sources: Map<string, SqsEventSource>, timeoutMs = 30_000): Promise<void> {
  await Promise.all([...sources.values()].map((source) => source.waitUntilDrained({ timeoutMs })));
}

/** Waits until one subscriber's queue is empty and its consumer idle, whatever the others do. */
export async function drainSubscriber(
  sources: Map<string, SqsEventSource>,
  name: string,
  timeoutMs = 30_000,
): Promise<void> {
  const source = sources.get(name);
  if (source === undefined) throw new Error(`No consumer started for ${name}.`);
  await source.waitUntilDrained({ timeoutMs });
}

/** Exactly these keys were effected, each once. `keys` come from ids the test made, not from the extractor. */
export function expectEveryKeyOnce(effects: Map<string, number>, keys: readonly string[], who: string): void {
  expect(keys.length).toBeGreaterThan(0);
  expect(Object.fromEntries(effects), who).toEqual(Object.fromEntries(keys.map((key) => [key, 1])));
}

/** No subscriber's DLQ and no quarantined body holds anything. */
export async function expectNothingDeadOrQuarantined(pipeline: Pipeline): Promise<void> {
  for (const subscriber of pipeline.subscribers) {
    expect(await subscriber.deadLetterDepth(), `${subscriber.name}'s DLQ`).toBe(0);
  }
  expect(await pipeline.drainQuarantine(), 'the quarantine queue').toEqual([]);
}
