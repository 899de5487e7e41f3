/**
 * The defaults the local stack's pages state are the code's: a default typed into a page drifts
 * (docs/local.md once said `LOCAL_MAX_CONCURRENCY` defaults to 5 while the stack ran 8). docs/local.md: its
 * configuration table whole, and the port, host, timings, limits, lanes and queue names its prose gives.
 * docs/outage-drill.md: the default and `--short` scenarios (cli/outage-drill/presets.ts and the options'
 * defaults), its customers, the model's minimum and the stack it starts. The other pages:
 * stated-defaults-deploy, -design, -functions and -operations.test.ts beside this one.
 */
import { describe, expect, it } from 'vitest';
import { FAUXQS_VERSION } from '../../../cli/local/emulators/fauxqs-patch.ts';
import {
  DEFAULT_PIPELINE_QUEUE_NAMES,
  messageLaneQueueNames,
  QUARANTINE_QUEUE_NAME,
  subscriberQueueNames,
} from '../../../cli/local/emulators/sqs.ts';
import { DEFAULT_PORT, DEV_APP_SECRET, DEV_VERIFY_TOKEN } from '../../../cli/local/local-stack-api.ts';
import { LANE_WAIT_WINDOW_MS } from '../../../cli/local/observe/lane-stats.ts';
import { NO_FAULTS } from '../../../cli/local/stack/fault-switch.ts';
import { DEFAULT_LOCAL_HOST, LOCAL_ENV, readLocalConfig } from '../../../cli/local/stack/local-config.ts';
import { SUBSCRIBERS_MODULE } from '../../../cli/local/stack/local-subscribers.ts';
import { customerKindOf } from '../../../cli/meta-traffic/customers.ts';
import { compressedMetaRetries, META_RETRIES } from '../../../cli/meta-traffic/retries.ts';
import { DEFAULTS, SHORT } from '../../../cli/outage-drill/presets.ts';
import { CUSTOMERS } from '../../../cli/outage-drill/traffic.ts';
import { ENV } from '../../../contract/environment.ts';
import { recommendServers } from '../../../contract/erlang-c.ts';
import {
  FIFO_MAX_BATCH_SIZE,
  MESSAGE_LANE_DEFAULTS,
  ORDERED_MESSAGE_LANE_RETRY,
} from '../../../contract/lanes.ts';
import {
  DEFAULT_SETTINGS,
  minimumVisibilityTimeoutSeconds,
  VISIBILITY_TIMEOUT_FACTOR,
} from '../../../contract/settings.ts';
import { DEFAULT_SUBSCRIBER_NAME } from '../../../contract/subscribers.ts';
import {
  FIFO_DEDUPLICATION_MINUTES,
  inWords,
  percent,
  prose,
  readFile,
  sourceMatch,
  sourceNumber,
  unitOf,
} from './stated-defaults-support.ts';

/** docs/local.md's configuration table: variable → its stated default, without backticks. */
function statedDefaults(): Map<string, string> {
  const page = readFile('docs/local.md');
  const section = page.slice(page.indexOf('### Configuration'));
  const start = section.indexOf('\n|');
  const table = section.slice(start + 1, section.indexOf('\n\n', start));
  const rows = table.split('\n').filter((line) => /^\| `[A-Z_]+`/.test(line));
  return new Map(
    rows.map((row) => {
      const [variable = '', stated = ''] = row
        .split('|')
        .slice(1, 3)
        .map((cell) => cell.trim());
      return [variable.replaceAll('`', ''), stated.replaceAll('`', '')];
    }),
  );
}

