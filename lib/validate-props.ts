import { existsSync } from 'node:fs';
import * as path from 'node:path';
import { Token } from 'aws-cdk-lib';
import { DEFAULT_ARCHIVE_RETENTION_DAYS } from '../contract/archive.ts';
import { DEFAULT_WEBHOOK_ENDPOINT, WEBHOOK_ENDPOINTS, type WebhookEndpoint } from '../contract/capacity.ts';
import { redriveMaxReceiveCount, resolveMessageLane } from '../contract/lanes.ts';
import {
  type LaneStays,
  type PipelineSettings,
  type PipelineSettingsInput,
  resolveSettings,
  retentionDaysProblem,
  UnsafeSettingsError,
} from '../contract/settings.ts';
import { subscriberIdPart, subscriberOutputKeys } from '../contract/stack-outputs.ts';
import { STATUS_LEDGER_MODES } from '../contract/status-ledger-mode.ts';
import {
  DEFAULT_SUBSCRIBER_NAME,
  type ResolvedSubscriber,
  resolveSubscribers,
} from '../contract/subscribers.ts';
import type { ArchiveProp } from './builders/archive.ts';
import { type PeakSizing, sizeForPeak } from './capacity-sizing.ts';
import { DEFAULT_CONSUMER_ENTRY } from './defaults.ts';
import { resolveThresholds } from './monitoring/alarms.ts';
import type { WhatsAppWebhookDedupProps } from './whatsapp-webhook-dedup-props.ts';

/**
 * API Gateway HTTP APIs stop waiting for an integration after 30 s; the receiver must answer (even a 5xx that
 * makes Meta retry) before that, or API Gateway answers 503 while the receiver may still enqueue.
 */
const HTTP_API_INTEGRATION_TIMEOUT_SECONDS = 30;

/** Namespace characters: it prefixes claim keys as `<ns>#<key>`, so `#` and `:` would make keys ambiguous. */
const KEY_NAMESPACE_PATTERN = /^[A-Za-z0-9_.-]{1,64}$/;

/** The props, checked: the pipeline's settings and every subscriber with its own, in definition order. */
export interface ValidatedProps {
  readonly settings: PipelineSettings;
  /**
   * Never empty; without the `subscribers` prop, the one `default` subscriber of today's single consumer. Each
   * lane's `maxConcurrency` the props leave unset is sized for the expected peak (`capacity`).
   */
  readonly subscribers: readonly ResolvedSubscriber[];
  /** The front door's throttle, warm throughput and warnings for the expected peak. */
  readonly capacity: PeakSizing;
  /** Days the delivery archive keeps a delivery; `undefined` with `archive: false` (no archive is built). */
  readonly archiveRetentionDays: number | undefined;
}

/**
 * Every check of the construct's props, before any resource exists (so a refusal costs no bundling): the
 * pipeline settings and their combinations (`resolveSettings`, shared with the local stack), the subscribers
 * (`resolveSubscribers`, shared too), each subscriber's claim retention against its lanes' retry budgets,
 * then what only matters in AWS.
 */
export function validateProps(props: WhatsAppWebhookDedupProps): ValidatedProps {
  const input: PipelineSettingsInput = {
    retentionDays: props.retentionDays,
    leaseMarginMs: props.leaseMarginMs,
    consumerTimeoutSeconds: props.consumerTimeoutSeconds,
    receiverTimeoutSeconds: props.receiverTimeoutSeconds,
    batchSize: props.batchSize,
    maxBatchingWindowSeconds: props.maxBatchingWindowSeconds,
    maxConcurrency: props.maxConcurrency,
    visibilityTimeoutSeconds: props.visibilityTimeoutSeconds,
    maxReceiveCount: props.maxReceiveCount,
    retryBaseDelaySeconds: props.retryBaseDelaySeconds,
    retryMaxDelaySeconds: props.retryMaxDelaySeconds,
    maximumMessageSizeBytes: props.maximumMessageSizeBytes,
    queueRetentionDays: props.queueRetentionDays,
    deadLetterRetentionDays: props.deadLetterRetentionDays,
  };
  const settings = resolveSettings(input);
  validateInfrastructureProps(settings, props);
  const subscribers = resolveConstructSubscribers(props, input, settings);
  for (const subscriber of subscribers) {
    // Without the subscribers prop, the one subscriber's retention is the construct's own prop: no prefix.
    checkRetentionFloor(subscriber, props.subscribers === undefined ? '' : `Subscriber ${subscriber.name}: `);
    validateSubscriber(subscriber);
  }
  const archiveRetentionDays = resolveArchiveRetentionDays(props.archive);
  const capacity = sizeForPeak(props, subscribers);
  return { settings, subscribers: capacity.subscribers, capacity, archiveRetentionDays };
}

/** The retention the archive prop asks for, or `undefined` when there is no archive; a bad value fails synth. */
function resolveArchiveRetentionDays(prop: ArchiveProp | undefined): number | undefined {
  if (prop === false) return undefined;
  const days = prop?.retentionDays ?? DEFAULT_ARCHIVE_RETENTION_DAYS;
  if (!Number.isInteger(days) || days < 1) {
    throw new UnsafeSettingsError(
      `archive.retentionDays must be a whole number of days, at least 1; got ${days}.`,
    );
  }
  return days;
}

