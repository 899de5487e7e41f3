/**
 * A consumer process for the kill test: the REAL Lambda handler (`functions/consumer.ts`, configured from the
 * environment exactly as in AWS) driven by the local SQS event source, until SIGKILL (or SIGTERM: a graceful
 * stop). Run with `node --import tsx test/support/consumer-worker.ts`.
 *
 * Env: everything the consumer reads (CLAIM_TABLE_NAME, QUARANTINE_QUEUE_URL, LEASE_MARGIN_MS,
 * LOCAL_EFFECTS_JOURNAL, AWS_ENDPOINT_URL_*), plus DELIVERY_QUEUE_URL, WORKER_FUNCTION_TIMEOUT_SECONDS,
 * WORKER_POLLERS and WORKER_BATCH_SIZE for the event source.
 */
import { SQSClient } from '@aws-sdk/client-sqs';
import { interceptLocalhostDns } from 'fauxqs';
import { createSqsEventSource } from '../../cli/local/sqs-event-source.ts';
import { ENV, getNumberFromEnv, getStringFromEnv } from '../../contract/environment.ts';

// fauxqs queue URLs name `sqs.<region>.localhost`, which an env-configured SQS client calls directly.
interceptLocalhostDns();
const { handler } = await import('../../functions/consumer.ts');

const source = createSqsEventSource({
  sqs: new SQSClient({}),
  queueUrl: getStringFromEnv(ENV.deliveryQueueUrl),
  handler,
  batchSize: getNumberFromEnv('WORKER_BATCH_SIZE', 10),
  maxBatchingWindowSeconds: 0,
  functionTimeoutSeconds: getNumberFromEnv('WORKER_FUNCTION_TIMEOUT_SECONDS', 1),
  pollers: getNumberFromEnv('WORKER_POLLERS', 2),
  waitTimeSeconds: 1,
  log: (line) => process.stderr.write(`${line}\n`),
  onInvocation: (report) =>
    process.stderr.write(
      `consumer-worker: invocation ${report.outcome} records=${report.records.length} ms=${report.durationMs}\n`,
    ),
});

process.on('SIGTERM', () => {
  void source.stop().then(() => process.exit(0));
});
await source.start();
process.stderr.write('consumer-worker: polling\n');