describe("docs/local.md's configuration table", () => {
  const stated = statedDefaults();
  const code: Record<string, string> = {
    PORT: String(DEFAULT_PORT),
    [LOCAL_ENV.host]: DEFAULT_LOCAL_HOST,
    [ENV.appSecrets]: DEV_APP_SECRET,
    [ENV.verifyToken]: DEV_VERIFY_TOKEN,
    [LOCAL_ENV.consumerTimeoutSeconds]: `${DEFAULT_SETTINGS.consumerTimeoutSeconds} (the stack's)`,
    [LOCAL_ENV.batchSize]: String(DEFAULT_SETTINGS.batchSize),
    [LOCAL_ENV.maxBatchingWindowSeconds]: String(DEFAULT_SETTINGS.maxBatchingWindowSeconds),
    [LOCAL_ENV.maxConcurrency]: String(DEFAULT_SETTINGS.maxConcurrency),
    [LOCAL_ENV.effectDelayMs]: String(readLocalConfig({}).effectDelayMs),
    [LOCAL_ENV.verbose]: readLocalConfig({}).verbose ? 'on' : 'off',
    [LOCAL_ENV.subscribers]: SUBSCRIBERS_MODULE,
    [LOCAL_ENV.dynamodbEndpoint]:
      readLocalConfig({}).dynamodbEndpoint === undefined ? 'unset: starts DynamoDB Local' : 'set',
  };

  it('lists every variable the code reads, and no other', () => {
    // LOCAL_CONSUMER swaps the consumer for the bench's pass-through floor: the lab's, not a user's.
    const read = [...Object.values(LOCAL_ENV), ENV.appSecrets, ENV.verifyToken].filter(
      (variable) => variable !== LOCAL_ENV.consumer,
    );
    expect([...stated.keys()].sort()).toEqual(read.sort());
    expect(Object.keys(code).sort()).toEqual(read.sort());
  });

  it.each(Object.entries(code))('states the default of %s as the code has it', (variable, value) => {
    expect(stated.get(variable)).toBe(value);
  });

  it('gives the visibility timeout that follows from the default timeout and from a timeout of 5', () => {
    const window = DEFAULT_SETTINGS.maxBatchingWindowSeconds;
    const five = minimumVisibilityTimeoutSeconds({
      consumerTimeoutSeconds: 5,
      maxBatchingWindowSeconds: window,
    });
    expect(prose('docs/local.md')).toContain(
      `the visibility timeout follows (${VISIBILITY_TIMEOUT_FACTOR} × timeout + window). \`5\` brings a failed record back in ${five} s instead of ${DEFAULT_SETTINGS.visibilityTimeoutSeconds} s`,
    );
  });
});

