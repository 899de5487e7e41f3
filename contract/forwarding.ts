/**
 * Forward subscribers (docs/design.md, "Forwarding"): a subscriber that is a destination URL instead of code.
 * What the construct, the local stack and the forwarding consumer share: the definition, its defaults and its
 * checks. Plain TypeScript: no aws-cdk-lib, no AWS SDK.
 */
import type { LaneName } from './lanes.ts';

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

/**
 * The fewest POSTs in flight `maxInFlight` may leave each lane of the subscriber: Lambda's SQS event source cannot
 * be held below 2 concurrent invocations of a lane (`ScalingConfig.MaximumConcurrency` takes 2 to 1000), and an
 * invocation needs room for one POST at least.
 */
export const MIN_FORWARD_IN_FLIGHT_PER_LANE = 2;

/**
 * Headers a forward subscriber sets itself, which the headers of `headersSecretName` may not replace: the body's
 * framing, its signature and identity (`webhook-*` are all Standard Webhooks'), and where it goes.
 */
export const RESERVED_FORWARD_HEADERS: readonly string[] = [
  'content-type',
  'content-length',
  'host',
  'x-hub-signature-256',
  'idempotency-key',
  'webhook-*',
];

/** An HTTP field name (RFC 9110 §5.1, a token). */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

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
  /**
   * One POST per delivery part (SQS record) instead of one per event: the part's fresh events together in one
   * Meta envelope (one entry per WABA, each change with its metadata, a message with its sender's contact),
   * signed as one body, its `Idempotency-Key` the digest of the keys it holds. Each event is still claimed;
   * all are completed on a 2xx and all released otherwise. For a destination that reads every event of a
   * body; `meta` shape only.
   * @default false
   * @example
   * ```typescript
   * import { App, Stack } from 'aws-cdk-lib';
   * import { WhatsAppWebhookDedup } from 'whatsapp-webhook-dedup';
   *
   * const stack = new Stack(new App(), 'SupportWebhook');
   * new WhatsAppWebhookDedup(stack, 'Webhook', {
   *   subscribers: { warehouse: { forward: { url: 'https://ingest.example.com/whatsapp', batch: true } } },
   * });
   * ```
   */
  readonly batch?: boolean;
  /**
   * The Secrets Manager secret (name or ARN) whose value is a JSON object of header name → value, added to every
   * POST (`{"Authorization": "Bearer …"}`): headers stay out of the props and the template. Read like the
   * signing secret (cached 5 minutes, so a rotation is picked up), by the forward consumer only. It may not
   * name a header the consumer sets itself (`Content-Type`, `Content-Length`, `Host`,
   * `X-Hub-Signature-256`, `Idempotency-Key`, `webhook-*`).
   * @default - no headers but the shape's own
   * @example
   * ```typescript
   * import { App, Stack } from 'aws-cdk-lib';
   * import { WhatsAppWebhookDedup } from 'whatsapp-webhook-dedup';
   *
   * const stack = new Stack(new App(), 'SupportWebhook');
   * new WhatsAppWebhookDedup(stack, 'Webhook', {
   *   subscribers: {
   *     crm: { forward: { url: 'https://crm.example.com/whatsapp', headersSecretName: 'crm-api-headers' } },
   *   },
   * });
   * ```
   */
  readonly headersSecretName?: string;
  /**
   * The most POSTs in flight at once to the destination, over all of the subscriber's consumers: split between
   * its lanes (the message lane gets the odd one), each lane's `maxConcurrency` capped at its share and each
   * invocation's POSTs at what the share leaves per concurrent invocation. At least 2 per lane (Lambda cannot
   * hold a lane below 2 concurrent invocations): 4 with a message lane, 2 without.
   * @default - no bound but the lanes' `maxConcurrency` and batches
   * @example
   * ```typescript
   * import { App, Stack } from 'aws-cdk-lib';
   * import { WhatsAppWebhookDedup } from 'whatsapp-webhook-dedup';
   *
   * const stack = new Stack(new App(), 'SupportWebhook');
   * new WhatsAppWebhookDedup(stack, 'Webhook', {
   *   subscribers: { legacy: { forward: { url: 'https://legacy.example.com/hook', maxInFlight: 10 } } },
   * });
   * ```
   */
  readonly maxInFlight?: number;
}

