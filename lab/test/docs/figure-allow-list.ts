/**
 * The figures a page may type by hand, outside its generated regions (lab/test/docs/generated-figures.test.ts
 * explains the rule). Each entry names one page, the exact figures as the scanner reports them (every
 * occurrence on that page is allowed), and why:
 *
 * - CONSTANT_FIGURES: a constant with its source (an AWS limit, a price, a setting, a bench's or a test's
 *   input, a formula). Where the source is importable the figure is computed from it, so that changing the
 *   constant fails the test until the page follows.
 * - PENDING_FIGURES: produced figures still typed by hand, with who converts them into a generated region.
 *   Remove an entry once its page has the region; an entry whose figures are gone from the page fails.
 */

import { ASSUMPTIONS } from '../../../cli/cost/stack-cost.ts';
import { DEFAULT_REPLAY_RATE_PER_SECOND } from '../../../cli/ops/replay/run-replay.ts';
import { VISIBILITY_TIMEOUT_FACTOR } from '../../../contract/settings.ts';
import { DEFAULT_RETRY_POLICY } from '../../../functions/queue/sqs-batch-sender.ts';

export interface AllowedFigures {
  /** From the repository root. */
  readonly page: string;
  readonly figures: readonly string[];
  readonly reason: string;
}

const visibility = `${VISIBILITY_TIMEOUT_FACTOR} ×`;
const dashboardRate = '100 ×';
const dashboardRateReason =
  "the duplicate rate's formula as a percentage (lib/monitoring's metric math): 100 × duplicates / (fresh + duplicates)";

