/**
 * The defaults the pages about deploying and sizing state are the code's. README.md: the local port, Meta's
 * retry window, the FIFO window, the secret's default name and the default peak. docs/deploy.md: the
 * archive's retention and the queue retention's bounds (the first defaults this file checked), the default
 * stack and secret names, the generated verify token, the secret cache, the alarm period and the archive
 * alarms, log retention, the capacity defaults, the limits `cdk synth` refuses and the SDK clients' timeouts
 * (its alarm table is test/infra/monitoring.test.ts's, its alarm counts test/infra/subscribers.test.ts's).
 * docs/capacity.md: the prose around its generated regions. The other pages: stated-defaults-*.test.ts.
 */
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { describe, expect, it } from 'vitest';
import { TERMINAL_WIDTH } from '../../../cli/capacity/report-text.ts';
import { DEFAULT_PORT } from '../../../cli/local/local-stack-api.ts';
import { customerKindOf } from '../../../cli/meta-traffic/customers.ts';
import { DEFAULT_ARCHIVE_RETENTION_DAYS } from '../../../contract/archive.ts';
import {
  ARCHIVER_BATCHING_WINDOW_SECONDS,
  ARCHIVER_MAX_RECEIVE_COUNT,
} from '../../../contract/archiver-settings.ts';
import {
  DEFAULT_EXPECTED_PEAK,
  META_UPGRADED_MESSAGES_PER_SECOND,
  peakTraffic,
  slowestOf,
} from '../../../contract/capacity.ts';
import { FIFO_MAX_BATCH_SIZE } from '../../../contract/lanes.ts';
import {
  DEFAULT_SETTINGS,
  leaseMarginMsProblem,
  MAX_QUEUE_RETENTION_DAYS,
  META_RETRY_WINDOW_DAYS,
  MIN_MAX_RECEIVE_COUNT,
  MIN_QUEUE_RETENTION_DAYS,
  MIN_RETENTION_DAYS,
  VISIBILITY_TIMEOUT_FACTOR,
} from '../../../contract/settings.ts';
import { SDK_TIMEOUTS } from '../../../functions/commons/sdk-client-config.ts';
import { SECRETS_MAX_AGE_SECONDS } from '../../../functions/receiver/webhook-secrets.ts';
import { ALARM_DEFAULTS, DEFAULT_LOG_RETENTION, WEBHOOK_SECRET_DEFAULTS } from '../../../lib/defaults.ts';
import { ARCHIVE_BACKLOG_AGE_SECONDS } from '../../../lib/monitoring/archive-alarms.ts';
import {
  DEFAULT_STACK_NAME,
  FIFO_DEDUPLICATION_MINUTES,
  inWords,
  prose,
  readFile,
  sourceMatch,
  sourceNumber,
} from './stated-defaults-support.ts';

/** The default peak in words: `one number at Meta's top tier` (and the top tier is the upgraded one). */
function defaultPeakInWords(): string {
  expect(DEFAULT_EXPECTED_PEAK.messagesPerSecond).toBe(META_UPGRADED_MESSAGES_PER_SECOND);
  const { numbers } = peakTraffic(DEFAULT_EXPECTED_PEAK);
  return `${inWords(numbers)} number${numbers === 1 ? '' : 's'} at Meta's top tier`;
}

describe("README.md's stated defaults", () => {
  const readme = prose('README.md');

  it("states the local stack's port, Meta's retry window and the FIFO window", () => {
    expect(readme).toContain(`receiver + consumers, on :${DEFAULT_PORT}`);
    expect(readme).toContain(`<http://localhost:${DEFAULT_PORT}/> is its live dashboard`);
    expect(readme).toContain(`is retried for up to ${inWords(META_RETRY_WINDOW_DAYS)} days`);
    expect(readme).toContain(
      `the message lane's FIFO queue absorbed it (within ${FIFO_DEDUPLICATION_MINUTES} minutes)`,
    );
  });

  it("names the default stack's secret and the peak the stack is sized for without `expectedPeak`", () => {
    expect(readme).toContain(`--secret-id ${DEFAULT_STACK_NAME}/Webhook`);
    expect(readme).toContain(`sized for ${defaultPeakInWords()} unless you declare \`expectedPeak\``);
  });
});

