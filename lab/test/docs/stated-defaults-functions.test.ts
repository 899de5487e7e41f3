/**
 * The defaults the pages about the Lambda code state are the code's. docs/handlers.md: the lease margin, the
 * burst window, Meta's retry window, the default retry delays and the outage they ride out, the smoke test's
 * ids. docs/consumer.md: the in-flight return, the visibility rule, complete's retries, the retry budget's
 * bounds, the ordered lane's batch and the log digest (its budget tables are generated regions,
 * test/unit/contract/retry-budget.test.ts's). docs/receiver.md: the handshake, nesting and copy bounds, the
 * FIFO group and window, the secret cache, the message size and its reserve, the enqueue retries, the SDK
 * clients, the worst case against the timeouts, and the output bound. The other pages: stated-defaults-*.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { FIFO_MAX_BATCH_SIZE, MESSAGE_LANE_DEFAULTS } from '../../../contract/lanes.ts';
import {
  MAX_RETRY_DELAY_SECONDS,
  MIN_OUTAGE_RIDDEN_OUT_SECONDS,
  outageRiddenOutSeconds,
  receivesToRideOut,
  SQS_MAX_VISIBILITY_TIMEOUT_SECONDS,
} from '../../../contract/retry-budget.ts';
import {
  DEFAULT_SETTINGS,
  META_RETRY_WINDOW_DAYS,
  VISIBILITY_TIMEOUT_FACTOR,
} from '../../../contract/settings.ts';
import { SMOKE_TEST_PHONE_NUMBER_ID, SMOKE_TEST_WAMID_PREFIX } from '../../../contract/smoke-test.ts';
import { keyedDigest, LOG_DIGEST_PREFIX } from '../../../functions/commons/log-digest.ts';
import { SDK_TIMEOUTS, worstCaseCallMs } from '../../../functions/commons/sdk-client-config.ts';
import { DEFAULT_COMPLETION_RETRY } from '../../../functions/consumer/complete-with-retry.ts';
import { secondsUntilLeaseEnds } from '../../../functions/consumer/in-flight.ts';
import { MAX_LOSSLESS_NESTING } from '../../../functions/events/parse-json.ts';
import {
  commonAttributes,
  MESSAGE_ATTRIBUTES_RESERVE_BYTES,
  messageGroupIdOf,
} from '../../../functions/queue/outgoing-message.ts';
import { DEFAULT_RETRY_POLICY, MAX_BATCH_ENTRIES } from '../../../functions/queue/sqs-batch-sender.ts';
import {
  AMPLIFICATION_ALLOWANCE_BYTES,
  AMPLIFICATION_FACTOR,
  MAX_PARTS_BEFORE_SIZE_SPLIT,
  OutputBudget,
} from '../../../functions/receiver/output-budget.ts';
import { RETRY_BUDGET_MS } from '../../../functions/receiver/receive-webhook.ts';
import { ANONYMOUS_CONTACTS_BYTES, OTHER_MEMBERS_BYTES } from '../../../functions/receiver/split-by-lane.ts';
import { MAX_CHALLENGE_LENGTH } from '../../../functions/receiver/verification-handshake.ts';
import { SECRETS_MAX_AGE_SECONDS } from '../../../functions/receiver/webhook-secrets.ts';
import {
  durationInWords,
  FIFO_DEDUPLICATION_MINUTES,
  inWords,
  prose,
  sourceMatch,
  sourceNumber,
  unitOf,
} from './stated-defaults-support.ts';

const s = (ms: number) => `${ms / 1000} s`;
const { leaseMarginMs, retryBaseDelaySeconds, retryMaxDelaySeconds } = DEFAULT_SETTINGS;

/** The default budget rides out at least the outage `resolveSettings` asks for, in its words (`a day`). */
function outageRiddenOutInWords(): string {
  expect(outageRiddenOutSeconds(DEFAULT_SETTINGS)).toBeGreaterThanOrEqual(MIN_OUTAGE_RIDDEN_OUT_SECONDS);
  return durationInWords(MIN_OUTAGE_RIDDEN_OUT_SECONDS);
}

