/**
 * This code's own CPU figures, measured by `npm run bench` (lab/bench/results.json): the receiver's time for a
 * one-update body (HMAC check, parse, fan-out to a stubbed queue client) and the consumer's Node CPU per event
 * (`consumer.ours.nodeCpuMsPerEvent`), each added to the virtual duration of the invocations that run them.
 * Measured on the bench machine (lab/bench/results.json `machine`), not on a Lambda of 512 MB.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';

interface BenchResults {
  readonly receiver: {
    readonly bodies: readonly { readonly updates: number; readonly msPerDelivery: number }[];
  };
  readonly consumer: { readonly ours: { readonly nodeCpuMsPerEvent: number } };
}

const results = JSON.parse(
  readFileSync(resolve(import.meta.dirname, '..', 'bench', 'results.json'), 'utf8'),
) as BenchResults;

const oneUpdate = results.receiver.bodies.find((body) => body.updates === 1);
if (oneUpdate === undefined) throw new Error('lab/bench/results.json has no one-update receiver figure');

export const BENCH_FIGURES = {
  /** `receiver.bodies[updates = 1].msPerDelivery`. */
  receiverCpuMsPerPost: oneUpdate.msPerDelivery,
  /** `consumer.ours.nodeCpuMsPerEvent`. */
  consumerCpuMsPerEvent: results.consumer.ours.nodeCpuMsPerEvent,
} as const;