describe("docs/deploy.md's stated defaults", () => {
  const deploy = prose('docs/deploy.md');

  it("states the archive's retention, the queue retention's bounds and default as the code has them", () => {
    expect(deploy).toContain(
      `{ archive: { retentionDays: 90 } }); // default ${DEFAULT_ARCHIVE_RETENTION_DAYS}`,
    );
    expect(deploy).toContain(
      `\`queueRetentionDays\` below ${MIN_QUEUE_RETENTION_DAYS} (or above SQS's ${MAX_QUEUE_RETENTION_DAYS}; default ${DEFAULT_SETTINGS.queueRetentionDays})`,
    );
    const least = sourceMatch('lib/validate-props.ts', /whole number of days, at least (\d+);/);
    expect(deploy).toContain(`(the bucket's lifecycle expiry of \`deliveries/\`, at least ${least})`);
  });

  it("states the CDK app's default stack name, and the secret named after it, as bin/app.ts has them", () => {
    expect(deploy).toContain(`another stack name (default \`${DEFAULT_STACK_NAME}\`)`);
    expect(deploy).toContain(`(default \`${DEFAULT_STACK_NAME}/Webhook\`)`);
    expect(deploy).toContain(`SECRET=${DEFAULT_STACK_NAME}/Webhook # the WebhookSecretName output`);
  });

  it("states the generated verify token's length and how long receivers cache the secret", () => {
    const { passwordLength } = WEBHOOK_SECRET_DEFAULTS.generateSecretString;
    expect(deploy).toContain(`{"appSecrets": [], "verifyToken": "<${passwordLength} random characters>"}`);
    const minutes = SECRETS_MAX_AGE_SECONDS / 60;
    expect(deploy).toContain(
      `The receiver caches the secret for ${minutes} minutes per Lambda container. If the URL was already called before you set it, either wait ${minutes} minutes`,
    );
    expect(deploy).toContain(`Make warm receivers reload it now instead of within ${minutes} minutes`);
  });

  it('states the FIFO window, the alarm period and log retention', () => {
    expect(deploy).toContain(
      `absorbs a repeat that arrives within ${FIFO_DEDUPLICATION_MINUTES} minutes of the first before any claim sees it`,
    );
    expect(deploy).toContain(
      `"period" is \`alarmThresholds.period\`, [${ALARM_DEFAULTS.period.toMinutes()}] minutes by default`,
    );
    const retention = Object.entries(RetentionDays).find(([, days]) => days === DEFAULT_LOG_RETENTION)?.[0];
    const [count = '', unit = ''] = (retention ?? '').toLowerCase().split('_');
    const number = Array.from({ length: 20 }, (_, n) => inWords(n)).indexOf(count);
    expect(deploy).toContain(`they expire by retention (${number} ${unit})`);
  });

  it("states the archive alarms' thresholds and the archive queue's retention", () => {
    const periods = sourceNumber('lib/monitoring/archive-alarms.ts', 'ARCHIVE_BACKLOG_EVALUATION_PERIODS');
    expect(deploy).toContain(
      `older than ${inWords(ARCHIVE_BACKLOG_AGE_SECONDS / ARCHIVER_BATCHING_WINDOW_SECONDS)} batching windows (\`ARCHIVE_BACKLOG_AGE_SECONDS\`) in ${inWords(periods)} one-minute periods`,
    );
    expect(deploy).toContain(
      `the archive DLQ holds a message the archiver failed on ${inWords(ARCHIVER_MAX_RECEIVE_COUNT)} times`,
    );
    // lib/builders/archive.ts keeps the archive queue for the SQS maximum.
    expect(sourceMatch('lib/builders/archive.ts', /retentionPeriod: Duration\.days\((\w+)\)/)).toBe(
      'MAX_QUEUE_RETENTION_DAYS',
    );
    expect(deploy).toContain(
      `none is lost while the archive queue keeps them (${MAX_QUEUE_RETENTION_DAYS} days)`,
    );
  });

  it('states the capacity defaults: the inbound rate, the default peak', () => {
    const { outboundPerSecond, inboundPerSecond } = peakTraffic({ messagesPerSecond: 7 });
    expect(inboundPerSecond).toBe(outboundPerSecond); // "as many as outbound"
    expect(deploy).toContain('inbound messages per second per number (default: as many as outbound)');
    expect(deploy).toContain(`Without \`expectedPeak\` the construct sizes for ${defaultPeakInWords()}`);
  });

  it('states the limits synth and the consumer refuse, as contract/settings.ts has them', () => {
    expect(deploy).toContain(
      `consumerTimeoutSeconds: 60, // visibility timeout follows: ${VISIBILITY_TIMEOUT_FACTOR} × 60 + batching window`,
    );
    expect(deploy).toContain(
      `the default outlasts Meta's ${META_RETRY_WINDOW_DAYS} days of retries plus the retry budget`,
    );
    expect(deploy).toContain(
      `a retention shorter than Meta's ${META_RETRY_WINDOW_DAYS} days plus the subscriber's longest retry budget, a visibility timeout below ${VISIBILITY_TIMEOUT_FACTOR} × the consumer timeout plus the batching window, \`maxReceiveCount\` below ${MIN_MAX_RECEIVE_COUNT}`,
    );
    const leastMargin = [0, -1, 1].find(
      (margin) =>
        leaseMarginMsProblem(margin) === undefined && leaseMarginMsProblem(margin - 1e-9) !== undefined,
    );
    expect(deploy).toContain(
      `(retention at least ${MIN_RETENTION_DAYS} days, a finite lease margin of at least ${leastMargin})`,
    );
  });

  it("states the SDK clients' timeouts and attempts as functions/commons/sdk-client-config.ts has them", () => {
    const s = (ms: number) => `${ms / 1000} s`;
    const dynamoDb = SDK_TIMEOUTS.consumerDynamoDb;
    const sqs = SDK_TIMEOUTS.consumerSqs;
    const secrets = SDK_TIMEOUTS.receiverSecretsManager;
    for (const same of [SDK_TIMEOUTS.receiverSqs, secrets]) {
      expect([same.connectionTimeoutMs, same.requestTimeoutMs]).toEqual([
        sqs.connectionTimeoutMs,
        sqs.requestTimeoutMs,
      ]);
    }
    expect(deploy).toContain(
      `DynamoDB ${s(dynamoDb.connectionTimeoutMs)} / ${s(dynamoDb.requestTimeoutMs)} with ${dynamoDb.maxAttempts} attempts, SQS and Secrets Manager ${s(sqs.connectionTimeoutMs)} / ${s(sqs.requestTimeoutMs)}`,
    );
  });

  it('names the file that documents every prop with its default', () => {
    const file = /Every prop is documented with its default in `([^`]+)`/.exec(deploy)?.[1] ?? '';
    expect(readFile(file).includes('export interface WhatsAppWebhookDedupProps {'), file).toBe(true);
  });
});

describe("docs/capacity.md's stated defaults, outside its generated regions", () => {
  const capacity = prose('docs/capacity.md');

  it("states the report's width, the default inbound rate and the FIFO batch", () => {
    expect(capacity).toContain(`(within ${TERMINAL_WIDTH} columns, in colour on a TTY`);
    const { outboundPerSecond, inboundPerSecond } = peakTraffic({ messagesPerSecond: 7 });
    expect(inboundPerSecond).toBe(outboundPerSecond);
    expect(capacity).toContain('The inbound rate defaults to the outbound one');
    expect(capacity).toContain(`no batching window, batches of at most ${inWords(FIFO_MAX_BATCH_SIZE)})`);
    const batch = DEFAULT_SETTINGS.batchSize;
    expect(capacity).toContain(
      `the slowest of n records takes H(n) times the mean (${slowestOf(batch).toFixed(1)} times for ${inWords(batch)})`,
    );
  });

  it("states the queues' windows the simulation's memory waits for, and the customers' mix", () => {
    const visibilityMinutes = Math.round(DEFAULT_SETTINGS.visibilityTimeoutSeconds / 60);
    expect(capacity).toContain(
      `(the FIFO deduplication's ${FIFO_DEDUPLICATION_MINUTES} minutes, the visibility timeout's ${visibilityMinutes})`,
    );
    const kinds = Array.from({ length: 10 }, (_, serial) => customerKindOf(serial));
    const count = (kind: string) => inWords(kinds.filter((k) => k === kind).length);
    expect(capacity).toContain(
      `of every ten, ${count('username')} by their BSUID alone, ${count('phone-comes-and-goes')} by their BSUID with the phone number in every other event, ${count('phone')} by their phone number`,
    );
  });
});
