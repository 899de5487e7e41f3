/**
 * The local stack's configuration, from the environment, with development defaults that work out of the
 * box. Pipeline settings go through `resolveSettings` like the CDK stack's, so the same rules (visibility
 * timeout ≥ 6 × consumer timeout + window, maxReceiveCount ≥ 5, …) hold locally.
 */
import { ENV, getNumberFromEnv } from 'whatsapp-webhook-dedup/contract/environment';
import {
  type PipelineSettings,
  type PipelineSettingsInput,
  resolveSettings,
} from 'whatsapp-webhook-dedup/contract/settings';
import { DEFAULT_PORT, DEV_APP_SECRET, DEV_VERIFY_TOKEN } from '../local-stack-api.ts';

// Development defaults (cli/local/local-stack-api.ts, where the stack's clients read them too).
export { DEV_APP_SECRET, DEV_VERIFY_TOKEN };

/** Variables only the local stack reads (the handlers' own variables are in contract/environment.ts). */
export const LOCAL_ENV = {
  port: 'PORT',
  /** The address the HTTP server listens on; `--host` wins over it. */
  host: 'LOCAL_HOST',
  consumerTimeoutSeconds: 'LOCAL_CONSUMER_TIMEOUT_SECONDS',
  batchSize: 'LOCAL_BATCH_SIZE',
  maxBatchingWindowSeconds: 'LOCAL_BATCHING_WINDOW_SECONDS',
  maxConcurrency: 'LOCAL_MAX_CONCURRENCY',
  effectDelayMs: 'LOCAL_EFFECT_DELAY_MS',
  verbose: 'LOCAL_VERBOSE',
  /** Path of a module exporting `subscribers`, instead of bin/subscribers.ts. */
  subscribers: 'LOCAL_SUBSCRIBERS',
  /**
   * Path (from the project root) of a module exporting `createConsumer(handlers, env)`, run by every lane
   * instead of the real consumer: for measuring the stack around a consumer (the bench's pass-through floor).
   */
  consumer: 'LOCAL_CONSUMER',
  /**
   * A DynamoDB Local (or other DynamoDB endpoint) already running, instead of starting one: the stack creates a
   * claim table of its own name there and deletes it when it stops (the tests share one emulator this way).
   */
  dynamodbEndpoint: 'LOCAL_DYNAMODB_ENDPOINT',
} as const;

/**
 * Only this machine can reach the stack unless told otherwise: `/local/archive` answers message texts and
 * phone numbers, and `/local/…` changes faults and consumers.
 */
export const DEFAULT_LOCAL_HOST = '127.0.0.1';

export interface LocalStackConfig {
  readonly port: number;
  /** The address the HTTP server listens on: `127.0.0.1`, or what `LOCAL_HOST` / `--host` opens. */
  readonly host: string;
  readonly appSecrets: readonly string[];
  readonly verifyToken: string;
  readonly settings: PipelineSettings;
  /** The settings given through `LOCAL_*` variables, under which each subscriber's own are resolved. */
  readonly settingsInput: PipelineSettingsInput;
  /** Mean duration of the example side effect (ms); the outage drill changes it through `/local/faults`. */
  readonly effectDelayMs: number;
  /** Print the handlers' JSON logs and EMF lines as they come (otherwise one summary line per invocation). */
  readonly verbose: boolean;
  /** Names of the variables that were not set and took their development default. */
  readonly defaultsUsed: readonly string[];
  /** `LOCAL_CONSUMER`: a consumer module every lane runs instead of the real consumer. */
  readonly consumerModule: string | undefined;
  /** `undefined`: the stack starts DynamoDB Local itself. */
  readonly dynamodbEndpoint: string | undefined;
}

export function readLocalConfig(env: NodeJS.ProcessEnv = process.env): LocalStackConfig {
  const defaultsUsed: string[] = [];
  const secretsRaw = env[ENV.appSecrets];
  const appSecrets = (secretsRaw ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  if (appSecrets.length === 0) {
    defaultsUsed.push(ENV.appSecrets);
    appSecrets.push(DEV_APP_SECRET);
  }
  let verifyToken = env[ENV.verifyToken] ?? '';
  if (verifyToken === '') {
    defaultsUsed.push(ENV.verifyToken);
    verifyToken = DEV_VERIFY_TOKEN;
  }
  const port = getNumberFromEnv(LOCAL_ENV.port, DEFAULT_PORT, env);
  if (!Number.isInteger(port) || port < 0 || port > 65_535)
    throw new Error(`PORT must be a TCP port, got ${port}.`);
  const host = (env[LOCAL_ENV.host] ?? '').trim() || DEFAULT_LOCAL_HOST;
  if (!/^[\w.:-]+$/.test(host) && !/^\[[\da-fA-F:.]+\]$/.test(host))
    throw new Error(`${LOCAL_ENV.host} must be an address or host name such as 0.0.0.0, got "${host}".`);

  const input: PipelineSettingsInput = {
    // Unset: the CDK stack's 30 s (visibility timeout 181 s): a 1000-update body can take several seconds on
    // DynamoDB Local. Set e.g. 5 to see failed records come back within half a minute.
    ...optionalNumber(env, LOCAL_ENV.consumerTimeoutSeconds, 'consumerTimeoutSeconds'),
    ...optionalNumber(env, LOCAL_ENV.batchSize, 'batchSize'),
    ...optionalNumber(env, LOCAL_ENV.maxBatchingWindowSeconds, 'maxBatchingWindowSeconds'),
    ...optionalNumber(env, LOCAL_ENV.maxConcurrency, 'maxConcurrency'),
  };
  const effectDelayMs = getNumberFromEnv(LOCAL_ENV.effectDelayMs, 0, env);
  if (effectDelayMs < 0) throw new Error(`${LOCAL_ENV.effectDelayMs} must be >= 0.`);
  return {
    port,
    host: host.replace(/^\[(.*)\]$/, '$1'),
    appSecrets,
    verifyToken,
    settings: resolveSettings(input),
    settingsInput: input,
    effectDelayMs,
    verbose: ['1', 'true', 'yes'].includes((env[LOCAL_ENV.verbose] ?? '').toLowerCase()),
    defaultsUsed,
    consumerModule: env[LOCAL_ENV.consumer] || undefined,
    dynamodbEndpoint: env[LOCAL_ENV.dynamodbEndpoint] || undefined,
  };
}

function optionalNumber<K extends keyof PipelineSettingsInput>(
  env: NodeJS.ProcessEnv,
  name: string,
  key: K,
): Partial<PipelineSettingsInput> {
  const raw = env[name];
  if (raw === undefined || raw === '') return {};
  return { [key]: getNumberFromEnv(name, 0, env) } as Partial<PipelineSettingsInput>;
}
