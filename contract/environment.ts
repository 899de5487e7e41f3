/**
 * The environment of the two Lambda functions: the variable names, the builders that write them (the CDK
 * construct, the local stack, the test pipeline and the bench all use `receiverEnvironment` and
 * `consumerEnvironment`) and the helpers the handlers read them with. Free of the AWS SDK and aws-cdk-lib, so
 * that both the CDK code and the Lambda bundles can import it.
 */
import type { LogLevel } from '@aws-lambda-powertools/logger/types';
import type { ForwardShape } from './forwarding.ts';
import type { LaneName } from './lanes.ts';
import { METRICS_NAMESPACE, SERVICE_NAME } from './metric-names.ts';
import type { StatusLedgerMode } from './status-ledger-mode.ts';
import { encodeSubscriberQueues, type SubscriberQueue } from './subscribers.ts';

/** Variable names shared by the builders below and the handlers (which read them). */
export const ENV = {
  claimTableName: 'CLAIM_TABLE_NAME',
  keyNamespace: 'KEY_NAMESPACE',
  retentionDays: 'RETENTION_DAYS',
  leaseMarginMs: 'LEASE_MARGIN_MS',
  /** Consumer: the queue it reads (held-back records return there). */
  deliveryQueueUrl: 'DELIVERY_QUEUE_URL',
  /** Receiver: JSON from `encodeSubscriberQueues`, every subscriber's queue and fields. */
  subscriberQueues: 'SUBSCRIBER_QUEUES',
  /** Both functions: the pipeline's quarantine queue. */
  quarantineQueueUrl: 'QUARANTINE_QUEUE_URL',
  /** Receiver: the archive queue it copies every delivery to; absent = no archive. */
  archiveQueueUrl: 'ARCHIVE_QUEUE_URL',
  /** Archiver: the bucket it writes the archive objects to. */
  archiveBucketName: 'ARCHIVE_BUCKET_NAME',
  /** Consumer: the subscriber it runs for (metric dimension, logs). */
  subscriberName: 'SUBSCRIBER_NAME',
  /** Consumer: comma-separated phone number ids it handles (contract/event-origin.ts); absent = no limit. */
  subscriberNumbers: 'SUBSCRIBER_NUMBERS',
  /** Consumer: comma-separated WABA ids it handles; absent = no limit. */
  subscriberWabas: 'SUBSCRIBER_WABAS',
  /** Consumer: comma-separated webhook fields it handles; absent = every field. */
  subscriberFields: 'SUBSCRIBER_FIELDS',
  maximumMessageSizeBytes: 'MAXIMUM_MESSAGE_SIZE_BYTES',
  /** `with-handler` (default) or `always`. */
  statusLedger: 'STATUS_LEDGER',
  /** `true` (default) or `false`. */
  claimUnhandledEvents: 'CLAIM_UNHANDLED_EVENTS',
  /** Consumer: ceiling of the backoff after a first failed receive, in seconds (contract/retry-budget.ts). */
  retryBaseDelaySeconds: 'RETRY_BASE_DELAY_SECONDS',
  /** Consumer: ceiling of every backoff and `RetryLater` delay, in seconds. */
  retryMaxDelaySeconds: 'RETRY_MAX_DELAY_SECONDS',
  /** In AWS: the Secrets Manager secret holding {@link WebhookSecretValue}. */
  webhookSecretId: 'WHATSAPP_SECRET_ID',
  /** Locally: comma-separated app secrets (used when no secret id is set). */
  appSecrets: 'WHATSAPP_APP_SECRETS',
  verifyToken: 'WHATSAPP_VERIFY_TOKEN',
  /** Consumer: the lane it reads, `message` or `status` (contract/lanes.ts); absent = `status`. */
  lane: 'LANE',
  /** Consumer: `true` when its lane is a FIFO queue run in conversation order; absent = `false`. */
  laneOrdered: 'LANE_ORDERED',
  /**
   * Consumer of an ordered lane: the lane's DLQ, where the consumer itself moves a record failing on its
   * `LANE_MAX_RECEIVES`-th receive (contract/lanes.ts); absent = SQS redrive only.
   */
  laneDeadLetterQueueUrl: 'LANE_DEAD_LETTER_QUEUE_URL',
  laneMaxReceives: 'LANE_MAX_RECEIVES',
  /**
   * Consumer in AWS: the Secrets Manager secret holding the deployment's log digest key (functions/commons/
   * log-digest.ts), which the stack generates.
   */
  logDigestSecretId: 'LOG_DIGEST_SECRET_ID',
  /** Consumer, locally: the log digest key itself (used when no secret id is set). */
  logDigestKey: 'LOG_DIGEST_KEY',
  /**
   * Receiver in AWS: the Secrets Manager secret holding the provenance key (functions/commons/provenance.ts),
   * which the stack generates and only the receiver and the operator read.
   */
  provenanceSecretId: 'PROVENANCE_SECRET_ID',
  /** Receiver, locally: the provenance key itself (used when no secret id is set). */
  provenanceKey: 'PROVENANCE_KEY',
  /** Local stack only: file the example handler appends each effected key to. */
  effectsJournal: 'LOCAL_EFFECTS_JOURNAL',
  /** Forwarding consumer: JSON {@link ForwardEnvironment}, where it forwards and with which secret. */
  forward: 'FORWARD',
} as const;

