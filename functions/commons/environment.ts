/**
 * Environment variable names shared by the CDK construct (which sets them), the local stack (which sets
 * them) and the handlers (which read them).
 */
export const ENV = {
  claimTableName: 'CLAIM_TABLE_NAME',
  keyNamespace: 'KEY_NAMESPACE',
  retentionDays: 'RETENTION_DAYS',
  leaseMarginMs: 'LEASE_MARGIN_MS',
  deliveryQueueUrl: 'DELIVERY_QUEUE_URL',
  deadLetterQueueUrl: 'DEAD_LETTER_QUEUE_URL',
  maximumMessageSizeBytes: 'MAXIMUM_MESSAGE_SIZE_BYTES',
  /** In AWS: the Secrets Manager secret holding {@link WebhookSecretValue}. */
  webhookSecretId: 'WHATSAPP_SECRET_ID',
  /** Locally: comma-separated app secrets (used when no secret id is set). */
  appSecrets: 'WHATSAPP_APP_SECRETS',
  verifyToken: 'WHATSAPP_VERIFY_TOKEN',
  /** Local stack only: file the example handler appends each effected key to. */
  effectsJournal: 'LOCAL_EFFECTS_JOURNAL',
} as const;

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