export const CONSTANT_FIGURES: readonly AllowedFigures[] = [
  {
    page: 'docs/operations.md',
    figures: [`${DEFAULT_REPLAY_RATE_PER_SECOND}/s`],
    reason: "ops replay's default --rate (DEFAULT_REPLAY_RATE_PER_SECOND, cli/ops/replay/run-replay.ts)",
  },
  {
    page: 'docs/benchmarks.md',
    figures: ['10%', '30%', '20%'],
    reason:
      "the bench's inputs (lab/bench/run.ts): the bot mix's retryRatio 0.1, the consumer's and end to end's duplicateRatio 0.3, the receiver's warmupShare 0.2",
  },
  {
    page: 'docs/benchmarks.md',
    figures: ['95%', '5%'],
    reason:
      "the intervals' coverage (lab/bench/support/stats.ts medianInterval) and the consumer part's targetHalfWidth 0.05 (lab/bench/run.ts); the retired drain goal's 5% is that figure's name",
  },
  {
    page: 'docs/benchmarks.md',
    figures: ['5 ms', '2.5 ms'],
    reason:
      "the consumer part's addedRoundTripMs (lab/bench/run.ts), slept half before and half after each request",
  },
  {
    page: 'docs/benchmarks.md',
    figures: [`${ASSUMPTIONS.busy.consumerMs} ms`],
    reason:
      "cost.md's assumed consumer duration per batch (ASSUMPTIONS.busy.consumerMs, cli/cost/stack-cost.ts)",
  },
  {
    page: 'docs/cost.md',
    figures: ['10%'],
    reason: "the bot mix's retryRatio 0.1 (lab/bench/run.ts)",
  },
  {
    page: 'docs/decisions.md',
    figures: ['0.7×', '5%'],
    reason:
      "the bot-mix goal's threshold (botMixDynamoDbAtMost0_7xPowertools, lab/bench/goals.ts); the retired drain goal's threshold (its name, drainWithin5PercentOfFloor)",
  },
  {
    page: 'docs/consumer.md',
    figures: [dashboardRate, visibility, '100 ms', '× 2'],
    reason: `${dashboardRateReason}; the visibility timeout's factor (VISIBILITY_TIMEOUT_FACTOR, contract/settings.ts); complete's first retry delay (functions/consumer/complete-with-retry.ts); the backoff's doubling (functions/consumer/retry-policy.ts)`,
  },
  {
    page: 'docs/design.md',
    figures: [dashboardRate],
    reason: dashboardRateReason,
  },
  {
    page: 'docs/local.md',
    figures: [visibility, dashboardRate, '10 %'],
    reason: `the visibility timeout's factor (VISIBILITY_TIMEOUT_FACTOR, contract/settings.ts); ${dashboardRateReason}; SQS fair queues' noisy-neighbour share (AWS's "How Amazon SQS fair queues work", FAIR_NOISY_SHARE in cli/patches/fauxqs+1.9.2.patch)`,
  },
  {
    page: 'docs/deploy.md',
    figures: [visibility],
    reason: "the visibility timeout's factor (VISIBILITY_TIMEOUT_FACTOR, contract/settings.ts)",
  },
  {
    page: 'docs/receiver.md',
    figures: [
      `${DEFAULT_RETRY_POLICY.baseDelayMs} ×`,
      `${[1, 2, 3, 4].reduce((sum, n) => sum + Math.min(DEFAULT_RETRY_POLICY.maxDelayMs, DEFAULT_RETRY_POLICY.baseDelayMs * 2 ** (n - 1)), 0)} ms`,
      '2 ×',
    ],
    reason:
      "the enqueue backoff (DEFAULT_RETRY_POLICY, functions/queue/sqs-batch-sender.ts) and its four waits' sum; the secret read's 2 attempts × its 2 s request timeout (functions/commons/sdk-client-config.ts)",
  },
  {
    page: 'docs/reliability.md',
    figures: [visibility, '15 %', '5 %', '35 %', '65 %'],
    reason:
      "the visibility timeout's factor (contract/settings.ts); test/reliability's inputs: dynamodb-faults' fault rate and handler failures, consumer-kills' kill points",
  },
  {
    page: 'docs/decisions.md',
    figures: ['5 %', '25 %', '×1.05', '×1.25'],
    reason: "the archive goal's thresholds (receiverArchiveWithin5Percent, lab/bench/goals.ts)",
  },
  {
    page: 'docs/decisions.md',
    figures: ['500/503'],
    reason:
      "HTTP statuses, not a pair of counts: the receiver's answer when its secrets cannot be read (500) or the queue refuses (503), functions/receiver/receive-webhook.ts",
  },
  {
    page: 'docs/reliability.md',
    figures: ['2 parts stored'],
    reason:
      "enqueue-faults.test.ts's input: the SQS fault proxy's partialStoreLimit (2, test/support/sqs-fault-proxy.ts and the test's afterEach), the parts a 'partial' fault lets through",
  },
  {
    page: 'docs/reliability.md',
    figures: [
      '0.067s',
      '0.073s',
      '0.077s',
      '0.081s',
      '0.085s',
      '0.097s',
      '0.110s',
      '0.840s',
      '0.861s',
      '0.869s',
      '0.885s',
      '0.903s',
      '1.124s',
      '1.127s',
    ],
    reason:
      'the virtual clock of the trace excerpt of npm run check:protocol -- --seed 1760 --trace: lab/test/protocol-checker/docs-figures.test.ts checks every quoted line against the replay',
  },
  {
    page: 'docs/reliability.md',
    figures: ['schedules 200', 'schedules 5000', 'schedules 20000'],
    reason:
      'the argument of the check:protocol command that writes the short report (--schedules 200), the full one (--schedules 5000) and the long run that finds the edge at the retention floor (--schedules 20000), quoted in the prose',
  },
  {
    page: 'docs/outage-drill.md',
    figures: ['15 %', '5 %', '8/s', '6/s', '×2', '20 %', '150 ms', '40 ms', '100 ×', '100 ms'],
    reason:
      "npm run outage-drill's defaults (cli/outage-drill/outage-drill.ts): status swaps, template share, λ, Meta's backoff factor and jitter, the side effect's S, the quarantine example's 100 × and --target-wait-ms",
  },
];

export const PENDING_FIGURES: readonly AllowedFigures[] = [];