/**
 * Where a forwarding consumer sends and what it signs with: the secret's id in AWS (`appSecret`: the webhook
 * secret, whose first `appSecrets` entry signs; else a plain-text secret), or the secret itself locally.
 */
export interface ForwardEnvironment {
  readonly url: string;
  readonly shape: ForwardShape;
  readonly timeoutSeconds: number;
  readonly secret: { readonly secretId: string; readonly appSecret: boolean } | { readonly value: string };
  /** One POST per delivery part. Absent: one per event. */
  readonly batch?: boolean;
  /**
   * Headers added to every POST: the secret holding their JSON object in AWS, or the object itself. Absent:
   * none.
   */
  readonly headers?: { readonly secretId: string } | { readonly value: Readonly<Record<string, string>> };
  /** POSTs in flight at once within one invocation (`maxInFlight`'s per-invocation bound). Absent: no bound. */
  readonly postsInFlight?: number;
}

/** Reads `FORWARD` back; a malformed value fails fast at the forwarding consumer's start. */
export function decodeForwardEnvironment(raw: string | undefined): ForwardEnvironment {
  if (raw === undefined || raw === '')
    throw new Error(`${ENV.forward} is not set: this consumer forwards nowhere.`);
  const value = JSON.parse(raw) as Partial<ForwardEnvironment>;
  const secret = value.secret as Record<string, unknown> | undefined;
  const secretOk =
    secret !== undefined &&
    ((typeof secret.secretId === 'string' && typeof secret.appSecret === 'boolean') ||
      typeof secret.value === 'string');
  const headers = value.headers as Record<string, unknown> | undefined;
  const headersOk =
    headers === undefined ||
    (typeof headers === 'object' &&
      headers !== null &&
      (typeof headers.secretId === 'string' ||
        (typeof headers.value === 'object' && headers.value !== null)));
  const postsOk =
    value.postsInFlight === undefined ||
    (Number.isInteger(value.postsInFlight) && (value.postsInFlight as number) >= 1);
  if (
    typeof value.url !== 'string' ||
    (value.shape !== 'meta' && value.shape !== 'event') ||
    typeof value.timeoutSeconds !== 'number' ||
    !secretOk ||
    (value.batch !== undefined && typeof value.batch !== 'boolean') ||
    !headersOk ||
    !postsOk
  ) {
    throw new Error(`${ENV.forward} is not a forward destination: ${raw.slice(0, 200)}`);
  }
  return value as ForwardEnvironment;
}

/** The JSON stored in the Secrets Manager secret. */
export interface WebhookSecretValue {
  /** One or more Meta app secrets; several at once during rotation or with two apps on one WABA. */
  appSecrets: string[];
  verifyToken: string;
}

export class MissingConfigurationError extends Error {
  constructor(name: string) {
    super(`Environment variable ${name} is required but not set.`);
    this.name = 'MissingConfigurationError';
  }
}

/** Fails fast on a missing variable instead of failing later with an undefined. */
export function getStringFromEnv(name: string, env: NodeJS.ProcessEnv = process.env): string {
  const value = env[name];
  if (value === undefined || value === '') throw new MissingConfigurationError(name);
  return value;
}

export function getNumberFromEnv(
  name: string,
  fallback: number,
  env: NodeJS.ProcessEnv = process.env,
): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value))
    throw new Error(`Environment variable ${name} must be a number, got "${raw}".`);
  return value;
}

/** Reads one of `allowed` from the environment, or `fallback` when unset; anything else fails fast. */
export function getChoiceFromEnv<const T extends string>(
  name: string,
  allowed: readonly T[],
  fallback: T,
  env: NodeJS.ProcessEnv = process.env,
): T {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!(allowed as readonly string[]).includes(raw)) {
    throw new Error(`Environment variable ${name} must be one of ${allowed.join(', ')}, got "${raw}".`);
  }
  return raw as T;
}

/** Where the receiver gets the webhook secrets from. */
export type WebhookSecretsSetting =
  /** In AWS: the Secrets Manager secret (ARN or name) holding {@link WebhookSecretValue}. */
  | { readonly secretId: string }
  /** Locally: the values themselves. */
  | { readonly appSecrets: readonly string[]; readonly verifyToken?: string };

