import { Token } from 'aws-cdk-lib';
import { STATUS_LEDGER_MODES } from '../contract/environment.ts';
import { type PipelineSettings, resolveSettings, UnsafeSettingsError } from '../contract/settings.ts';
import { resolveThresholds } from './monitoring/alarms.ts';
import type { WhatsAppWebhookDedupProps } from './whatsapp-webhook-dedup.ts';

/**
 * API Gateway HTTP APIs stop waiting for an integration after 30 s; the receiver must answer (even a 5xx that
 * makes Meta retry) before that, or API Gateway answers 503 while the receiver may still enqueue.
 */
const HTTP_API_INTEGRATION_TIMEOUT_SECONDS = 30;

/** Namespace characters: it prefixes claim keys as `<ns>#<key>`, so `#` and `:` would make keys ambiguous. */
const KEY_NAMESPACE_PATTERN = /^[A-Za-z0-9_.-]{1,64}$/;

/**
 * Every check of the construct's props, before any resource exists (so a refusal costs no bundling): the
 * pipeline settings and their combinations (`resolveSettings`, shared with the local stack), then what only
 * matters in AWS. Returns the resolved settings.
 */
export function validateProps(props: WhatsAppWebhookDedupProps): PipelineSettings {
  const settings = resolveSettings({
    retentionDays: props.retentionDays,
    leaseMarginMs: props.leaseMarginMs,
    consumerTimeoutSeconds: props.consumerTimeoutSeconds,
    receiverTimeoutSeconds: props.receiverTimeoutSeconds,
    batchSize: props.batchSize,
    maxBatchingWindowSeconds: props.maxBatchingWindowSeconds,
    maxConcurrency: props.maxConcurrency,
    visibilityTimeoutSeconds: props.visibilityTimeoutSeconds,
    maxReceiveCount: props.maxReceiveCount,
    maximumMessageSizeBytes: props.maximumMessageSizeBytes,
    queueRetentionDays: props.queueRetentionDays,
    deadLetterRetentionDays: props.deadLetterRetentionDays,
  });
  validateInfrastructureProps(settings, props);
  return settings;
}

/** Checks that only matter in AWS (the local stack has no API Gateway or throttling). */
function validateInfrastructureProps(s: PipelineSettings, props: WhatsAppWebhookDedupProps): void {
  if (s.receiverTimeoutSeconds >= HTTP_API_INTEGRATION_TIMEOUT_SECONDS) {
    throw new UnsafeSettingsError(
      `receiverTimeoutSeconds is ${s.receiverTimeoutSeconds}, but API Gateway gives up after ${HTTP_API_INTEGRATION_TIMEOUT_SECONDS} s and answers 503 while the receiver may still enqueue: use at most ${HTTP_API_INTEGRATION_TIMEOUT_SECONDS - 1}.`,
    );
  }
  if (s.deadLetterRetentionDays < s.queueRetentionDays) {
    throw new UnsafeSettingsError(
      `deadLetterRetentionDays (${s.deadLetterRetentionDays}) is shorter than queueRetentionDays (${s.queueRetentionDays}): SQS keeps a redriven message's original enqueue time, so it could expire in the DLQ before anyone sees it.`,
    );
  }
  if (props.keyNamespace !== undefined && !KEY_NAMESPACE_PATTERN.test(props.keyNamespace)) {
    throw new UnsafeSettingsError(
      `keyNamespace "${props.keyNamespace}" must be 1 to 64 letters, digits, "_", "." or "-": it prefixes claim keys as <ns>#<key>.`,
    );
  }
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
  // The consumer would refuse any other value only when it starts; refuse it at synth instead.
  if (props.statusLedger !== undefined && !STATUS_LEDGER_MODES.includes(props.statusLedger)) {
    throw new UnsafeSettingsError(
      `statusLedger is "${String(props.statusLedger)}": use one of ${STATUS_LEDGER_MODES.join(', ')}.`,
    );
  }
  // Alarm thresholds are checked here too, so that a bad value fails before anything is bundled.
  resolveThresholds(props.alarmThresholds);
  if (props.existingSecretName !== undefined && !Token.isUnresolved(props.existingSecretName)) {
    if (props.existingSecretName.trim() === '') {
      throw new UnsafeSettingsError('existingSecretName is empty: omit it to create a secret.');
    }
  }
}
