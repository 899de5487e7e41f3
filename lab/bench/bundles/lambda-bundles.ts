/**
 * The two Lambda bundles, built with esbuild exactly as the CDK construct's `NodejsFunction`s build them: the
 * options come from `BUNDLING` in lib/defaults.ts (the object the construct passes as `bundling`) and are
 * turned into esbuild options the way aws-cdk-lib's `Bundling.buildEsbuildArgs` turns them into CLI flags.
 * Then each bundle is loaded in fresh Node processes to time its initialisation.
 */
import { execFile } from 'node:child_process';
import { mkdir, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import type { BundlingOptions } from 'aws-cdk-lib/aws-lambda-nodejs';
import { type BuildOptions, build } from 'esbuild';
import { median } from '../../../cli/tools/statistics.ts';
import { consumerEnvironment, receiverEnvironment } from '../../../contract/environment.ts';
import { resolveSettings } from '../../../contract/settings.ts';
import { DEFAULT_SUBSCRIBER_NAME } from '../../../contract/subscribers.ts';
import { BUNDLING, DEFAULT_LOG_LEVEL, NODE_OPTIONS } from '../../../lib/defaults.ts';

const execFileAsync = promisify(execFile);
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/** The entries the construct bundles (lib/whatsapp-webhook-dedup.ts). */
export const LAMBDA_ENTRIES = {
  receiver: join(ROOT, 'functions', 'receiver.ts'),
  consumer: join(ROOT, 'functions', 'consumer.ts'),
} as const;

export type BundleName = keyof typeof LAMBDA_ENTRIES;

/** Options of `BundlingOptions` this mirror understands; any other one set in BUNDLING fails the bench. */
const MIRRORED = new Set([
  'forceDockerBundling',
  'minify',
  'sourceMap',
  'sourcesContent',
  'format',
  'target',
  'mainFields',
  'bundleAwsSDK',
  'banner',
  'externalModules',
]);

/**
 * esbuild options equal to the CLI flags aws-cdk-lib passes for `bundling` (`--bundle --platform=node
 * --target --format --outfile --minify --sourcemap --sources-content=false --external:… --main-fields
 * --banner:js`). With `bundleAwsSDK: true` nothing is external.
 */
export function esbuildOptionsLikeCdk(
  bundling: BundlingOptions,
  entry: string,
  outdir: string,
): BuildOptions {
  const unknown = Object.entries(bundling)
    .filter(([key, value]) => value !== undefined && !MIRRORED.has(key))
    .map(([key]) => key);
  if (unknown.length > 0) {
    throw new Error(
      `lab/bench/bundles: BUNDLING sets ${unknown.join(', ')}, which this mirror does not apply yet.`,
    );
  }
  const format = bundling.format ?? 'cjs';
  return {
    entryPoints: [entry],
    bundle: true,
    platform: 'node',
    target: bundling.target,
    format,
    // The construct's asset holds index.mjs for ESM output, index.js otherwise.
    outfile: join(outdir, format === 'esm' ? 'index.mjs' : 'index.js'),
    minify: bundling.minify ?? false,
    sourcemap: bundling.sourceMap ?? false,
    sourcesContent: bundling.sourcesContent ?? true,
    external: bundling.externalModules ?? (bundling.bundleAwsSDK ? [] : ['@aws-sdk/*']),
    mainFields: bundling.mainFields,
    ...(bundling.banner === undefined ? {} : { banner: { js: bundling.banner } }),
    absWorkingDir: ROOT,
    logLevel: 'error',
  };
}

export interface BuiltBundle {
  readonly name: BundleName;
  readonly file: string;
  readonly bytes: number;
  readonly sourceMapBytes: number;
}

export async function buildLambdaBundles(outdir: string): Promise<BuiltBundle[]> {
  await rm(outdir, { recursive: true, force: true });
  const built: BuiltBundle[] = [];
  for (const [name, entry] of Object.entries(LAMBDA_ENTRIES) as [BundleName, string][]) {
    const options = esbuildOptionsLikeCdk(BUNDLING, entry, join(outdir, name));
    await build(options);
    const file = options.outfile as string;
    const sourceMapBytes = options.sourcemap ? (await stat(`${file}.map`)).size : 0;
    built.push({ name, file, bytes: (await stat(file)).size, sourceMapBytes });
  }
  return built;
}

/** What the construct puts in each function's environment (values are placeholders of the same shape). */
function lambdaEnvironment(name: BundleName): Record<string, string> {
  const settings = resolveSettings();
  const queue = 'https://sqs.us-east-1.amazonaws.com/000000000000';
  // The construct's NODE_OPTIONS and what Lambda itself sets.
  const runtime = { NODE_OPTIONS, AWS_REGION: 'us-east-1', AWS_LAMBDA_FUNCTION_NAME: `bench-${name}` };
  return name === 'receiver'
    ? {
        ...runtime,
        ...receiverEnvironment({
          logLevel: DEFAULT_LOG_LEVEL,
          subscriberQueues: [{ name: DEFAULT_SUBSCRIBER_NAME, queueUrl: `${queue}/deliveries` }],
          quarantineQueueUrl: `${queue}/quarantine`,
          maximumMessageSizeBytes: settings.maximumMessageSizeBytes,
          webhookSecrets: { secretId: 'bench-webhook-secret' },
        }),
      }
    : {
        ...runtime,
        ...consumerEnvironment({
          logLevel: DEFAULT_LOG_LEVEL,
          tableName: 'bench-claims',
          subscriberName: DEFAULT_SUBSCRIBER_NAME,
          quarantineQueueUrl: `${queue}/quarantine`,
          deliveryQueueUrl: `${queue}/deliveries`,
          retentionDays: settings.retentionDays,
          leaseMarginMs: settings.leaseMarginMs,
          maximumMessageSizeBytes: settings.maximumMessageSizeBytes,
        }),
      };
}

/** Runs in the child: the time since the process began, once the module has been imported. */
const PROBE = `
const before = performance.now();
await import(process.argv[1]);
const after = performance.now();
process.stdout.write(JSON.stringify({ importMs: after - before, readyMs: after }));
`;

interface Probe {
  readonly importMs: number;
  readonly readyMs: number;
}

async function probe(file: string, env: Record<string, string>): Promise<Probe> {
  const { stdout } = await execFileAsync(
    process.execPath,
    ['--input-type=module', '-e', PROBE, pathToFileURL(file).href],
    // Only what Lambda would set: no inherited NODE_OPTIONS (tsx's loader) or other variables.
    { env: { PATH: process.env.PATH ?? '', ...env } },
  );
  return JSON.parse(stdout) as Probe;
}

export interface BundleInit {
  readonly name: BundleName;
  /** Median time to ready with the bundle minus the same for an empty module: what the bundle adds. */
  readonly initMs: number;
  /** Median duration of the `import()` itself, timed inside the child. */
  readonly importMs: number;
  readonly spawns: number;
}

/**
 * Times each bundle's load in `spawns` fresh processes, interleaved with an empty module (the baseline:
 * Node's own start-up and `import()` machinery), with the function's environment and NODE_OPTIONS.
 */
export async function timeBundleInit(
  bundles: readonly BuiltBundle[],
  outdir: string,
  spawns: number,
): Promise<{ baselineReadyMs: number; bundles: BundleInit[] }> {
  await mkdir(outdir, { recursive: true });
  const empty = join(outdir, 'empty.mjs');
  await writeFile(empty, 'export const handler = async () => undefined;\n');
  const baseline: number[] = [];
  const ready = new Map<BundleName, number[]>();
  const imports = new Map<BundleName, number[]>();
  for (let i = 0; i < spawns + 1; i++) {
    const emptyProbe = await probe(empty, { NODE_OPTIONS });
    for (const bundle of i % 2 === 0 ? bundles : [...bundles].reverse()) {
      const result = await probe(bundle.file, lambdaEnvironment(bundle.name));
      // The first round warms the page cache and is not counted.
      if (i === 0) continue;
      ready.set(bundle.name, [...(ready.get(bundle.name) ?? []), result.readyMs]);
      imports.set(bundle.name, [...(imports.get(bundle.name) ?? []), result.importMs]);
    }
    if (i > 0) baseline.push(emptyProbe.readyMs);
  }
  const baselineReadyMs = median(baseline);
  return {
    baselineReadyMs,
    bundles: bundles.map((bundle) => ({
      name: bundle.name,
      initMs: median(ready.get(bundle.name) ?? []) - baselineReadyMs,
      importMs: median(imports.get(bundle.name) ?? []),
      spawns,
    })),
  };
}