export interface PowertoolsEnvironmentInput {
  /** Powertools `POWERTOOLS_LOG_LEVEL`; left unset when absent (Powertools then logs at INFO). */
  readonly logLevel?: LogLevel;
}

export interface ReceiverEnvironmentInput extends PowertoolsEnvironmentInput {
  /** Every subscriber's queue (and fields): the receiver sends each delivery to those that want it. */
  readonly subscriberQueues: readonly SubscriberQueue[];
  /** Where the receiver quarantines bodies it cannot enqueue (invalid JSON, not an envelope, too large). */
  readonly quarantineQueueUrl: string;
  readonly maximumMessageSizeBytes: number;
  readonly webhookSecrets: WebhookSecretsSetting;
  /** The archive queue (docs/design.md, "Archive"); no variable when absent, and nothing is archived. */
  readonly archiveQueueUrl?: string | undefined;
  /**
   * Where the provenance key comes from: the secret the stack generated (AWS), or the key itself (the local
   * stack). Neither: bodies are kept without proof, and `ops` refuses to send them back in.
   */
  readonly provenance?: { readonly secretId: string } | { readonly key: string };
}

export interface ConsumerEnvironmentInput extends PowertoolsEnvironmentInput {
  readonly tableName: string;
  /** Prefix of claim and ledger keys (`<ns>#…`); no variable when absent. */
  readonly keyNamespace?: string | undefined;
  /** The subscriber this consumer runs for. */
  readonly subscriberName: string;
  /** The webhook fields it handles; no variable when absent (every field). Never empty. */
  readonly fields?: readonly string[] | undefined;
  /** The phone number ids it handles; no variable when absent. Never empty. */
  readonly numbers?: readonly string[] | undefined;
  /** The WABA ids it handles; no variable when absent. Never empty. */
  readonly wabas?: readonly string[] | undefined;
  /** The pipeline's quarantine queue (the subscriber's DLQ is left to SQS redrive). */
  readonly quarantineQueueUrl: string;
  /** The queue the consumer reads: held-back records are given their return time there. */
  readonly deliveryQueueUrl: string;
  readonly retentionDays: number;
  readonly leaseMarginMs: number;
  /** Quarantined records are re-sent to the quarantine queue, which has the same size limit. */
  readonly maximumMessageSizeBytes: number;
  /** Local stack and tests only: the file the shipped example handler journals each effect to. */
  readonly effectsJournal?: string;
  /** No variable when absent (the consumer's default, `with-handler`). */
  readonly statusLedger?: StatusLedgerMode;
  /** No variable when absent (the consumer's default, true). */
  readonly claimUnhandledEvents?: boolean;
  /**
   * The retry delays of the budget `resolveSettings` checked against the queue's `maxReceiveCount`; give both
   * whenever the settings are at hand. No variable when absent (the consumer's defaults).
   */
  readonly retryBaseDelaySeconds?: number;
  readonly retryMaxDelaySeconds?: number;
  /** No variable when absent (the status lane). */
  readonly lane?: LaneName;
  /** No variable when absent (unordered). */
  readonly laneOrdered?: boolean;
  /** An ordered lane's own dead-lettering (give both, or neither: SQS redrive only). */
  readonly laneDeadLetters?: { readonly queueUrl: string; readonly maxReceives: number };
  /**
   * Where the log digest key comes from: the secret the stack generated (AWS), or the key itself (the local
   * stack). Neither: a random key per container (digests then correlate only within one container).
   */
  readonly logDigest?: { readonly secretId: string } | { readonly key: string };
  /** A forward subscriber's destination; no variable when absent (a code subscriber). */
  readonly forward?: ForwardEnvironment;
}

/** The receiver Lambda's variables (values may be CDK tokens: they are strings). */
export function receiverEnvironment(input: ReceiverEnvironmentInput): Record<string, string> {
  return {
    ...powertoolsEnvironment(input),
    [ENV.subscriberQueues]: encodeSubscriberQueues(input.subscriberQueues),
    [ENV.quarantineQueueUrl]: input.quarantineQueueUrl,
    [ENV.maximumMessageSizeBytes]: String(input.maximumMessageSizeBytes),
    ...(input.archiveQueueUrl === undefined ? {} : { [ENV.archiveQueueUrl]: input.archiveQueueUrl }),
    ...webhookSecretsEnvironment(input.webhookSecrets),
    ...generatedKeyEnvironment(input.provenance, {
      secretId: ENV.provenanceSecretId,
      key: ENV.provenanceKey,
    }),
  };
}

/** The archiver Lambda's variables: the bucket it writes the archive to. */
export function archiverEnvironment(
  input: PowertoolsEnvironmentInput & { readonly bucketName: string },
): Record<string, string> {
  return { ...powertoolsEnvironment(input), [ENV.archiveBucketName]: input.bucketName };
}