describe("docs/local.md's stated defaults, beyond the table", () => {
  const local = prose('docs/local.md');
  const server = 'cli/local/stack/local-server.ts';

  it('shows the default port and listening address where it gives a URL', () => {
    expect(local).toContain(`npm run send ──▶ :${DEFAULT_PORT}/webhook`);
    expect(local).toContain(`curl http://localhost:${DEFAULT_PORT}/local/effects`);
    expect(local).toContain(`Open \`http://localhost:${DEFAULT_PORT}/\``);
    expect(local).toContain(`**The server listens on ${DEFAULT_LOCAL_HOST}.**`);
    expect(local).toContain(`forwards to \`localhost:${DEFAULT_PORT}\` from this machine`);
  });

  it("states the FIFO queue's deduplication window", () => {
    expect(local).toContain(
      `A message sent again within ${FIFO_DEDUPLICATION_MINUTES} minutes never reaches a consumer`,
    );
  });

  it("states the emulated API Gateway's body limit, the event source's long poll and fauxqs's version", () => {
    const payloadLimitMb = sourceNumber(server, 'API_GATEWAY_PAYLOAD_LIMIT_BYTES') / 1024 ** 2;
    expect(local).toContain(`Bodies above ${payloadLimitMb} MB get 413`);
    const longPoll = sourceNumber('cli/local/sqs-event-source.ts', 'LAMBDA_LONG_POLL_SECONDS');
    expect(local).toContain(`each long-polling (${longPoll} s), gathering up to \`batchSize\` records`);
    for (const sentence of [
      `fauxqs ${FAUXQS_VERSION} returned one message per group`,
      `\`patches/fauxqs+${FAUXQS_VERSION}.patch\` takes a group's messages in order`,
      `fauxqs ${FAUXQS_VERSION} deduplicated per queue`,
      `fauxqs ${FAUXQS_VERSION} checks its bodies with a regular expression`,
      `the patch applies the same change to ${FAUXQS_VERSION}`,
    ]) {
      expect(local).toContain(sentence);
    }
  });

  it("states the fault switch's error status, the effect delay's bounds and how long a held request lasts", () => {
    expect(local).toContain(
      `answers \`webhook.errorStatus\` (${NO_FAULTS.webhook.errorStatus}) without running`,
    );
    const maxDelay = sourceNumber('cli/local/stack/fault-switch.ts', 'MAX_EFFECT_DELAY_MS');
    const spaced = String(maxDelay).replace(/\B(?=(\d{3})+$)/g, ' ');
    expect(local).toContain(`\`effect.delayMs\` (${NO_FAULTS.effect.delayMs}–${spaced})`);
    const held = sourceNumber(server, 'HELD_REQUEST_MAX_MS') / 1000;
    expect(local).toContain(`Held requests are dropped after ${held} s`);
  });

  it("states the dashboard's polling, rate window, wait window and sampling, and the operator panels' rescan", () => {
    const dashboard = 'cli/local/dashboard/dashboard-page.ts';
    const poll = Number(sourceMatch(dashboard, /setTimeout\(poll, (\d+)\)/)) / 1000;
    expect(local).toContain(`It polls \`/local/stats\` every ${unitOf(poll)} and draws`);
    expect(local).toContain(
      `the duplicate rate per field over a ${sourceNumber(dashboard, 'RATE_WINDOW')} s window`,
    );
    expect(local).toContain(`\`EventWaitTime\` values over the last ${unitOf(LANE_WAIT_WINDOW_MS / 1000)}`);
    const sample = sourceNumber('cli/local/stack/local-stack.ts', 'QUEUE_SAMPLE_INTERVAL_MS') / 1000;
    expect(local).toContain(`sampled every ${unitOf(sample)} from fauxqs's own queue inspection`);
    const rescan = sourceNumber('cli/local/stack/operator-views.ts', 'RESCAN_AFTER_MS') / 1000;
    expect(local).toContain(`when its count changed or its last read is a ${unitOf(rescan)} old`);
  });

  it("states the message lane's settings, its FIFO batch and the local queues' names", () => {
    expect(MESSAGE_LANE_DEFAULTS.maxBatchingWindowSeconds).toBe(0); // "no batching window"
    const { maxReceiveCount, retryBaseDelaySeconds, retryMaxDelaySeconds } = ORDERED_MESSAGE_LANE_RETRY;
    expect(local).toContain(
      `no batching window, at most ${FIFO_MAX_BATCH_SIZE} records a batch, and when ordered a chat's retry budget of ${maxReceiveCount} receives ${retryBaseDelaySeconds} s to ${retryMaxDelaySeconds} s apart`,
    );
    expect(local).toContain(
      `The ordered lane's poller is Lambda's FIFO event source: batches of at most ${FIFO_MAX_BATCH_SIZE}`,
    );
    const messages = (name: string) => messageLaneQueueNames(name, true);
    const dlq = messages('<name>').deadLetterQueueName;
    expect(local).toContain(
      `named \`${messages(DEFAULT_SUBSCRIBER_NAME).deliveryQueueName}\` for the default subscriber and \`${messages('<name>').deliveryQueueName}\` for another, with a FIFO DLQ (\`…${dlq.slice(dlq.indexOf('-messages'))}\`)`,
    );
    expect(local).toContain(
      `its queue and DLQ (\`${subscriberQueueNames('<name>').deliveryQueueName}\` and \`…-dlq\`; the \`${DEFAULT_SUBSCRIBER_NAME}\` subscriber keeps \`${DEFAULT_PIPELINE_QUEUE_NAMES.deliveryQueueName}\`)`,
    );
    expect(local).toContain(`the one quarantine queue (\`${QUARANTINE_QUEUE_NAME}\`)`);
  });
});

