/**
 * Forward subscribers (docs/design.md, "Forwarding"): a subscriber that is a destination URL instead of code.
 * What the construct, the local stack and the forwarding consumer share: the definition, its defaults and its
 * checks. Plain TypeScript: no aws-cdk-lib, no AWS SDK.
 */

/**
 * `meta`: each fresh event in Meta's own envelope, signed `X-Hub-Signature-256`, for a consumer written for
 * Meta's webhook. `event`: the event as this project names it, signed as Standard Webhooks specifies.
 */
export type ForwardShape = 'meta' | 'event';

export const FORWARD_SHAPES: readonly ForwardShape[] = ['meta', 'event'];

/**
 * How long one POST may take before it counts as failed and is retried: long enough for a destination that
 * does its work before it answers, short against the consumer's timeout, which must hold a batch's POSTs.
 */
export const DEFAULT_FORWARD_TIMEOUT_SECONDS = 10;

/** The longest a POST may take: a consumer's batch of POSTs must fit well inside its own timeout. */
export const MAX_FORWARD_TIMEOUT_SECONDS = 60;

export interface ForwardDefinition {
  /**
   * The destination: an https URL (the local stack also takes http to a loopback address).
   * @example
   * ```typescript
   * import { App, Stack } from 'aws-cdk-lib';
   * import { WhatsAppWebhookDedup } from 'whatsapp-webhook-dedup';
   *
   * const stack = new Stack(new App(), 'SupportWebhook');
   * new WhatsAppWebhookDedup(stack, 'Webhook', {
   *   subscribers: { chatwoot: { forward: { url: 'https://chat.example.com/webhooks/whatsapp/+15550001111' } } },
   * });
   * ```
   */
  readonly url: string;
  /**
   * The body and signature the destination gets.
   * @default 'meta'
   * @example
   * ```typescript
   * import { App, Stack } from 'aws-cdk-lib';
   * import { WhatsAppWebhookDedup } from 'whatsapp-webhook-dedup';
   *
   * const stack = new Stack(new App(), 'SupportWebhook');
   * new WhatsAppWebhookDedup(stack, 'Webhook', {
   *   subscribers: {
   *     events: { forward: { url: 'https://hooks.example.com/whatsapp', shape: 'event', secretName: 'hooks-signing' } },
   *   },
   * });
   * ```
   */
  readonly shape?: ForwardShape;
  /**
   * The Secrets Manager secret (name or ARN) whose plain-text value signs what is forwarded: any string for
   * `meta`, a Standard Webhooks secret (`whsec_` and base64) for `event`. Required for `event`.
   * @default - for `meta`, the app secret (the first of the webhook secret's `appSecrets`), which a consumer
   * written for Meta already verifies with
   * @example
   * ```typescript
   * import { App, Stack } from 'aws-cdk-lib';
   * import { WhatsAppWebhookDedup } from 'whatsapp-webhook-dedup';
   *
   * const stack = new Stack(new App(), 'SupportWebhook');
   * new WhatsAppWebhookDedup(stack, 'Webhook', {
   *   subscribers: { n8n: { forward: { url: 'https://n8n.example.com/webhook/wa', secretName: 'n8n-webhook-secret' } } },
   * });
   * ```
   */
  readonly secretName?: string;
  /**
   * Seconds one POST may take before it is abandoned and retried.
   * @default 10
   * @example
   * ```typescript
   * import { App, Stack } from 'aws-cdk-lib';
   * import { WhatsAppWebhookDedup } from 'whatsapp-webhook-dedup';
   *
   * const stack = new Stack(new App(), 'SupportWebhook');
   * new WhatsAppWebhookDedup(stack, 'Webhook', {
   *   subscribers: { crm: { forward: { url: 'https://crm.example.com/whatsapp', timeoutSeconds: 30 } } },
   * });
   * ```
   */
  readonly timeoutSeconds?: number;
}

export interface ResolvedForward {
  readonly url: string;
  readonly shape: ForwardShape;
  /** `undefined`: the app secret. */
  readonly secretName: string | undefined;
  readonly timeoutSeconds: number;
}

/** Where a forward subscriber may send: https anywhere, and http to a loopback address when `loopbackHttp`. */
export function forwardUrlProblem(
  url: string,
  options: { readonly loopbackHttp: boolean },
): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return `forward.url "${url}" is not a URL.`;
  }
  if (parsed.protocol === 'https:') return undefined;
  const loopback = ['localhost', '127.0.0.1', '[::1]'].includes(parsed.hostname);
  if (parsed.protocol === 'http:' && loopback && options.loopbackHttp) return undefined;
  return options.loopbackHttp
    ? `forward.url must be https (or http to localhost, 127.0.0.1 or [::1] here), got ${parsed.protocol}//${parsed.host}.`
    : `forward.url must be https: the signature and the events would travel in clear, got ${parsed.protocol}//${parsed.host}.`;
}

/** Checks a forward definition and fills its defaults; returns the problem as text, or the resolved form. */
export function resolveForward(
  definition: ForwardDefinition,
  options: { readonly loopbackHttp: boolean },
): ResolvedForward | string {
  if (typeof definition.url !== 'string') return 'forward.url is required.';
  const urlProblem = forwardUrlProblem(definition.url, options);
  if (urlProblem !== undefined) return urlProblem;
  const shape = definition.shape ?? 'meta';
  if (!FORWARD_SHAPES.includes(shape)) return `forward.shape is "${String(shape)}": use "meta" or "event".`;
  if (shape === 'event' && (definition.secretName === undefined || definition.secretName === '')) {
    return 'forward.secretName is required with shape "event": a Standard Webhooks secret (whsec_…), which the app secret is not.';
  }
  const timeoutSeconds = definition.timeoutSeconds ?? DEFAULT_FORWARD_TIMEOUT_SECONDS;
  if (
    !Number.isFinite(timeoutSeconds) ||
    timeoutSeconds <= 0 ||
    timeoutSeconds > MAX_FORWARD_TIMEOUT_SECONDS
  ) {
    return `forward.timeoutSeconds is ${timeoutSeconds}: use more than 0 and at most ${MAX_FORWARD_TIMEOUT_SECONDS} seconds.`;
  }
  return {
    url: definition.url,
    shape,
    secretName: definition.secretName === '' ? undefined : definition.secretName,
    timeoutSeconds,
  };
}