/** The consumer Lambda's variables (values may be CDK tokens: they are strings). */
export function consumerEnvironment(input: ConsumerEnvironmentInput): Record<string, string> {
  return {
    ...powertoolsEnvironment(input),
    [ENV.claimTableName]: input.tableName,
    [ENV.retentionDays]: String(input.retentionDays),
    [ENV.leaseMarginMs]: String(input.leaseMarginMs),
    [ENV.subscriberName]: input.subscriberName,
    [ENV.quarantineQueueUrl]: input.quarantineQueueUrl,
    [ENV.deliveryQueueUrl]: input.deliveryQueueUrl,
    [ENV.maximumMessageSizeBytes]: String(input.maximumMessageSizeBytes),
    ...(input.fields === undefined
      ? {}
      : { [ENV.subscriberFields]: commaList(ENV.subscriberFields, input.fields) }),
    ...(input.numbers === undefined
      ? {}
      : { [ENV.subscriberNumbers]: commaList(ENV.subscriberNumbers, input.numbers) }),
    ...(input.wabas === undefined
      ? {}
      : { [ENV.subscriberWabas]: commaList(ENV.subscriberWabas, input.wabas) }),
    ...(input.keyNamespace === undefined ? {} : { [ENV.keyNamespace]: input.keyNamespace }),
    ...(input.effectsJournal === undefined ? {} : { [ENV.effectsJournal]: input.effectsJournal }),
    ...(input.statusLedger === undefined ? {} : { [ENV.statusLedger]: input.statusLedger }),
    ...(input.claimUnhandledEvents === undefined
      ? {}
      : { [ENV.claimUnhandledEvents]: String(input.claimUnhandledEvents) }),
    ...(input.retryBaseDelaySeconds === undefined
      ? {}
      : { [ENV.retryBaseDelaySeconds]: String(input.retryBaseDelaySeconds) }),
    ...(input.retryMaxDelaySeconds === undefined
      ? {}
      : { [ENV.retryMaxDelaySeconds]: String(input.retryMaxDelaySeconds) }),
    ...(input.lane === undefined ? {} : { [ENV.lane]: input.lane }),
    ...(input.laneOrdered === undefined ? {} : { [ENV.laneOrdered]: String(input.laneOrdered) }),
    ...(input.laneDeadLetters === undefined
      ? {}
      : {
          [ENV.laneDeadLetterQueueUrl]: input.laneDeadLetters.queueUrl,
          [ENV.laneMaxReceives]: String(input.laneDeadLetters.maxReceives),
        }),
    ...generatedKeyEnvironment(input.logDigest, { secretId: ENV.logDigestSecretId, key: ENV.logDigestKey }),
    ...(input.forward === undefined ? {} : { [ENV.forward]: JSON.stringify(input.forward) }),
  };
}

/** A key the stack generated: its secret's id in AWS, the key itself locally; nothing when neither. */
type GeneratedKeySource = { readonly secretId: string } | { readonly key: string } | undefined;

function generatedKeyEnvironment(
  source: GeneratedKeySource,
  names: { readonly secretId: string; readonly key: string },
): Record<string, string> {
  if (source === undefined) return {};
  return 'secretId' in source ? { [names.secretId]: source.secretId } : { [names.key]: source.key };
}

/**
 * One service name for both functions: Powertools puts it in a `service` dimension that the dashboard and
 * alarms query (metric-names.ts).
 */
export function powertoolsEnvironment({ logLevel }: PowertoolsEnvironmentInput): Record<string, string> {
  return {
    POWERTOOLS_SERVICE_NAME: SERVICE_NAME,
    POWERTOOLS_METRICS_NAMESPACE: METRICS_NAMESPACE,
    ...(logLevel === undefined ? {} : { POWERTOOLS_LOG_LEVEL: logLevel }),
  };
}

function commaList(variable: string, items: readonly string[]): string {
  // Read back by splitting on commas: an empty list or an item with a comma would not survive the trip.
  if (items.length === 0 || items.some((item) => item === '' || item.includes(','))) {
    throw new Error(`${variable} is comma-separated: give non-empty items without commas.`);
  }
  return items.join(',');
}

function webhookSecretsEnvironment(secrets: WebhookSecretsSetting): Record<string, string> {
  if ('secretId' in secrets) return { [ENV.webhookSecretId]: secrets.secretId };
  // The receiver splits the variable on commas, so a secret with one would come back as two.
  if (secrets.appSecrets.some((secret) => secret.includes(','))) {
    throw new Error(`${ENV.appSecrets} is comma-separated: an app secret cannot contain a comma.`);
  }
  return {
    [ENV.appSecrets]: secrets.appSecrets.join(','),
    ...(secrets.verifyToken === undefined ? {} : { [ENV.verifyToken]: secrets.verifyToken }),
  };
}
