/**
 * Runs the REAL consumer Lambda handler in a child process (test/support/consumer-worker.ts, the
 * local SQS event source around `functions/consumer.ts`) against a test pipeline, so that a test can SIGKILL
 * it mid-batch as a crashed or timed-out Lambda would vanish.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { dynamoDbEndpoint, TEST_CREDENTIALS, TEST_REGION } from './aws-clients.ts';
import type { Pipeline } from './pipeline-fixture.ts';

const WORKER = fileURLToPath(new URL('./consumer-worker.ts', import.meta.url));

export interface ConsumerWorkerOptions {
  readonly functionTimeoutSeconds: number;
  /** @default 2 */
  readonly pollers?: number;
  /** @default 10 */
  readonly batchSize?: number;
}

export interface ConsumerWorker {
  readonly child: ChildProcess;
  /** Everything the worker wrote to stderr so far (event-source lines, consumer errors). */
  stderr(): string;
  /** Resolves when the process has exited, whatever the reason. */
  readonly exited: Promise<void>;
  /** `success×3 timeout×1`: the invocations the worker reported. */
  invocationOutcomes(): string;
  /** SIGKILL unless already gone; resolves once it has exited. */
  kill(): Promise<void>;
}

export function startConsumerWorker(
  pipeline: Pick<Pipeline, 'env' | 'queues'>,
  options: ConsumerWorkerOptions,
): ConsumerWorker {
  let stderr = '';
  const child = spawn(process.execPath, ['--import', 'tsx', WORKER], {
    env: {
      PATH: process.env.PATH,
      ...pipeline.env,
      AWS_REGION: TEST_REGION,
      AWS_ACCESS_KEY_ID: TEST_CREDENTIALS.accessKeyId,
      AWS_SECRET_ACCESS_KEY: TEST_CREDENTIALS.secretAccessKey,
      AWS_ENDPOINT_URL_DYNAMODB: dynamoDbEndpoint(),
      AWS_ENDPOINT_URL_SQS: new URL(pipeline.queues.queueUrl).origin,
      POWERTOOLS_LOG_LEVEL: 'ERROR',
      POWERTOOLS_METRICS_DISABLED: 'true',
      WORKER_FUNCTION_TIMEOUT_SECONDS: String(options.functionTimeoutSeconds),
      WORKER_POLLERS: String(options.pollers ?? 2),
      WORKER_BATCH_SIZE: String(options.batchSize ?? 10),
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8');
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    child,
    stderr: () => stderr,
    exited,
    invocationOutcomes: () => invocationOutcomes(stderr),
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}

function invocationOutcomes(stderr: string): string {
  const counts = new Map<string, number>();
  for (const match of stderr.matchAll(/invocation (\S+) records=/g)) {
    counts.set(match[1] as string, (counts.get(match[1] as string) ?? 0) + 1);
  }
  return [...counts].map(([outcome, n]) => `${outcome}×${n}`).join(' ') || 'none';
}
