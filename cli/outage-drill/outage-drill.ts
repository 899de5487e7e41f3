/**
 * npm run outage-drill -- [--short] [--url URL] [--rate λ] [--effect-ms S] [--workers c] [--duration s]
 *                         [--outage-start s] [--outage s] [--outage-mode mixed|error|timeout|lost-ack]
 *                         [--interval s] [--target-wait-ms ms] [--seed n] [--report PATH] [--json]
 *                         [--save PATH]
 *
 * Drives the local stack through an outage as Meta would (docs/outage-drill.md). Without --url it uses the
 * stack answering on http://localhost:$PORT (3000) if there is one, and otherwise starts its own (with
 * batch size 1 and c pollers, so that the M/M/c comparison holds) and stops it at the end.
 * Exit code 0 when every event was effected exactly once by every subscriber that should have it, 1 otherwise.
 */
import '../tools/silence-sdk-node-version-warning.ts';
import { mkdirSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import { dirname, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { ENV } from 'whatsapp-webhook-dedup/contract/environment';
import type { PipelineSettings } from 'whatsapp-webhook-dedup/contract/settings';
import { DEFAULT_PORT } from '../local/local-stack-api.ts';
import { WEBHOOK_FAULT_MODES } from '../local/stack/fault-switch.ts';
import { DEV_APP_SECRET } from '../local/stack/local-config.ts';
import { type SpawnedLocalStack, spawnLocalStack } from '../local/stack/spawn-local-stack.ts';
import { compressedMetaRetries } from '../meta-traffic/retries.ts';
import { progressBar } from '../tools/progress-bar.ts';
import { INTERVAL_HEADER, intervalLine, progressDetail, summary } from './console-output.ts';
import { renderReport } from './html-report.ts';
import { DEFAULTS, SHORT } from './presets.ts';
import { type DrillOptions, runDrill } from './run-drill.ts';
import { drillRecord, writeDrillRecord } from './run-record.ts';

async function main(args: readonly string[], program: string): Promise<number> {
  const commandStartedAt = Date.now();
  const loadAtStart = loadavg()[0] as number;
  const { values } = parseArgs({
    args: [...args],
    options: {
      short: { type: 'boolean' },
      url: { type: 'string' },
      secret: { type: 'string' },
      rate: { type: 'string' },
      'effect-ms': { type: 'string' },
      workers: { type: 'string' },
      duration: { type: 'string' },
      'outage-start': { type: 'string' },
      outage: { type: 'string' },
      'outage-mode': { type: 'string', default: 'mixed' },
      interval: { type: 'string' },
      'meta-timeout-ms': { type: 'string' },
      'target-wait-ms': { type: 'string', default: '100' },
      'redeliver-window': { type: 'string', default: '3' },
      seed: { type: 'string' },
      report: { type: 'string', default: 'cli/local/.data/outage-drill-report.html' },
      json: { type: 'boolean' },
      save: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    console.error(outageDrillHelp(program));
    return 0;
  }
  const preset = values.short ? SHORT : DEFAULTS;
  const number = (raw: string | undefined, fallback: number, name: string) => {
    const value = raw === undefined ? fallback : Number(raw);
    if (!Number.isFinite(value) || value < 0) throw new UsageError(`--${name} must be a number >= 0.`);
    return value;
  };
  const outageMode = values['outage-mode'] as DrillOptions['outageMode'];
  if (!WEBHOOK_FAULT_MODES.includes(outageMode) || (outageMode as string) === 'up') {
    throw new UsageError(
      `--outage-mode must be one of ${WEBHOOK_FAULT_MODES.filter((m) => m !== 'up').join(', ')}.`,
    );
  }
  const duration = number(values.duration, preset.duration, 'duration');
  const outageStart = number(values['outage-start'], preset.outageStart, 'outage-start');
  const outage = number(values.outage, preset.outage, 'outage');
  if (outageStart + outage > duration) throw new UsageError('The outage must end before --duration.');
  let workers = number(values.workers, preset.workers, 'workers');
  const rate = number(values.rate, preset.rate, 'rate');
  if (rate <= 0) throw new UsageError('--rate must be > 0.');

  const log = (line: string) => console.error(line);
  let own: SpawnedLocalStack | undefined;
  let url = values.url?.replace(/\/+$/, '');
  url ??= (await runningStack(`http://localhost:${process.env.PORT || DEFAULT_PORT}`))
    ? `http://localhost:${process.env.PORT || DEFAULT_PORT}`
    : undefined;
  if (url === undefined) {
    log(`No local stack running: starting one with ${workers} consumer workers (batch size 1)…`);
    own = await spawnLocalStack({
      env: {
        LOCAL_MAX_CONCURRENCY: String(workers),
        LOCAL_BATCH_SIZE: '1',
        LOCAL_BATCHING_WINDOW_SECONDS: '0',
      },
    });
    url = own.url;
  } else {
    const settings = await stackSettings(url);
    if (settings !== undefined) {
      if (values.workers !== undefined && settings.maxConcurrency !== workers) {
        log(
          `The stack at ${url} runs ${settings.maxConcurrency} consumer workers; --workers ${workers} is ignored.`,
        );
      }
      workers = settings.maxConcurrency;
      if (settings.batchSize !== 1) {
        log(
          `Note: the stack at ${url} runs batch size ${settings.batchSize}; the M/M/c comparison assumes 1 (start it with LOCAL_BATCH_SIZE=1 LOCAL_BATCHING_WINDOW_SECONDS=0).`,
        );
      }
    }
    log(`Driving the local stack at ${url}.`);
  }

  const bar = progressBar({
    label: 'drill',
    total: duration,
    formatValue: (seconds) => `${Math.floor(seconds)} s`,
  });
  try {
    bar.aside(() => console.log(INTERVAL_HEADER));
    const result = await runDrill({
      stackUrl: url,
      appSecret: values.secret ?? process.env[ENV.appSecrets]?.split(',')[0]?.trim() ?? DEV_APP_SECRET,
      ratePerSecond: rate,
      effectMeanMs: number(values['effect-ms'], preset.effectMs, 'effect-ms'),
      workers,
      durationSeconds: duration,
      outageStartSeconds: outageStart,
      outageSeconds: outage,
      outageMode,
      intervalSeconds: number(values.interval, preset.interval, 'interval') || 1,
      metaTimeoutMs: number(values['meta-timeout-ms'], preset.metaTimeoutMs, 'meta-timeout-ms'),
      retry: compressedMetaRetries(preset.retryInitialMs, preset.retryMaxMs),
      redeliverWindowSeconds: number(values['redeliver-window'], 3, 'redeliver-window'),
      rebatchProbability: 0.5,
      maxEventsPerBody: 5,
      targetWaitMs: number(values['target-wait-ms'], 100, 'target-wait-ms'),
      drainTimeoutSeconds: preset.drain,
      seed: number(values.seed, Date.now() % 1_000_000, 'seed'),
      onInterval: (row) => bar.aside(() => console.log(intervalLine(row))),
      onProgress: (progress) => bar.update(progress.elapsedSeconds, progressDetail(progress)),
    });
    bar.stop();
    const reportPath = resolve(values.report);
    mkdirSync(dirname(reportPath), { recursive: true });
    writeFileSync(reportPath, renderReport(result));
    console.log(summary(result, reportPath));
    if (values.json) {
      console.log(
        JSON.stringify({
          verdict: {
            ...result.verdict,
            missing: result.verdict.missing.length,
            bySubscriber: Object.fromEntries(
              Object.entries(result.verdict.bySubscriber ?? {}).map(([name, verdict]) => [
                name,
                { ...verdict, missing: verdict.missing.length, unexpected: verdict.unexpected.length },
              ]),
            ),
          },
          totals: result.totals,
          queueing: result.queueing,
          intervals: result.intervals.length,
          reportPath,
        }),
      );
    }
    if (values.save !== undefined) {
      const savePath = resolve(values.save);
      mkdirSync(dirname(savePath), { recursive: true });
      writeDrillRecord(
        savePath,
        drillRecord(result, {
          command: `npm run outage-drill -- ${args.join(' ')}`,
          cores: availableParallelism(),
          loadAverage: [loadAtStart, loadavg()[0] as number],
          wallSeconds: (Date.now() - commandStartedAt) / 1000,
        }),
      );
      log(`Run record: ${savePath} (npm run docs:runs prints it in docs/outage-drill.md)`);
    }
    return result.verdict.exactlyOnce ? 0 : 1;
  } finally {
    bar.stop();
    if (own) {
      log('Stopping the local stack started for this run…');
      await own.stop();
    }
  }
}

async function runningStack(url: string): Promise<boolean> {
  try {
    const response = await fetch(`${url}/local/info`, { signal: AbortSignal.timeout(1_000) });
    await response.arrayBuffer();
    return response.ok;
  } catch {
    return false;
  }
}

async function stackSettings(url: string): Promise<PipelineSettings | undefined> {
  const response = await fetch(`${url}/local/info`, { signal: AbortSignal.timeout(5_000) });
  if (!response.ok) throw new Error(`${url}/local/info answered ${response.status}: is this a local stack?`);
  return ((await response.json()) as { settings?: PipelineSettings }).settings;
}

class UsageError extends Error {}

/** How this repository's script runs it; the bin passes its own (`whatsapp-webhook-dedup outage-drill`). */
export const OUTAGE_DRILL_PROGRAM = 'npm run outage-drill --';

export function outageDrillHelp(program: string = OUTAGE_DRILL_PROGRAM): string {
  return `${program} [options]   (docs/outage-drill.md)
${OPTIONS_HELP}`;
}

const OPTIONS_HELP = `
  --short                  a quick run (~20 s of traffic) instead of the default (60 s)
  --url URL                the local stack to drive (default: localhost:$PORT if running, else start one)
  --rate λ                 live deliveries per second (default ${DEFAULTS.rate})
  --effect-ms S            mean side-effect time, exponential (default ${DEFAULTS.effectMs})
  --workers c              consumer workers when the drill starts the stack (default ${DEFAULTS.workers})
  --duration s             traffic duration (default ${DEFAULTS.duration})
  --outage-start s         (default ${DEFAULTS.outageStart})
  --outage s               outage length T (default ${DEFAULTS.outage})
  --outage-mode M          mixed | error | timeout | lost-ack (default mixed)
  --interval s             reporting interval (default ${DEFAULTS.interval})
  --meta-timeout-ms ms     how long Meta waits for an answer (default ${DEFAULTS.metaTimeoutMs})
  --redeliver-window s     events delivered this long before the outage are redelivered (default 3)
  --target-wait-ms ms      target mean queue wait for the maxConcurrency recommendation (default 100)
  --seed n                 replay a run
  --report PATH            HTML report (default cli/local/.data/outage-drill-report.html)
  --json                   also print a one-line JSON summary
  --save PATH              also write the run's record as JSON (docs/outage-drill.md prints the committed ones)`;

/** The command's exit code: 0 when every event was effected exactly once, 1 otherwise, 2 for a usage error. */
export function runOutageDrill(
  args: readonly string[],
  program: string = OUTAGE_DRILL_PROGRAM,
): Promise<number> {
  return main(args, program).catch((error: unknown) => {
    console.error(
      error instanceof UsageError
        ? `${error.message}\n\n${outageDrillHelp(program)}`
        : `outage-drill failed: ${error instanceof Error ? error.message : String(error)}`,
    );
    return error instanceof UsageError ? 2 : 1;
  });
}

const invokedDirectly =
  process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href;
if (invokedDirectly) process.exit(await runOutageDrill(process.argv.slice(2)));