/**
 * Without `subscribers`, today's single consumer as the subscriber `default` (its entry, namespace and
 * settings from the construct's props). With them, the construct-wide `statusLedger`, `claimUnhandledEvents`
 * and `consumerMemorySize` are each subscriber's defaults; `consumerEntry` and `keyNamespace` describe one
 * consumer, so they are refused rather than silently applied to one subscriber or to all.
 */
function resolveConstructSubscribers(
  props: WhatsAppWebhookDedupProps,
  input: PipelineSettingsInput,
  settings: PipelineSettings,
): ResolvedSubscriber[] {
  if (props.subscribers === undefined) {
    return [
      {
        name: DEFAULT_SUBSCRIBER_NAME,
        entry: props.consumerEntry ?? DEFAULT_CONSUMER_ENTRY,
        forward: undefined,
        fields: undefined,
        numbers: undefined,
        wabas: undefined,
        keyNamespace: props.keyNamespace,
        settings,
        statusLedger: props.statusLedger,
        claimUnhandledEvents: props.claimUnhandledEvents,
        memorySize: props.consumerMemorySize,
        messageLane: resolveMessageLane(input, props.messageLane, undefined),
      },
    ];
  }
  const oneConsumerProps = (['consumerEntry', 'keyNamespace'] as const).filter(
    (prop) => props[prop] !== undefined,
  );
  if (oneConsumerProps.length > 0) {
    throw new UnsafeSettingsError(
      `${oneConsumerProps.join(' and ')} describe the single default consumer: with subscribers, give each subscriber its own entry and keyNamespace instead.`,
    );
  }
  const resolved = resolveSubscribers(props.subscribers, input, props.messageLane).map((subscriber) => ({
    ...subscriber,
    // A path in the user's project: relative to the CDK app's working directory (where `cdk synth` runs), as
    // NodejsFunction reads its own `entry`.
    entry: subscriber.entry === undefined ? undefined : path.resolve(subscriber.entry),
    statusLedger: subscriber.statusLedger ?? props.statusLedger,
    claimUnhandledEvents: subscriber.claimUnhandledEvents ?? props.claimUnhandledEvents,
    memorySize: subscriber.memorySize ?? props.consumerMemorySize,
  }));
  const byIdPart = new Map<string, string>();
  for (const { name } of resolved) {
    const other = byIdPart.get(subscriberIdPart(name));
    if (other !== undefined) {
      throw new UnsafeSettingsError(
        `Subscribers ${other} and ${name} would share the construct id and stack output keys ${subscriberIdPart(name)}…: rename one.`,
      );
    }
    byIdPart.set(subscriberIdPart(name), name);
  }
  // `x`'s message lane outputs (`XMessageDeadLetterQueueUrl`) are `x-message`'s status lane outputs.
  const byOutputKey = new Map<string, string>();
  for (const { name } of resolved) {
    for (const key of Object.values(subscriberOutputKeys(name))) {
      const other = byOutputKey.get(key);
      if (other !== undefined) {
        throw new UnsafeSettingsError(
          `Subscribers ${other} and ${name} would share the stack output key ${key}: rename one.`,
        );
      }
      byOutputKey.set(key, name);
    }
  }
  for (const { name, entry } of resolved) {
    if (entry !== undefined && !existsSync(entry)) {
      throw new UnsafeSettingsError(
        `Subscriber ${name}: entry ${path.relative(process.cwd(), entry)} does not exist (entries are paths from the CDK app's directory, ${process.cwd()}, or absolute).`,
      );
    }
  }
  return resolved;
}

/** Checks that only matter in AWS (the local stack has no front door of its own or throttling). */
function validateInfrastructureProps(s: PipelineSettings, props: WhatsAppWebhookDedupProps): void {
  const endpoint = checkEndpoint(props);
  if (endpoint === 'http-api' && s.receiverTimeoutSeconds >= HTTP_API_INTEGRATION_TIMEOUT_SECONDS) {
    throw new UnsafeSettingsError(
      `receiverTimeoutSeconds is ${s.receiverTimeoutSeconds}, but API Gateway gives up after ${HTTP_API_INTEGRATION_TIMEOUT_SECONDS} s and answers 503 while the receiver may still enqueue: use at most ${HTTP_API_INTEGRATION_TIMEOUT_SECONDS - 1}.`,
    );
  }
  checkDeadLetterRetention(s, '');
  if (props.keyNamespace !== undefined) checkKeyNamespace(props.keyNamespace, '');
  const rate = props.throttlingRateLimit;
  const burst = props.throttlingBurstLimit;
  if (
    (rate !== undefined && !(rate > 0)) ||
    (burst !== undefined && !(burst > 0 && Number.isInteger(burst)))
  ) {
    throw new UnsafeSettingsError(
      'throttlingRateLimit must be > 0 and throttlingBurstLimit a positive integer: 0 would reject every webhook.',
    );
  }
  const reserved = props.receiverReservedConcurrency;
  if (reserved !== undefined && !(Number.isInteger(reserved) && reserved >= 1)) {
    throw new UnsafeSettingsError(
      `receiverReservedConcurrency is ${reserved}: use a whole number >= 1 (0 would throttle every webhook).`,
    );
  }
  if (props.statusLedger !== undefined) checkStatusLedger(props.statusLedger, '');
  // Alarm thresholds are checked here too, so that a bad value fails before anything is bundled.
  resolveThresholds(props.alarmThresholds);
  if (props.existingSecretName !== undefined && !Token.isUnresolved(props.existingSecretName)) {
    if (props.existingSecretName.trim() === '') {
      throw new UnsafeSettingsError('existingSecretName is empty: omit it to create a secret.');
    }
  }
}

