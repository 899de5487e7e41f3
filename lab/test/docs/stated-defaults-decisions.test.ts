/**
 * The defaults and settings docs/decisions.md states are the code's. The page is a decision log, so most of
 * its numbers are measurements, history ("was 5", "the default 8") or facts about AWS and Meta, none checked
 * here; what is checked are the values the code runs with now: the key, nesting, message size, secret cache,
 * attribute, lease-return, status-rank and log-digest bounds; the retry defaults and the limits resolveSettings
 * keeps; the claims', queues' and quarantine's retentions; the ordered lane's budget and batch; the capacity
 * defaults; ops's hiding, exit codes and replay defaults; the pins, SDK timeouts and alarm settings; the Graph
 * API version, the smoke test's marks, the local stack's defaults; the model of Meta's retries; the archive's
 * settings; Lambda's runtime. The other pages: stated-defaults-*.test.ts beside this one.
 */
import { Stack } from 'aws-cdk-lib';
import { Queue } from 'aws-cdk-lib/aws-sqs';
import { describe, expect, it } from 'vitest';
import { DYNAMODB_LOCAL_PACKAGE_INTEGRITY } from '../../../cli/local/emulators/dynamodb-local.ts';
import { FAUXQS_VERSION } from '../../../cli/local/emulators/fauxqs-patch.ts';
import { DEFAULT_LOCAL_HOST, LOCAL_ENV } from '../../../cli/local/stack/local-config.ts';
import { SUBSCRIBERS_MODULE } from '../../../cli/local/stack/local-subscribers.ts';
import { compressedMetaRetries, META_RETRIES } from '../../../cli/meta-traffic/retries.ts';
import { EXIT_NOT_FOUND, OpsError, UsageError } from '../../../cli/ops/errors.ts';
import { DEFAULTS as DRILL_DEFAULTS } from '../../../cli/outage-drill/presets.ts';
import {
  ARCHIVE_QUEUE_VISIBILITY_TIMEOUT_SECONDS,
  ARCHIVER_BATCH_SIZE,
  ARCHIVER_BATCHING_WINDOW_SECONDS,
  ARCHIVER_MAX_RECEIVE_COUNT,
  ARCHIVER_TIMEOUT_SECONDS,
} from '../../../contract/archiver-settings.ts';
import {
  BURST_SECONDS_OF_PEAK,
  DEFAULT_EXPECTED_PEAK,
  MAX_SIZED_UTILISATION,
  META_UPGRADED_MESSAGES_PER_SECOND,
  POSTS_PER_INBOUND_MESSAGE,
  POSTS_PER_OUTBOUND_MESSAGE,
  peakTraffic,
  slowestOf,
} from '../../../contract/capacity.ts';
import { ENV } from '../../../contract/environment.ts';
import { recommendServers } from '../../../contract/erlang-c.ts';
import { MAX_SELECTED_IDS } from '../../../contract/event-origin.ts';
import {
  FIFO_MAX_BATCH_SIZE,
  LANES,
  MIN_ORDERED_LANE_OUTAGE_RIDDEN_OUT_SECONDS,
  ORDERED_MESSAGE_LANE_RETRY,
} from '../../../contract/lanes.ts';
import { GRAPH_API_VERSION } from '../../../contract/meta-graph-api.ts';
import { ConsumerNumberMetric } from '../../../contract/metric-names.ts';
import {
  MAX_RETRY_DELAY_SECONDS,
  MIN_OUTAGE_RIDDEN_OUT_SECONDS,
  outageRiddenOutSeconds,
  SQS_MAX_VISIBILITY_TIMEOUT_SECONDS,
} from '../../../contract/retry-budget.ts';
import {
  DEFAULT_SETTINGS,
  leaseMarginMsProblem,
  MAX_QUEUE_RETENTION_DAYS,
  META_RETRY_WINDOW_DAYS,
  MIN_QUEUE_RETENTION_DAYS,
  MIN_RETENTION_DAYS,
} from '../../../contract/settings.ts';
import { SMOKE_TEST_PHONE_NUMBER_ID, SMOKE_TEST_WAMID_PREFIX } from '../../../contract/smoke-test.ts';
import { MAX_STORED_KEY_BYTES } from '../../../functions/claims/storage-key.ts';
import { keyedDigest, LOG_DIGEST_PREFIX } from '../../../functions/commons/log-digest.ts';
import { SDK_TIMEOUTS } from '../../../functions/commons/sdk-client-config.ts';
import { secondsUntilLeaseEnds } from '../../../functions/consumer/in-flight.ts';
import { MAX_LOSSLESS_NESTING } from '../../../functions/events/parse-json.ts';
import { LEGACY_FAILED_RANK, STATUS_RANK } from '../../../functions/ledger/status-rank.ts';
import { commonAttributes } from '../../../functions/queue/outgoing-message.ts';
import { SECRETS_MAX_AGE_SECONDS } from '../../../functions/receiver/webhook-secrets.ts';
import { ARCHIVER_MAX_CONCURRENCY } from '../../../lib/builders/archive.ts';
import {
  ALARM_DEFAULTS,
  DEFAULT_CONSUMER_MEMORY_MB,
  LAMBDA_ARCHITECTURE,
  LAMBDA_RUNTIME,
  QUARANTINE_RETENTION_DAYS,
} from '../../../lib/defaults.ts';
import { ARCHIVE_BACKLOG_AGE_SECONDS } from '../../../lib/monitoring/archive-alarms.ts';
import { queueDepthGrowth } from '../../../lib/monitoring/metrics.ts';
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