describe("docs/handlers.md's stated defaults", () => {
  const handlers = prose('docs/handlers.md');

  it('states the lease margin and the default burst window', () => {
    expect(handlers).toContain(
      `the claim's lease ends a margin (\`leaseMarginMs\`, ${s(leaseMarginMs)}) after that`,
    );
    const burst = sourceMatch(
      'functions/consumer/sqs-batch-handler.ts',
      /burstWindowMs: ordered\.handlers\.burstWindowMs \?\? (\d+),/,
    );
    expect(handlers).toContain(`\`${burst}\` (the default) hands over whatever the batch already holds`);
  });

  it("states Meta's retry window, the default retry delays and the outage they ride out", () => {
    expect(handlers).toContain(
      `which outlasts Meta's ${META_RETRY_WINDOW_DAYS} days of retries and the queues' retry budget`,
    );
    expect(handlers).toContain(
      `(default: from ${durationInWords(retryBaseDelaySeconds)} up to ${durationInWords(retryMaxDelaySeconds)} apart)`,
    );
    expect(handlers).toContain(
      `with the defaults, not before a downstream outage of ${outageRiddenOutInWords()}`,
    );
  });

  it("names the smoke test's wamid prefix and phone number id as contract/smoke-test.ts has them", () => {
    expect(handlers).toContain(`whose wamids start with \`${SMOKE_TEST_WAMID_PREFIX}\``);
    expect(handlers).toContain(`would reply to a fictional customer: from \`${SMOKE_TEST_PHONE_NUMBER_ID}\``);
  });
});

describe("docs/consumer.md's stated defaults, outside its generated budget tables", () => {
  const consumer = prose('docs/consumer.md');

  it('states when an in-flight duplicate comes back and the visibility rule', () => {
    const extra = (secondsUntilLeaseEnds(10_000, 0) ?? Number.NaN) - 10;
    expect(consumer).toContain(`ChangeMessageVisibility to the lease end + ${extra} s`);
    expect(consumer).toContain(
      `after the visibility timeout (≥ ${VISIBILITY_TIMEOUT_FACTOR} × function timeout)`,
    );
    expect(consumer).toContain(
      `The visibility timeout is at least ${VISIBILITY_TIMEOUT_FACTOR} × the function timeout`,
    );
  });

  it("states complete's retries as DEFAULT_COMPLETION_RETRY has them", () => {
    const { retries, baseDelayMs, deadlineReserveMs } = DEFAULT_COMPLETION_RETRY;
    expect(consumer).toContain(
      `(${retries} retries from ${baseDelayMs} ms, doubling, half-jittered; never sleeping into the last ${unitOf(deadlineReserveMs / 1000)} before the invocation's deadline)`,
    );
  });

  it("states the retry budget's floor, the visibility batch and SQS's limits as the code has them", () => {
    expect(consumer).toContain(`with the default budget, not before ${outageRiddenOutInWords()} has passed`);
    const perRequest = sourceNumber('functions/queue/sqs-redelivery-scheduler.ts', 'MAX_BATCH_ENTRIES');
    expect(consumer).toContain(
      `one \`ChangeMessageVisibilityBatch\` (${inWords(perRequest)} entries per request)`,
    );
    const limitHours = SQS_MAX_VISIBILITY_TIMEOUT_SECONDS / 3600;
    expect(consumer).toContain(`the setting itself stays under SQS's ${limitHours}-hour limit`);
    const hours = MIN_OUTAGE_RIDDEN_OUT_SECONDS / 3600;
    expect(consumer).toContain(`rides out less than ${hours} hours at the shortest draws`);
    const spareMinutes = (SQS_MAX_VISIBILITY_TIMEOUT_SECONDS - MAX_RETRY_DELAY_SECONDS) / 60;
    expect(consumer).toContain(
      `above ${MAX_RETRY_DELAY_SECONDS.toLocaleString('en-US')} s (${limitHours} hours less the ${spareMinutes} minutes that may pass`,
    );
    expect(DEFAULT_SETTINGS.maxReceiveCount).toBeGreaterThan(
      receivesToRideOut(MIN_OUTAGE_RIDDEN_OUT_SECONDS, DEFAULT_SETTINGS),
    );
    expect(consumer).toContain(`the defaults keep a few spare receives above the ${hours}-hour minimum`);
  });

  it("states the ordered lane's batch and the log digest's form", () => {
    expect(MESSAGE_LANE_DEFAULTS.maxBatchingWindowSeconds).toBe(0); // "no batching window"
    expect(consumer).toContain(`Within a batch (at most ${FIFO_MAX_BATCH_SIZE} records, no batching window)`);
    const digestCharacters = keyedDigest('key', 'value').length - LOG_DIGEST_PREFIX.length;
    expect(consumer).toContain(
      `(\`${LOG_DIGEST_PREFIX}\` and ${digestCharacters} base64url characters of HMAC-SHA256`,
    );
  });
});