/**
 * The front door, and the throttle props that belong to the other one: each door has its own throttle, so a
 * prop of the other door would be silently ignored; it is refused instead, naming the one that applies.
 */
function checkEndpoint(props: WhatsAppWebhookDedupProps): WebhookEndpoint {
  const endpoint = props.endpoint ?? DEFAULT_WEBHOOK_ENDPOINT;
  if (!(WEBHOOK_ENDPOINTS as readonly string[]).includes(endpoint)) {
    throw new UnsafeSettingsError(`endpoint is "${endpoint}": use one of ${WEBHOOK_ENDPOINTS.join(', ')}.`);
  }
  if (endpoint === 'function-url') {
    const routeThrottle = (['throttlingRateLimit', 'throttlingBurstLimit'] as const).filter(
      (prop) => props[prop] !== undefined,
    );
    if (routeThrottle.length > 0) {
      throw new UnsafeSettingsError(
        `${routeThrottle.join(' and ')} throttle the HTTP API's route; with endpoint 'function-url' there is no route: the receiver's reserved concurrency is the throttle, set receiverReservedConcurrency instead.`,
      );
    }
  } else if (props.receiverReservedConcurrency !== undefined) {
    throw new UnsafeSettingsError(
      "receiverReservedConcurrency is the function URL's throttle; with endpoint 'http-api' the route throttles (throttlingRateLimit, throttlingBurstLimit): set those, or endpoint: 'function-url'.",
    );
  }
  return endpoint;
}

/** The same AWS-only checks on one subscriber's own settings and namespace. */
function validateSubscriber(subscriber: ResolvedSubscriber): void {
  const context = `Subscriber ${subscriber.name}: `;
  checkDeadLetterRetention(subscriber.settings, context);
  if (subscriber.messageLane !== undefined) {
    checkDeadLetterRetention(subscriber.messageLane.settings, `${context}messageLane: `);
  }
  if (subscriber.keyNamespace !== undefined) checkKeyNamespace(subscriber.keyNamespace, context);
  if (subscriber.statusLedger !== undefined) checkStatusLedger(subscriber.statusLedger, context);
}

/**
 * A subscriber's lanes as the retention floor sees them: each with the receives its queue allows before it
 * redrives. An ordered lane's queue redrives `ORDERED_LANE_REDRIVE_MARGIN` receives after its consumer's own
 * budget, and a record queued behind a failing one is received with it all along, its claim unchecked.
 */
export function laneStays(subscriber: Pick<ResolvedSubscriber, 'settings' | 'messageLane'>): LaneStays {
  const lane = subscriber.messageLane;
  return {
    'status lane': subscriber.settings,
    ...(lane === undefined
      ? {}
      : { 'message lane': { ...lane.settings, maxReceiveCount: redriveMaxReceiveCount(lane) } }),
  };
}

/** The claims' retention against Meta's 7 days plus the longest budget of the subscriber's lanes. */
function checkRetentionFloor(subscriber: ResolvedSubscriber, context: string): void {
  const problem = retentionDaysProblem(subscriber.settings.retentionDays, laneStays(subscriber));
  if (problem !== undefined) throw new UnsafeSettingsError(`${context}${problem}`);
}

function checkDeadLetterRetention(s: PipelineSettings, context: string): void {
  if (s.deadLetterRetentionDays < s.queueRetentionDays) {
    throw new UnsafeSettingsError(
      `${context}deadLetterRetentionDays (${s.deadLetterRetentionDays}) is shorter than queueRetentionDays (${s.queueRetentionDays}): SQS keeps a redriven message's original enqueue time, so it could expire in the DLQ before anyone sees it.`,
    );
  }
}

function checkKeyNamespace(keyNamespace: string, context: string): void {
  if (!KEY_NAMESPACE_PATTERN.test(keyNamespace)) {
    throw new UnsafeSettingsError(
      `${context}keyNamespace "${keyNamespace}" must be 1 to 64 letters, digits, "_", "." or "-": it prefixes claim keys as <ns>#<key>.`,
    );
  }
}

// The consumer would refuse any other value only when it starts; refuse it at synth instead.
function checkStatusLedger(mode: string, context: string): void {
  if (!(STATUS_LEDGER_MODES as readonly string[]).includes(mode)) {
    throw new UnsafeSettingsError(
      `${context}statusLedger is "${mode}": use one of ${STATUS_LEDGER_MODES.join(', ')}.`,
    );
  }
}