/** A word as it starts a sentence or a heading: `Sixty`. */
const capitalised = (word: string) => `${word.charAt(0).toUpperCase()}${word.slice(1)}`;

const PARTS: Readonly<Record<number, string>> = { 2: 'a half', 3: 'a third', 4: 'a quarter', 5: 'a fifth' };

/** A share the page writes as a part (`0.2` → `a fifth`); any other fails its sentence. */
function partInWords(share: number): string {
  const whole = Math.round(1 / share);
  return Math.abs(share - 1 / whole) < 1e-9 && PARTS[whole] !== undefined
    ? PARTS[whole]
    : `${share} (no words for it in this test)`;
}

/** A delay of Meta's retry model as the page lists it: `15 s`, `1 min`. */
const delay = (ms: number) => (ms < 60_000 ? `${ms / 1000} s` : `${ms / 60_000} min`);

/** The claims' default retention is the floor for the default status lane's budget, rounded up to whole days. */
function retentionIsTheDefaultFloorRoundedUp(): void {
  expect(DEFAULT_SETTINGS.retentionDays).toBe(defaultRetentionFloorDays());
}

/** The archive queue keeps its messages for the SQS maximum (lib/builders/archive.ts). */
function archiveQueueKeepsTheMaximum(): void {
  expect(sourceMatch('lib/builders/archive.ts', /retentionPeriod: Duration\.days\((\w+)\)/)).toBe(
    'MAX_QUEUE_RETENTION_DAYS',
  );
}