describe("docs/receiver.md's stated defaults", () => {
  const receiver = prose('docs/receiver.md');

  it("states the handshake's, the nesting's and the copied members' bounds", () => {
    expect(receiver).toContain(`a \`hub.challenge\` of at most ${MAX_CHALLENGE_LENGTH} characters`);
    expect(receiver).toContain(
      `a challenge longer than ${MAX_CHALLENGE_LENGTH} characters is refused with 400`,
    );
    expect(receiver).toContain(
      `JSON nested deeper than ${MAX_LOSSLESS_NESTING} levels (\`MAX_LOSSLESS_NESTING\`)`,
    );
    expect(receiver).toContain(
      `\`MAX_LOSSLESS_NESTING\` (${MAX_LOSSLESS_NESTING}) levels is \`invalid-json\``,
    );
    expect(receiver).toContain(
      `those that fit together in ${ANONYMOUS_CONTACTS_BYTES} bytes (\`ANONYMOUS_CONTACTS_BYTES\`)`,
    );
    expect(receiver).toContain(
      `those that fit together in ${OTHER_MEMBERS_BYTES} bytes per object (\`OTHER_MEMBERS_BYTES\`)`,
    );
  });

  it("states the FIFO group's bound, the FIFO window and the delivery id's length", () => {
    let longest = 1;
    while (messageGroupIdOf('1'.repeat(longest + 1)) === '1'.repeat(longest + 1)) longest++;
    expect(receiver).toContain(
      `An id SQS would refuse (more than ${longest} characters, or characters outside printable ASCII)`,
    );
    expect(receiver).toContain(`are stored once within SQS's ${FIFO_DEDUPLICATION_MINUTES} minutes`);
    const kept = commonAttributes({ deliveryId: 'x'.repeat(500), receivedAt: '', retryDeadline: 0 })
      .deliveryId.StringValue;
    expect(receiver).toContain(`API Gateway request id (first ${kept?.length} characters)`);
  });

  it('states how long the secret is cached', () => {
    const minutes = SECRETS_MAX_AGE_SECONDS / 60;
    expect(receiver).toContain(
      `\`SecretsProvider.get(id, { transform: 'json', maxAge: ${SECRETS_MAX_AGE_SECONDS} })\``,
    );
    expect(receiver).toContain(`its cache serves every later invocation for ${minutes} minutes`);
    expect(receiver).toContain(`wait ${minutes} minutes (or restart the receiver's containers)`);
  });

  it("states the default message size and the attributes' reserve as the code has them", () => {
    const mebibytes = DEFAULT_SETTINGS.maximumMessageSizeBytes / 1024 ** 2;
    expect(receiver).toContain(
      `(env \`MAXIMUM_MESSAGE_SIZE_BYTES\`, default ${mebibytes} MiB, in \`contract/settings.ts\`) minus ${MESSAGE_ATTRIBUTES_RESERVE_BYTES} bytes (\`MESSAGE_ATTRIBUTES_RESERVE_BYTES\`)`,
    );
    expect(receiver).toContain(`Those ${MESSAGE_ATTRIBUTES_RESERVE_BYTES} bytes are kept for the attributes`);
    expect(receiver).toContain(`at 256 KiB and the default ${mebibytes} MiB, no body Meta sends comes near`);
  });

  it("states the enqueue's batch, retries, backoff and budget as sqs-batch-sender.ts and receive-webhook.ts have them", () => {
    const { maxAttempts, baseDelayMs, maxDelayMs } = DEFAULT_RETRY_POLICY;
    const waits = Array.from({ length: maxAttempts - 1 }, (_, i) =>
      Math.min(maxDelayMs, baseDelayMs * 2 ** i),
    );
    expect(receiver).toContain(`at most **${MAX_BATCH_ENTRIES} entries** per call`);
    expect(receiver).toContain(`| attempts | at most **${maxAttempts}** calls per message |`);
    expect(receiver).toContain(
      `retry n waits \`random(0, min(${maxDelayMs}, ${baseDelayMs} × 2^(n−1)))\` ms, so the ${waits.length} waits total at most ${waits.reduce((a, b) => a + b, 0)} ms`,
    );
    expect(receiver).toContain(
      `no retry starts later than **${s(RETRY_BUDGET_MS)}** after the request arrived`,
    );
  });

  it("states the SDK clients' settings and the worst case against the receiver's and API Gateway's timeouts", () => {
    const sqs = SDK_TIMEOUTS.receiverSqs;
    const secrets = SDK_TIMEOUTS.receiverSecretsManager;
    expect(receiver).toContain(
      `\`maxAttempts: ${sqs.maxAttempts}\` (SDK retries off, so attempts are not multiplied), request timeout **${s(sqs.requestTimeoutMs)}**, connection timeout ${s(sqs.connectionTimeoutMs)}`,
    );
    expect(receiver).toContain(
      `Secrets Manager client: ${secrets.maxAttempts} attempts, request timeout **${s(secrets.requestTimeoutMs)}**, connection timeout ${s(secrets.connectionTimeoutMs)} (once per container per ${SECRETS_MAX_AGE_SECONDS / 60} min)`,
    );
    const slowRead = worstCaseCallMs('receiverSecretsManager');
    const call = sqs.requestTimeoutMs;
    expect(receiver).toContain(
      `a slow secret read (${secrets.maxAttempts} × ${s(secrets.requestTimeoutMs)} plus backoff, about ${s(slowRead)}, past the ${s(RETRY_BUDGET_MS)} budget), then one last ${s(call)} enqueue call and one ${s(call)} quarantine call, about **${s(slowRead + 2 * call)}**; with a quick secret read, ${s(RETRY_BUDGET_MS)} budget + ${s(call)} + ${s(call)}, about ${s(RETRY_BUDGET_MS + 2 * call)}`,
    );
    const apiGateway = sourceNumber('lib/validate-props.ts', 'HTTP_API_INTEGRATION_TIMEOUT_SECONDS');
    expect(receiver).toContain(
      `under the receiver's **${DEFAULT_SETTINGS.receiverTimeoutSeconds} s** timeout (\`contract/settings.ts\`; \`test/unit/commons/ sdk-client-config.test.ts\` checks it) and far under API Gateway's ${apiGateway} s`,
    );
  });

  it('states the output bound as functions/receiver/output-budget.ts has it', () => {
    const body = 1_000;
    const messageSize = 100;
    const budget = OutputBudget.forBody(body, messageSize);
    const perMessageSize =
      (budget.maxParts - MAX_PARTS_BEFORE_SIZE_SPLIT) / Math.ceil(budget.maxBytes / messageSize);
    expect(budget.maxBytes).toBe(AMPLIFICATION_FACTOR * body + AMPLIFICATION_ALLOWANCE_BYTES);
    expect(receiver).toContain(
      `at most **${inWords(AMPLIFICATION_FACTOR)} times the body plus ${AMPLIFICATION_ALLOWANCE_BYTES / 1024} KiB**`,
    );
    expect(receiver).toContain(
      `in at most **${MAX_PARTS_BEFORE_SIZE_SPLIT.toLocaleString('en-US')} parts plus ${inWords(perMessageSize)} per message size**`,
    );
    expect(receiver).toContain(`The ${AMPLIFICATION_ALLOWANCE_BYTES / 1024} KiB keep a small body`);
    expect(receiver).toContain(`and a 5xx makes Meta resend for ${META_RETRY_WINDOW_DAYS} days`);
  });
});