describe("docs/outage-drill.md's stated defaults", () => {
  const drill = prose('docs/outage-drill.md');
  const options = 'cli/outage-drill/outage-drill.ts';
  const optionDefault = (name: string) =>
    sourceMatch(options, new RegExp(`'${name}': \\{ type: 'string', default: '([\\w.-]+)' \\}`));
  const s = (ms: number) => `${ms / 1000} s`;

  it('states the default scenario and the --short one as presets.ts and the options have them', () => {
    expect(drill).toContain(`# the default scenario: ${DEFAULTS.duration} s of traffic`);
    expect(drill).toContain(
      `| λ = ${DEFAULTS.rate}/s (${SHORT.rate}/s) for ${DEFAULTS.duration} s (${SHORT.duration} s) |`,
    );
    expect(drill).toContain(
      `| T = ${DEFAULTS.outage} s from ${DEFAULTS.outageStart} s (${SHORT.outage} s from ${SHORT.outageStart} s), \`${optionDefault('outage-mode')}\` |`,
    );
    expect(drill).toContain(`counts as failed | ${s(DEFAULTS.metaTimeoutMs)} (${s(SHORT.metaTimeoutMs)}) |`);
    expect(drill).toContain(
      `| ${DEFAULTS.retryInitialMs / 1000}–${s(DEFAULTS.retryMaxMs)} (${SHORT.retryInitialMs / 1000}–${s(SHORT.retryMaxMs)}) |`,
    );
    const redeliver = optionDefault('redeliver-window');
    expect(drill).toContain(
      `the events acknowledged in the last ${redeliver} s before it are delivered again (Meta delivers at least once) | ${redeliver} s |`,
    );
    expect(SHORT.workers).toBe(DEFAULTS.workers); // the page gives one c for both
    expect(drill).toContain(
      `| c = ${DEFAULTS.workers}, S = ${DEFAULTS.effectMs} ms (${SHORT.effectMs} ms) |`,
    );
    expect(drill).toContain(`| up to ${DEFAULTS.drain} s (${SHORT.drain} s) |`);
    expect(drill).toContain(
      `one row per interval (${DEFAULTS.interval} s; ${SHORT.interval} s with \`--short\`)`,
    );
    expect(drill).toContain(`is at most \`--target-wait-ms\` (${optionDefault('target-wait-ms')} ms)`);
  });

  it("states Meta's compressed retries, the re-batching and the traffic mix as the drill plays them", () => {
    const retries = compressedMetaRetries(DEFAULTS.retryInitialMs, DEFAULTS.retryMaxMs);
    const [first = Number.NaN, second = Number.NaN] = retries.delaysMs;
    const days = META_RETRIES.windowMs / 86_400_000;
    expect(drill).toContain(
      `exponential backoff from ${s(first)}, ×${second / first}, capped at ${s(retries.delaysMs.at(-1) ?? Number.NaN)}, ±${percent(retries.jitter)} % jitter (the real schedule spans ${days} days; compressed here)`,
    );
    const rebatch = Number(sourceMatch(options, /rebatchProbability: ([\d.]+),/));
    const perBody = sourceMatch(options, /maxEventsPerBody: (\d+),/);
    expect(drill).toContain(
      `travel in one body ${{ 0.5: 'half' }[rebatch]} of the time (re-batching, up to ${perBody} events per body)`,
    );
    const traffic = 'cli/outage-drill/traffic.ts';
    const template = Number(sourceMatch(traffic, /roll < ([\d.]+)\) return this\.#templateUpdate\(\)/));
    const swap = Number(
      sourceMatch(traffic, /this\.#random\(\) < ([\d.]+)\) \{\s*\/\/ Meta does not promise order/),
    );
    expect(drill).toContain(
      `(${percent(swap)} % swap two of them), and ${percent(template)} % \`message_template_status_update\``,
    );
  });

  it('states how many customers of each kind the traffic names', () => {
    const kinds = Array.from({ length: CUSTOMERS }, (_, serial) => customerKindOf(serial));
    const count = (kind: string) => kinds.filter((k) => k === kind).length;
    expect(drill).toContain(
      `The inbound messages come from ${CUSTOMERS} customers named as Meta names them since 2026 (\`cli/meta-traffic/customers.ts\`): ${count('username')} by their BSUID alone (a username), ${count('phone-comes-and-goes')} by their BSUID with the phone number in some of their messages and not in others, ${count('phone')} by their phone number`,
    );
  });

  it('states the stack it starts, the windows it draws and the smallest concurrency it recommends', () => {
    expect(drill).toContain(`answering on \`http://localhost:$PORT\` (${DEFAULT_PORT}) if one is running`);
    const batch = sourceMatch(options, /LOCAL_BATCH_SIZE: '(\d+)'/);
    expect(sourceMatch(options, /LOCAL_BATCHING_WINDOW_SECONDS: '(\d+)'/)).toBe('0'); // "no batching window"
    expect(drill).toContain(`with batch size ${batch}, no batching window and \`--workers\` pollers`);
    const rateWindow = sourceNumber('cli/outage-drill/html-report.ts', 'RATE_WINDOW_SECONDS');
    expect(drill).toContain(`**Duplicate rate per field over time** (${rateWindow} s window, outage shaded)`);
    expect(drill).toContain(
      `with the stack's default window of ${DEFAULT_SETTINGS.maxBatchingWindowSeconds} s`,
    );
    // The fewest servers recommendServers considers, whatever the load.
    const fewest = recommendServers(1e-9, 1e-3, 1).servers;
    expect(drill).toContain(`the smallest \`maxConcurrency\` (at least ${fewest}, Lambda's minimum)`);
    expect(drill).toContain(
      `under the FIFO event source: batches of at most ${inWords(FIFO_MAX_BATCH_SIZE)} records and no window`,
    );
  });
});
