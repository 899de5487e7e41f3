/**
 * Faults the local stack can be told to simulate (`GET`/`POST /local/faults`), so that Meta's retry
 * behaviour and the consumer's queueing can be seen without a real outage:
 *
 * - `webhook.mode`: how `POST /webhook` behaves.
 *   `up`: normally. `error`: answers `errorStatus` (503) without running the receiver, nothing stored.
 *   `timeout`: never answers and stores nothing (the caller gives up). `lost-ack`: the receiver runs and
 *   stores the events, but its answer is never sent, as when a response is lost on the way back: Meta
 *   retries an event that is already queued. `mixed`: each request is `error` or `lost-ack` at random.
 * - `effect`: how long the example side effect takes, fixed or exponentially distributed around a mean
 *   (the M/M/c model assumes exponential service times).
 */

export const WEBHOOK_FAULT_MODES = ['up', 'error', 'timeout', 'lost-ack', 'mixed'] as const;
export type WebhookFaultMode = (typeof WEBHOOK_FAULT_MODES)[number];
export type WebhookBehaviour = Exclude<WebhookFaultMode, 'mixed'>;
export const EFFECT_DISTRIBUTIONS = ['fixed', 'exponential'] as const;
export type EffectDistribution = (typeof EFFECT_DISTRIBUTIONS)[number];

export interface Faults {
  readonly webhook: { readonly mode: WebhookFaultMode; readonly errorStatus: number };
  readonly effect: { readonly delayMs: number; readonly distribution: EffectDistribution };
}

export const NO_FAULTS: Faults = {
  webhook: { mode: 'up', errorStatus: 503 },
  effect: { delayMs: 0, distribution: 'fixed' },
};

export class InvalidFaultsError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InvalidFaultsError';
  }
}

/** Caps the effect delay so that a typo cannot outlast the consumer's lease and cause takeovers. */
const MAX_EFFECT_DELAY_MS = 60_000;

export class FaultSwitch {
  #faults: Faults;
  readonly #random: () => number;

  constructor(initial: Faults = NO_FAULTS, random: () => number = Math.random) {
    this.#faults = initial;
    this.#random = random;
  }

  get current(): Faults {
    return this.#faults;
  }

  /** Applies a partial update (`{"webhook":{"mode":"error"}}`); refuses unknown modes and bad numbers. */
  update(patch: unknown): Faults {
    if (typeof patch !== 'object' || patch === null || Array.isArray(patch)) {
      throw new InvalidFaultsError('Expected a JSON object such as {"webhook":{"mode":"error"}}.');
    }
    const { webhook = {}, effect = {}, ...rest } = patch as { webhook?: unknown; effect?: unknown };
    if (Object.keys(rest).length > 0)
      throw new InvalidFaultsError(`Unknown setting(s): ${Object.keys(rest).join(', ')}.`);
    const w = asObject(webhook, 'webhook');
    const e = asObject(effect, 'effect');
    const mode = w.mode ?? this.#faults.webhook.mode;
    if (!WEBHOOK_FAULT_MODES.includes(mode as WebhookFaultMode)) {
      throw new InvalidFaultsError(`webhook.mode must be one of ${WEBHOOK_FAULT_MODES.join(', ')}.`);
    }
    const errorStatus = w.errorStatus ?? this.#faults.webhook.errorStatus;
    if (!Number.isInteger(errorStatus) || (errorStatus as number) < 400 || (errorStatus as number) > 599) {
      throw new InvalidFaultsError('webhook.errorStatus must be an HTTP error status (400–599).');
    }
    const delayMs = e.delayMs ?? this.#faults.effect.delayMs;
    if (typeof delayMs !== 'number' || !(delayMs >= 0 && delayMs <= MAX_EFFECT_DELAY_MS)) {
      throw new InvalidFaultsError(
        `effect.delayMs must be a number of milliseconds from 0 to ${MAX_EFFECT_DELAY_MS}.`,
      );
    }
    const distribution = e.distribution ?? this.#faults.effect.distribution;
    if (!EFFECT_DISTRIBUTIONS.includes(distribution as EffectDistribution)) {
      throw new InvalidFaultsError(`effect.distribution must be one of ${EFFECT_DISTRIBUTIONS.join(', ')}.`);
    }
    this.#faults = {
      webhook: { mode: mode as WebhookFaultMode, errorStatus: errorStatus as number },
      effect: { delayMs, distribution: distribution as EffectDistribution },
    };
    return this.#faults;
  }

  /** What the next `POST /webhook` does. */
  nextWebhookBehaviour(): WebhookBehaviour {
    const { mode } = this.#faults.webhook;
    if (mode !== 'mixed') return mode;
    return this.#random() < 0.5 ? 'error' : 'lost-ack';
  }

  /** How long the next side effect takes, in ms. */
  nextEffectDelayMs(): number {
    const { delayMs, distribution } = this.#faults.effect;
    if (delayMs === 0 || distribution === 'fixed') return delayMs;
    // Inverse transform sampling; 1 − u keeps the argument of log in (0, 1].
    return Math.min(MAX_EFFECT_DELAY_MS, -delayMs * Math.log(1 - this.#random()));
  }
}

function asObject(value: unknown, name: string): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new InvalidFaultsError(`${name} must be an object.`);
  }
  return value as Record<string, unknown>;
}
