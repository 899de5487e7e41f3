/**
 * The secrets failures that change the receiver's HTTP answer (the queue's own are in
 * `functions/queue/errors.ts`). Kept apart from the adapter that throws them, so the orchestration can tell
 * them apart without importing an AWS SDK.
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