describe("docs/decisions.md's stated defaults", () => {
  const decisions = prose('docs/decisions.md');

  describe('keys, parsing and the receiver', () => {
    it("states the stored key's bound, the nesting limit and the default message size", () => {
      expect(decisions).toContain(
        `### Keys above ${MAX_STORED_KEY_BYTES / 1024} KiB are stored as a prefix plus SHA-256`,
      );
      expect(decisions).toContain(`That path refuses nesting beyond ${MAX_LOSSLESS_NESTING} levels`);
      const mebibytes = DEFAULT_SETTINGS.maximumMessageSizeBytes / 1024 ** 2;
      expect(decisions).toContain(`### Queue messages default to ${mebibytes} MiB, the SQS maximum`);
      expect(decisions).toContain(
        `defaults to ${mebibytes} MiB. - **Consequences.** Nearly every body is one message`,
      );
    });

    it("states the secret cache, the local secrets' variable and the attributes' widest values", () => {
      expect(decisions).toContain(
        `Secrets Manager via Powertools Parameters (${SECRETS_MAX_AGE_SECONDS / 60}-minute cache); locally \`${ENV.appSecrets}\``,
      );
      const deliveryId = commonAttributes({ deliveryId: 'x'.repeat(500), receivedAt: '', retryDeadline: 0 })
        .deliveryId.StringValue;
      expect(decisions).toContain(
        `the message group as SQS takes it (at most ${longestGroupId()} ASCII characters), the delivery id is cut to ${deliveryId?.length} bytes of UTF-8`,
      );
    });
  });

  describe('the consumer', () => {
    it('states when an in-flight duplicate returns, and the status ranks old and new', () => {
      const extra = (secondsUntilLeaseEnds(10_000, 0) ?? Number.NaN) - 10;
      expect(decisions).toContain(
        `its record fails and returns ${inWords(extra)} second${extra === 1 ? '' : 's'} after the holder's lease ends`,
      );
      expect(decisions).toContain(`\`failed\` ranked ${LEGACY_FAILED_RANK}, above all`);
      expect(decisions).toContain(
        `**Decision: \`failed\` ranks ${STATUS_RANK.failed}**, between \`sent\` (${STATUS_RANK.sent}) and \`delivered\` (${STATUS_RANK.delivered}). Ranks only grow, so the rule is "rank below ${STATUS_RANK.delivered}"`,
      );
      expect(decisions).toContain(
        `**Decision: items with \`failed\` at rank ${LEGACY_FAILED_RANK} are read, not migrated**`,
      );
      expect(decisions).toContain(
        `An old worker writing rank ${LEGACY_FAILED_RANK} mid-deploy is read by the rule`,
      );
    });

    it("states that unhandled events are claimed by default, and the log digest's form", () => {
      const claimUnhandled = sourceMatch(
        'functions/consumer/create-consumer.ts',
        /getChoiceFromEnv\(ENV\.claimUnhandledEvents, \['true', 'false'\], '(\w+)', env\)/,
      );
      expect(decisions).toContain(`\`claimUnhandledEvents\` stays \`${claimUnhandled}\``);
      const characters = keyedDigest('key', 'value').length - LOG_DIGEST_PREFIX.length;
      expect(decisions).toContain(
        `Logs carry \`${LOG_DIGEST_PREFIX}\` and ${characters} base64url characters (${characters * 6} bits) of HMAC-SHA256`,
      );
    });
  });

  describe('retries and retention', () => {
    const { retryBaseDelaySeconds, retryMaxDelaySeconds, maxReceiveCount } = DEFAULT_SETTINGS;

    it('states the retry defaults, their variables, and the day they ride out', () => {
      const hours = retryMaxDelaySeconds / 3600;
      expect(decisions).toContain(
        `### Retry defaults: ${retryBaseDelaySeconds} s base, ${hours} h cap, ${maxReceiveCount} receives`,
      );
      // The count before it ("was …") is history: not checked.
      expect(decisions).toContain(
        `**Decision.** ${retryBaseDelaySeconds} s, ${hours} h, \`maxReceiveCount\` ${maxReceiveCount} (was `,
      );
      expect(decisions).toContain(
        `The delays reach the consumer as optional \`${ENV.retryBaseDelaySeconds}\` / \`${ENV.retryMaxDelaySeconds}\` in \`consumerEnvironment\`, like \`${ENV.statusLedger}\``,
      );
      expect(outageRiddenOutSeconds(DEFAULT_SETTINGS)).toBeGreaterThanOrEqual(MIN_OUTAGE_RIDDEN_OUT_SECONDS);
      expect(decisions).toContain(
        `${capitalised(inWords(maxReceiveCount))} receives ride out ${durationInWords(MIN_OUTAGE_RIDDEN_OUT_SECONDS)} at the shortest draws`,
      );
    });

    it('states the outage resolveSettings asks for and the longest delay it allows', () => {
      expect(decisions).toContain(
        `### resolveSettings refuses budgets that cannot ride out ${durationInWords(MIN_OUTAGE_RIDDEN_OUT_SECONDS)} or outlive a queue`,
      );
      expect(decisions).toContain(`under ${MIN_OUTAGE_RIDDEN_OUT_SECONDS / 3600} hours ridden out`);
      expect(decisions).toContain(
        `a cap above \`MAX_RETRY_DELAY_SECONDS\`, ${SQS_MAX_VISIBILITY_TIMEOUT_SECONDS / 3600} hours less ${(SQS_MAX_VISIBILITY_TIMEOUT_SECONDS - MAX_RETRY_DELAY_SECONDS) / 60} minutes`,
      );
    });

    it("states the claims' retention rule, the consumer's check and the default", () => {
      expect(decisions).toContain(
        `### Claim retention: Meta's ${META_RETRY_WINDOW_DAYS} days plus the longest retry budget`,
      );
      expect(decisions).toContain(
        `**Decision: retention ≥ ${META_RETRY_WINDOW_DAYS} days + the subscriber's longest lane budget**`,
      );
      expect(decisions).toContain(
        `The consumer, knowing only \`retentionDays\`, checks the ${MIN_RETENTION_DAYS} days`,
      );
      retentionIsTheDefaultFloorRoundedUp();
      expect(decisions).toContain(
        '**Decision: the default is that floor for the default settings, rounded up to whole days** (`DEFAULT_SETTINGS.retentionDays`)',
      );
    });
  });

  describe('subscribers and conversations', () => {
    it("states the quarantine queue's retention", () => {
      expect(decisions).toContain(
        `goes to one \`QuarantineQueue\` (${QUARANTINE_RETENTION_DAYS} days, no redrive)`,
      );
    });

    it("states the FIFO batch a record could wait behind and the ordered lane's retry budget", () => {
      expect(decisions).toContain(
        `so a slow conversation would delay up to ${inWords(FIFO_MAX_BATCH_SIZE - 1)} others`,
      );
      const { maxReceiveCount, retryBaseDelaySeconds, retryMaxDelaySeconds } = ORDERED_MESSAGE_LANE_RETRY;
      expect(decisions).toContain(
        `\`ORDERED_MESSAGE_LANE_RETRY\`: ${maxReceiveCount} receives, delays from ${retryBaseDelaySeconds} s doubling to ${retryMaxDelaySeconds / 60} min; \`resolveMessageLane\` refuses a budget not riding out ${MIN_ORDERED_LANE_OUTAGE_RIDDEN_OUT_SECONDS / 60} minutes`,
      );
    });

    it("states the wait metric's values per document and how often the local stack reads the FIFO count", () => {
      const values = sourceNumber('functions/consumer/consumer-metrics.ts', 'EMF_MAX_VALUES');
      expect(decisions).toContain(`one EMF document per invocation (${values} values each, as EMF allows)`);
      const sample = sourceNumber('cli/local/stack/local-stack.ts', 'QUEUE_SAMPLE_INTERVAL_MS') / 1000;
      expect(decisions).toContain(
        `Locally the patched fauxqs's count is read once ${durationInWords(sample)} per subscriber`,
      );
      expect(decisions).toContain(`The local count lags up to ${durationInWords(sample)}; CloudWatch's`);
    });
  });

  describe('capacity', () => {
    it('states the default peak, what the throttle carries and the concurrency floor', () => {
      expect(DEFAULT_EXPECTED_PEAK.messagesPerSecond).toBe(META_UPGRADED_MESSAGES_PER_SECOND);
      const { numbers, inboundPerSecond, outboundPerSecond } = peakTraffic(DEFAULT_EXPECTED_PEAK);
      const number = `number${numbers === 1 ? '' : 's'}`;
      expect(decisions).toContain(
        `### The defaults carry ${inWords(numbers)} ${number} at Meta's top tier, sized by the planner`,
      );
      expect(inboundPerSecond).toBe(outboundPerSecond); // "as many messages in as out"
      expect(decisions).toContain(
        `size for \`DEFAULT_EXPECTED_PEAK\` (${inWords(numbers)} top-tier ${number}, as many messages in as out)`,
      );
      expect(decisions).toContain(
        `(its POSTs: ${inWords(POSTS_PER_OUTBOUND_MESSAGE)} statuses per outbound message, ${inWords(POSTS_PER_INBOUND_MESSAGE)} per inbound, ${durationInWords(BURST_SECONDS_OF_PEAK)} of them as burst)`,
      );
      expect(decisions).toContain(
        `\`maxConcurrency\` ${DEFAULT_SETTINGS.maxConcurrency} (contract/settings.ts) is a floor`,
      );
      expect(decisions).toContain(
        `statuses outnumber messages (${inWords(POSTS_PER_OUTBOUND_MESSAGE)} per outbound message)`,
      );
    });

    it("states the slowest record of a default batch and the sized lanes' spare", () => {
      const batch = DEFAULT_SETTINGS.batchSize;
      expect(decisions).toContain(
        `(H(n) handler means for n exponential handlers: ${slowestOf(batch).toFixed(1)} for ${inWords(batch)})`,
      );
      expect(decisions).toContain(`### Sized lanes keep ${partInWords(1 - MAX_SIZED_UTILISATION)} spare`);
      expect(decisions).toContain(`that also meets \`MAX_SIZED_UTILISATION\` ${MAX_SIZED_UTILISATION}`);
      // A lane at that utilisation drains 1 / ρ times its mean.
      expect(decisions).toContain(
        `A catching-up lane writes at its drain rate, at least ${partInWords(1 / MAX_SIZED_UTILISATION - 1)} above the mean`,
      );
    });
  });

  describe('operations', () => {
    it("states how long dlq peek hides a record and ops's exit codes", () => {
      const peek = sourceNumber('cli/ops/commands/dlq.ts', 'PEEK_HIDE_SECONDS');
      expect(decisions).toContain(`Peeking is a receive (hidden at most ${peek} s)`);
      const usage = new UsageError('').exitCode;
      const failure = new OpsError('').exitCode;
      expect(decisions).toContain(
        `### Exit codes: ${usage} for usage, ${failure} for refusals and failures, ${EXIT_NOT_FOUND} for no claim`,
      );
      expect(decisions).toContain(
        `**Decision.** ${usage} for what the operator typed (bad arguments, an unknown key shape), ${failure} for refusals and failures`,
      );
      expect(decisions).toContain(`\`key\` with no claim exits ${EXIT_NOT_FOUND} (\`EXIT_NOT_FOUND\`)`);
    });
  });

  describe('infrastructure and tooling', () => {
    it("states DynamoDB Local's integrity check and fauxqs's pinned version", () => {
      const algorithm = DYNAMODB_LOCAL_PACKAGE_INTEGRITY.slice(
        0,
        DYNAMODB_LOCAL_PACKAGE_INTEGRITY.indexOf('-'),
      );
      expect(decisions).toContain(`tarball, verify its ${algorithm}, and keep only the emulator`);
      for (const sentence of [
        `### fauxqs ${FAUXQS_VERSION} is pinned and patched`,
        `**Decision.** Pin ${FAUXQS_VERSION} and patch it (\`patches/fauxqs+${FAUXQS_VERSION}.patch\``,
        `The patch fixes three deviations of fauxqs ${FAUXQS_VERSION}`,
        `and applies \`patches/fauxqs+${FAUXQS_VERSION}.patch\` with patch-package's parser`,
        `**Decision.** fauxqs ${FAUXQS_VERSION}'s S3 on the SQS endpoint`,
      ]) {
        expect(decisions).toContain(sentence);
      }
    });

    it("states the delivery queue's and its DLQ's retention and the floor resolveSettings keeps", () => {
      const { queueRetentionDays, deadLetterRetentionDays } = DEFAULT_SETTINGS;
      expect(queueRetentionDays).toBe(MAX_QUEUE_RETENTION_DAYS); // "the SQS maximum"
      expect(deadLetterRetentionDays).toBe(queueRetentionDays); // "the DLQ too"
      expect(decisions).toContain(
        `### The delivery queue keeps ${queueRetentionDays} days; less than ${MIN_QUEUE_RETENTION_DAYS} is refused`,
      );
      expect(decisions).toContain(
        `**Decision.** ${queueRetentionDays} days (the SQS maximum), the DLQ too; \`resolveSettings\` refuses less than ${MIN_QUEUE_RETENTION_DAYS}`,
      );
      expect(queueRetentionDays % 7).toBe(0);
      expect(decisions).toContain(
        `A stalled consumer has ${inWords(queueRetentionDays / 7)} weeks before SQS deletes anything`,
      );
    });

    it("states the checks a Lambda makes of single settings and the SDK clients' timeouts", () => {
      const leastMargin = [0, -1, 1].find(
        (margin) =>
          leaseMarginMsProblem(margin) === undefined && leaseMarginMsProblem(margin - 1e-9) !== undefined,
      );
      expect(decisions).toContain(
        `The Lambda checks single settings only (retention ≥ ${MIN_RETENTION_DAYS}, a finite margin ≥ ${leastMargin})`,
      );
      const s = (ms: number) => `${ms / 1000} s`;
      const { consumerDynamoDb, consumerSqs, receiverSqs, receiverSecretsManager } = SDK_TIMEOUTS;
      const connections = new Set(Object.values(SDK_TIMEOUTS).map((use) => use.connectionTimeoutMs));
      expect(connections.size).toBe(1); // "connection 1 s", for every client
      expect(receiverSqs.requestTimeoutMs).toBe(consumerSqs.requestTimeoutMs); // one request timeout for SQS
      expect(SDK_TIMEOUTS.consumerSecretsManager).toEqual(receiverSecretsManager); // one for Secrets Manager
      expect(decisions).toContain(
        `\`functions/commons/sdk-client-config.ts\`: connection ${s(consumerDynamoDb.connectionTimeoutMs)}; request ${s(consumerDynamoDb.requestTimeoutMs)} with ${consumerDynamoDb.maxAttempts} attempts for DynamoDB, ${s(consumerSqs.requestTimeoutMs)} for SQS (${receiverSqs.maxAttempts} attempt${receiverSqs.maxAttempts === 1 ? '' : 's'} in the receiver, whose queue adapter retries; ${consumerSqs.maxAttempts} in the consumer, whose visibility changes have no retry loop) and ${s(receiverSecretsManager.requestTimeoutMs)} with ${receiverSecretsManager.maxAttempts} attempts for Secrets Manager`,
      );
    });

    it("states the alarms' defaults: the first one, claim failures' periods and the DLQ arrivals' minute", () => {
      for (const never of [
        ALARM_DEFAULTS.consumerErrors,
        ALARM_DEFAULTS.consumerThrottles,
        ALARM_DEFAULTS.receiverErrors,
        ALARM_DEFAULTS.receiverThrottles,
        ALARM_DEFAULTS.completionFailures,
      ]) {
        expect(never).toBe(1); // "on the first one"
      }
      expect(decisions).toContain(
        'what should never happen (failed or throttled invocations, completion failures) on the first one',
      );
      expect(decisions).toContain(
        `claim failures over ${ALARM_DEFAULTS.claimFailuresEvaluationPeriods} periods`,
      );
      const growth = queueDepthGrowth(new Queue(new Stack(), 'Queue'), 'growth').period.toMinutes();
      expect(decisions).toContain(
        `DLQ arrivals also alarm on the \`DIFF\` of \`ApproximateNumberOfMessagesVisible\` over ${inWords(growth)} minute${growth === 1 ? '' : 's'}`,
      );
    });
  });

  describe('Meta, the smoke test and the local stack', () => {
    it('states the pinned Graph API version and the marks of the smoke test', () => {
      expect(decisions).toContain(
        `### Graph API calls: pinned ${GRAPH_API_VERSION}, a Bearer token, form parameters`,
      );
      expect(decisions).toContain(`**Decision.** ${GRAPH_API_VERSION} (newest when written), overridable`);
      expect(decisions).toContain(`**Decision.** The wamid is \`${SMOKE_TEST_WAMID_PREFIX}\``);
      expect(/^\d+$/.test(SMOKE_TEST_PHONE_NUMBER_ID)).toBe(false);
      expect(decisions).toContain('the phone number id non-numeric');
    });

    it('states where start reads the subscribers from and the address the local stack listens on', () => {
      expect(decisions).toContain(
        `\`start\` reads \`--subscribers PATH\`, else \`${LOCAL_ENV.subscribers}\`, else \`${SUBSCRIBERS_MODULE}\``,
      );
      expect(decisions).toContain(
        `**Decision: listen on ${DEFAULT_LOCAL_HOST} unless told otherwise** (\`${LOCAL_ENV.host}\` or \`--host\``,
      );
    });
  });

  describe('replay', () => {
    it("states replay's default rate, range end and retention fallback, and its progress lines", () => {
      const rate = sourceMatch('cli/ops/replay/replay-arguments.ts', /values\.rate === undefined \? (\w+) :/);
      expect(decisions).toContain(`\`--rate\` (default \`${rate}\`, deliveries per second`);
      const until = sourceMatch(
        'cli/ops/replay/replay-arguments.ts',
        /const until = values\.until \?\? '(\w+)';/,
      );
      expect(decisions).toContain(`\`--until\` defaults to \`${until}\``);
      const fallback = sourceMatch('cli/ops/commands/replay.ts', /retentionDays\(\)\) \?\? (\w+)\)/);
      expect(decisions).toContain(`\`${fallback}\` without a rule, as on fauxqs`);
      const seconds = sourceNumber('cli/ops/replay/replay-progress.ts', 'LINE_INTERVAL_MS') / 1000;
      expect(decisions).toContain(
        `### Replay progress: a bar on a terminal, a line every ${seconds} seconds otherwise`,
      );
      expect(decisions).toContain(`off a terminal, a line every ${seconds} seconds with an ETA`);
    });
  });

  describe('the capacity simulation', () => {
    it("states Meta's retries as cli/meta-traffic/retries.ts models them, and the drill's compressed ones", () => {
      const delays = META_RETRIES.delaysMs;
      const last = { 3600: 'hourly' }[(delays.at(-1) ?? Number.NaN) / 1000];
      const days = META_RETRIES.windowMs / 86_400_000;
      expect(decisions).toContain(
        `the last repeating, jittered, within Meta's ${inWords(days)} days; \`META_RETRIES\` ${delays.slice(0, -1).map(delay).join(', ')}, then ${last}, assumed`,
      );
      const drill = compressedMetaRetries(DRILL_DEFAULTS.retryInitialMs, DRILL_DEFAULTS.retryMaxMs).delaysMs;
      const [first = Number.NaN, second = Number.NaN] = drill;
      const growth = { 2: 'doubling' }[second / first];
      expect(decisions).toContain(
        `the drill's \`compressedMetaRetries\` from ${delay(first)}, ${growth}, capped at ${delay(drill.at(-1) ?? Number.NaN)})`,
      );
    });

    it("states the consumer's default memory and the visibility timeout the simulation waits for", () => {
      expect(decisions).toContain(`a ${DEFAULT_CONSUMER_MEMORY_MB} MB Lambda has a fraction of a vCPU`);
      const visibilityMinutes = Math.round(DEFAULT_SETTINGS.visibilityTimeoutSeconds / 60);
      expect(decisions).toContain(`until their visibility timer fired ${visibilityMinutes} minutes later`);
      expect(decisions).toContain(
        `once the FIFO window's ${FIFO_DEDUPLICATION_MINUTES} minutes and the visibility timeout's ${visibilityMinutes} have filled`,
      );
    });
  });

  describe('the delivery archive', () => {
    it("states the constant the bucket's retention defaults to", () => {
      const fallback = sourceMatch('lib/validate-props.ts', /prop\?\.retentionDays \?\? (\w+);/);
      expect(decisions).toContain(
        `\`deliveries/\` expiring after \`archive.retentionDays\` (default \`${fallback}\`)`,
      );
    });

    it("states the staging expiry and the archive object's id", () => {
      const staging = sourceNumber('lib/builders/archive.ts', 'STAGED_CHUNK_EXPIRY_DAYS');
      expect(decisions).toContain(`Staged chunks expire after ${durationInWords(staging * 86_400)}`);
      // Hex characters of the SHA-256, four bits each.
      const bits = sourceNumber('functions/archive/archive-batch.ts', 'BATCH_ID_LENGTH') * 4;
      expect(decisions).toContain(
        `keyed by the first ${bits} bits of the SHA-256 of its sorted SQS message ids`,
      );
    });

    it("states the archiver's batch, window, concurrency, retention, receives, visibility and local window", () => {
      const size = ARCHIVER_BATCH_SIZE.toLocaleString('en-US');
      const window = ARCHIVER_BATCHING_WINDOW_SECONDS;
      expect(decisions).toContain(`### Archiver batches: up to ${size} in a ${window}-second window`);
      expect(ARCHIVER_MAX_CONCURRENCY).toBe(recommendServers(1e-9, 1e-3, 1).servers); // "Lambda's minimum"
      archiveQueueKeepsTheMaximum();
      const factor = (ARCHIVE_QUEUE_VISIBILITY_TIMEOUT_SECONDS - window) / ARCHIVER_TIMEOUT_SECONDS;
      const local = sourceNumber('cli/local/stack/local-archive.ts', 'LOCAL_BATCHING_WINDOW_SECONDS');
      expect(decisions).toContain(
        `\`contract/archiver-settings.ts\`: up to ${size} records per ${window}-second window, at most ${inWords(ARCHIVER_MAX_CONCURRENCY)} archivers (Lambda's minimum), reporting failed items; ${MAX_QUEUE_RETENTION_DAYS} days of retention, the archive DLQ after ${inWords(ARCHIVER_MAX_RECEIVE_COUNT)} receives, a visibility timeout of ${inWords(factor)} times the archiver's timeout plus the window, as Lambda advises; a ${inWords(local)}-${unitOf(local)} window locally`,
      );
    });

    it("states the archive backlog alarm's age and duration, and the archive queue's retention", () => {
      const alarms = 'lib/monitoring/archive-alarms.ts';
      const periods = sourceNumber(alarms, 'ARCHIVE_BACKLOG_EVALUATION_PERIODS');
      const periodMinutes = Number(
        sourceMatch(alarms, /metricApproximateAgeOfOldestMessage\(\{\s*period: Duration\.minutes\((\d+)\)/),
      );
      expect(decisions).toContain(
        `\`ArchiveBacklog\` (oldest message older than ${inWords(ARCHIVE_BACKLOG_AGE_SECONDS / ARCHIVER_BATCHING_WINDOW_SECONDS)} windows for ${inWords(periods * periodMinutes)} minutes: stalled, not batching)`,
      );
      archiveQueueKeepsTheMaximum();
      expect(decisions).toContain(`Each is caught up within the queue's ${MAX_QUEUE_RETENTION_DAYS} days`);
    });
  });

  describe("Lambda's runtime", () => {
    it("states the Node.js version and the architecture the construct's functions run", () => {
      const node = /^nodejs(\d+)\.x$/.exec(LAMBDA_RUNTIME.name)?.[1];
      const architecture = LAMBDA_ARCHITECTURE.name;
      expect(decisions).toContain(`### Lambda runs Node ${node} on ${architecture};`);
      expect(decisions).toContain(
        `The construct's functions run \`${LAMBDA_RUNTIME.name}\`, ${architecture}, with the AWS SDK bundled at synth`,
      );
      expect(decisions).toContain(`The README names Node ${node} (Lambda's)`);
      expect(decisions).toContain(`Lambda is unaffected (Node ${node}, bundled at synth)`);
    });
  });
  describe('numbers', () => {
    it('states the bound on numbers and accounts, and what a declared number costs in metrics', () => {
      expect(decisions).toContain(
        `### At most ${MAX_SELECTED_IDS} numbers and accounts, for the receiver's 4 KB`,
      );
      expect(decisions).toContain(`All subscribers together may list at most ${MAX_SELECTED_IDS} ids`);
      const perNumber = Object.keys(ConsumerNumberMetric).length + LANES.length;
      expect(decisions).toContain(`Each declared number costs ${inWords(perNumber)} custom metrics a month`);
    });
  });
});
