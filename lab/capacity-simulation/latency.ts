/**
 * Latency distributions of the AWS calls on a webhook's path, each a log-normal fitted to a median and a p99.
 * AWS publishes no percentiles for these APIs; each figure below is the public order of magnitude it cites,
 * the tail an assumption of this model (docs/capacity.md, "Simulation": what is modelled).
 */

import type { SeededRandom } from '../../cli/local/seeded-random.ts';
import { EVENT_SOURCE_SQS_CALL_MS, LAMBDA_INVOKE_MS } from '../../contract/capacity.ts';

export interface LatencyFigure {
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly source: string;
}

/** z of the 99th percentile of the standard normal. */
const Z99 = 2.326;

export const LATENCIES = {
  /** "Single-digit millisecond performance at any scale." https://aws.amazon.com/dynamodb/ */
  dynamoDbWrite: { p50Ms: 4, p99Ms: 15, source: 'https://aws.amazon.com/dynamodb/' },
  /**
   * SendMessageBatch from a Lambda in the same Region: tens of milliseconds at most in published measurements
   * (SoftwareMill's SQS benchmarks). https://softwaremill.com/amazon-sqs-performance-latency/
   */
  sqsSend: { p50Ms: 8, p99Ms: 40, source: 'https://softwaremill.com/amazon-sqs-performance-latency/' },
  /** The event source's ReceiveMessage and DeleteMessageBatch, the same service and Region. */
  sqsReceive: {
    p50Ms: EVENT_SOURCE_SQS_CALL_MS,
    p99Ms: 40,
    source: 'https://softwaremill.com/amazon-sqs-performance-latency/',
  },
  /**
   * HTTP API's own overhead before and after the integration: a few milliseconds (API Gateway's
   * `Latency − IntegrationLatency` metric). https://docs.aws.amazon.com/apigateway/latest/developerguide/http-api-metrics.html
   */
  apiGateway: {
    p50Ms: 4,
    p99Ms: 15,
    source: 'https://docs.aws.amazon.com/apigateway/latest/developerguide/http-api-metrics.html',
  },
  /** A warm Lambda invoke, from the event source or API Gateway to the handler. https://docs.aws.amazon.com/lambda/latest/dg/lambda-runtime-environment.html */
  lambdaInvoke: {
    p50Ms: LAMBDA_INVOKE_MS,
    p99Ms: 10,
    source: 'https://docs.aws.amazon.com/lambda/latest/dg/lambda-runtime-environment.html',
  },
} as const satisfies Record<string, LatencyFigure>;

export type LatencyName = keyof typeof LATENCIES;

/** Draws from a log-normal with the figure's median and p99. */
export class Latency {
  readonly #mu: number;
  readonly #sigma: number;
  readonly #random: SeededRandom;

  constructor(figure: LatencyFigure, random: SeededRandom) {
    this.#mu = Math.log(figure.p50Ms);
    this.#sigma = Math.log(figure.p99Ms / figure.p50Ms) / Z99;
    this.#random = random;
  }

  draw(): number {
    // Box–Muller; 1 − u keeps the logarithm finite.
    const u = 1 - this.#random.next();
    const v = this.#random.next();
    const z = Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
    return Math.exp(this.#mu + this.#sigma * z);
  }
}

export function latencies(random: SeededRandom): Record<LatencyName, Latency> {
  const entries = Object.entries(LATENCIES).map(
    ([name, figure]) => [name, new Latency(figure, random.fork(`latency:${name}`))] as const,
  );
  return Object.fromEntries(entries) as Record<LatencyName, Latency>;
}