export interface ResolvedForward {
  readonly url: string;
  readonly shape: ForwardShape;
  /** `undefined`: the app secret. */
  readonly secretName: string | undefined;
  readonly timeoutSeconds: number;
  /** One POST per delivery part rather than per event (`meta` shape only). */
  readonly batch: boolean;
  /** `undefined`: no headers of the user's. */
  readonly headersSecretName: string | undefined;
  /** `undefined`: no bound of its own. At least MIN_FORWARD_IN_FLIGHT_PER_LANE per lane. */
  readonly maxInFlight: number | undefined;
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
  const batch = definition.batch ?? false;
  if (typeof batch !== 'boolean') return `forward.batch is ${JSON.stringify(batch)}: use true or false.`;
  if (batch && shape !== 'meta') {
    return 'forward.batch needs shape "meta": the event shape names one event per body (its webhook-id is the event key).';
  }
  const headersSecretName = definition.headersSecretName;
  if (
    headersSecretName !== undefined &&
    (typeof headersSecretName !== 'string' || headersSecretName === '')
  ) {
    return 'forward.headersSecretName must name a Secrets Manager secret (its name or ARN).';
  }
  const maxInFlight = definition.maxInFlight;
  if (
    maxInFlight !== undefined &&
    (!Number.isInteger(maxInFlight) || maxInFlight < MIN_FORWARD_IN_FLIGHT_PER_LANE)
  ) {
    return `forward.maxInFlight is ${maxInFlight}: use a whole number, at least ${MIN_FORWARD_IN_FLIGHT_PER_LANE} per lane of the subscriber (Lambda's SQS event source cannot be held below ${MIN_FORWARD_IN_FLIGHT_PER_LANE} concurrent invocations of a lane).`;
  }
  return {
    url: definition.url,
    shape,
    secretName: definition.secretName === '' ? undefined : definition.secretName,
    timeoutSeconds,
    batch,
    headersSecretName,
    maxInFlight,
  };
}

/**
 * Checks the headers a `headersSecretName` secret holds (or, locally, its environment variable): a JSON object
 * of header name → string value, no value holding a line break, no name among RESERVED_FORWARD_HEADERS. The
 * problem as text (naming headers, never their values), or `undefined`.
 */
export function forwardHeadersProblem(headers: unknown): string | undefined {
  if (typeof headers !== 'object' || headers === null || Array.isArray(headers)) {
    return 'the forward headers must be a JSON object of header name → value.';
  }
  const entries = Object.entries(headers as Record<string, unknown>);
  const badName = entries.find(([name]) => !HEADER_NAME.test(name));
  if (badName !== undefined)
    return `the forward header name ${JSON.stringify(badName[0])} is not an HTTP field name.`;
  const badValue = entries.find(([, value]) => typeof value !== 'string' || /[\r\n\0]/.test(value));
  if (badValue !== undefined) {
    return `the forward header ${badValue[0]} must have a string value on one line.`;
  }
  const reserved = entries.map(([name]) => name).filter(isReservedForwardHeader);
  if (reserved.length > 0) {
    return `the forward headers may not set ${reserved.join(', ')}: the consumer sets ${reserved.length === 1 ? 'it' : 'them'} itself (the body's framing, signature and identity).`;
  }
  return undefined;
}

/** Whether a header name is one the forward consumer sets itself (case-insensitive; `webhook-*` by prefix). */
export function isReservedForwardHeader(name: string): boolean {
  const lower = name.toLowerCase();
  return RESERVED_FORWARD_HEADERS.some((reserved) =>
    reserved.endsWith('*') ? lower.startsWith(reserved.slice(0, -1)) : lower === reserved,
  );
}

/** What `maxInFlight` leaves one lane: its `maxConcurrency` cap, and the POSTs each invocation may have at once. */
export interface ForwardLaneInFlight {
  /** The lane's share of `maxInFlight`. */
  readonly share: number;
  /** The lane's event source `maxConcurrency`: its own, capped at the share. */
  readonly maxConcurrency: number;
  /** POSTs in flight within one invocation: `share / maxConcurrency`, rounded down (at least 1). */
  readonly postsPerInvocation: number;
}

/**
 * Each lane's share of `maxInFlight`: all of it with no message lane; else half each, the message lane taking
 * the odd one (a person waits for a message, nobody for a status).
 */
export function forwardInFlightShare(maxInFlight: number, lane: LaneName, hasMessageLane: boolean): number {
  if (!hasMessageLane) return maxInFlight;
  return lane === 'message' ? Math.ceil(maxInFlight / 2) : Math.floor(maxInFlight / 2);
}

/**
 * The problem with `maxInFlight` for a subscriber with `lanes` lanes (1 or 2), as text: below
 * MIN_FORWARD_IN_FLIGHT_PER_LANE per lane it cannot be honoured.
 */
export function forwardInFlightProblem(maxInFlight: number, lanes: number): string | undefined {
  const least = MIN_FORWARD_IN_FLIGHT_PER_LANE * lanes;
  if (maxInFlight >= least) return undefined;
  const lanesText = lanes === 1 ? 'one lane' : 'a message lane and a status lane';
  return `forward.maxInFlight is ${maxInFlight}: the minimum with ${lanesText} is ${least}, since Lambda's SQS event source cannot be held below ${MIN_FORWARD_IN_FLIGHT_PER_LANE} concurrent invocations of a lane, each with one POST at least.`;
}

/** One lane's bound under `maxInFlight`, from its share and the `maxConcurrency` it would have without it. */
export function forwardLaneInFlight(share: number, maxConcurrency: number): ForwardLaneInFlight {
  const capped = Math.max(MIN_FORWARD_IN_FLIGHT_PER_LANE, Math.min(maxConcurrency, share));
  return { share, maxConcurrency: capped, postsPerInvocation: Math.max(1, Math.floor(share / capped)) };
}
