/**
 * The receiver's failures that change the HTTP answer. Kept apart from the adapters that throw them, so the
 * orchestration can tell them apart without importing an AWS SDK.
 */

/** The secrets are missing or malformed: an operator has to fix the configuration (HTTP 500). */
export class WebhookSecretsMisconfiguredError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'WebhookSecretsMisconfiguredError';
  }
}

/** The secret store could not be read right now (throttling, network): worth a retry (HTTP 503). */
export class WebhookSecretsUnavailableError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'WebhookSecretsUnavailableError';
  }
}

/** Some message is still unstored after the retries (HTTP 503, so that Meta retries the delivery). */
export class EnqueueFailedError extends Error {
  constructor(
    readonly queue: 'delivery' | 'dead-letter',
    /** Messages not stored. */
    readonly unstored: number,
    readonly total: number,
    /** The last SQS error name or entry code seen, for logs. */
    readonly lastError: string,
  ) {
    super(`${unstored} of ${total} messages could not be stored in the ${queue} queue (${lastError}).`);
    this.name = 'EnqueueFailedError';
  }
}
