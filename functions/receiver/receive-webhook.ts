/**
 * The receiver's whole job, as a plain function (docs/design.md §4): verify, store, acknowledge. The thin Lambda
 * handler and the local stack both call it; every dependency is injected. No DynamoDB on this path.
 *
 * | request                                       | answer                                               |
 * |-----------------------------------------------|------------------------------------------------------|
 * | GET, subscribe + our token + a challenge      | 200, the challenge verbatim, text/plain, nosniff     |
 * | GET, no challenge, or one over 128 characters | 400                                                  |
 * | GET otherwise                                 | 403                                                  |
 * | GET, no verify token stored                   | 500 (the app secret is not needed for a GET)         |
 * | POST, signature missing or wrong              | 401, nothing enqueued                                |
 * | POST, no app secret stored yet                | 401, nothing enqueued, logged as an error            |
 * | POST, signed, not JSON / not an envelope      | 200, raw body in the quarantine queue (once)         |
 * | POST, signed envelope whose parts would pass  | 200, raw body in the quarantine queue (once), none   |
 * | the output bound (`amplifying-body`)          | of it enqueued                                       |
 * | POST, signed (any of the three rows below)    | a copy in the archive queue too, when one is wired;  |
 * |                                               | 503 when it is still missing after the retries       |
 * | POST, signed envelope                         | 200 once every part is in the queue of every         |
 * |                                               | subscriber that wants it (per lane, split if large)  |
 * | POST, signed envelope no subscriber wants     | 200, nothing enqueued, counted (`DeliveriesUnrouted`) |
 * | POST, a part refused by a queue (sender fault) | 200, that part quarantined once                     |
 * | POST, a subscriber's queue still missing a    | 503, so that Meta retries; subscribers that have it  |
 * | part after the retries                        | skip the repeat as a duplicate                       |
 * | secret store malformed / unreadable           | 500 / 503, never an unsigned acceptance              |
 */
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import { ReceiverMetric } from '../../contract/metric-names.ts';
import { QUARANTINED_ANSWER_PREFIX } from '../../contract/receiver-answers.ts';
import type { SubscriberQueue } from '../../contract/subscribers.ts';
import type {
  ArchiveCopy,
  ArchivePort,
  DeliveryMeta,
  FanOutPort,
  QuarantinePort,
  QuarantineReason,
  RejectedPart,
} from '../queue/delivery-queue-port.ts';
import { EnqueueFailedError } from '../queue/errors.ts';
import { WebhookSecretsMisconfiguredError } from './errors.ts';
import { planDelivery } from './plan-delivery.ts';
import { type DeliveryReading, readDelivery } from './read-delivery.ts';
import { subscribersWanting } from './route-delivery.ts';
import { checkSignature, findHeader, SIGNATURE_HEADER } from './signature.ts';
import { answerVerificationHandshake } from './verification-handshake.ts';
import type { WebhookSecrets, WebhookSecretsSource } from './webhook-secrets.ts';

export interface WebhookRequest {
  readonly method: string;
  /**
   * Not routed on: API Gateway sends only `/webhook` here (with a stage prefix on named stages), a function URL
   * whatever path the caller used.
   */
  readonly path: string;
  /** Decoded query string parameters. */
  readonly query: Readonly<Record<string, string | undefined>>;
  /** Header names in any case (API Gateway HTTP APIs send them lowercase). */
  readonly headers: Readonly<Record<string, string | undefined>>;
  /**
   * The body exactly as received: its bytes, or its text when the front end has already decoded it as UTF-8
   * (API Gateway's non-base64 bodies), which spares a decode on the hot path.
   */
  readonly body: Uint8Array | string;
  /** Correlates logs and queue messages of this delivery (API Gateway's request id). */
  readonly requestId: string;
}

export interface WebhookResponse {
  readonly statusCode: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

/** What the receiver needs of Powertools Metrics (which the caller publishes once per invocation). */
export interface ReceiverMetrics {
  addMetric(name: string, unit: (typeof MetricUnit)[keyof typeof MetricUnit], value: number): unknown;
}

/** What the receiver needs of Powertools Logger. Fields are keys, fields and counts only, never content. */
export interface ReceiverLogger {
  /** Details an operator rarely needs (docs/decisions.md, "The functions log at INFO what follows one event"). */
  debug?(message: string, fields: Record<string, unknown>): void;
  info(message: string, fields: Record<string, unknown>): void;
  warn(message: string, fields: Record<string, unknown>): void;
  error(message: string, fields: Record<string, unknown>): void;
}

export interface ReceiverDependencies {
  readonly secrets: WebhookSecretsSource;
  /** Every subscriber's queue and the fields it wants. */
  readonly subscribers: readonly SubscriberQueue[];
  readonly fanOut: FanOutPort;
  /** The pipeline's quarantine queue. */
  readonly quarantine: QuarantinePort;
  /**
   * The archive lane (docs/design.md, "Archive"): a copy of every signed, non-empty delivery, stored beside
   * the subscribers' queues and before the 200. Absent: nothing is archived.
   */
  readonly archive?: ArchivePort;
  readonly metrics: ReceiverMetrics;
  readonly logger: ReceiverLogger;
  /** Epoch ms. @default Date.now */
  readonly clock?: () => number;
  /** How long enqueue retries may go on, from the request's arrival (default `RETRY_BUDGET_MS`). */
  readonly retryBudgetMs?: number;
}

/**
 * No retry starts later than this after arrival, counted before the secrets are read, so a slow secret read
 * shortens the enqueue retries instead of adding to them. With the SDK timeouts of
 * `functions/commons/sdk-client-config.ts` the worst case (a secret read, then one last enqueue call and one
 * quarantine call) stays near 8 s, under the receiver's 10 s timeout (contract/settings.ts), so the function
 * answers 503 itself rather than timing out.
 */
export const RETRY_BUDGET_MS = 3_000;

// nosniff: the handshake echoes a caller's text, which a browser must never sniff into HTML or script.
const TEXT = { 'content-type': 'text/plain; charset=utf-8', 'x-content-type-options': 'nosniff' } as const;

function respond(statusCode: number, body = '', headers: Record<string, string> = {}): WebhookResponse {
  return { statusCode, headers: { ...TEXT, ...headers }, body };
}

export async function receiveWebhook(
  request: WebhookRequest,
  deps: ReceiverDependencies,
): Promise<WebhookResponse> {
  const method = request.method.toUpperCase();
  if (method !== 'GET' && method !== 'POST') {
    return respond(405, 'method not allowed', { allow: 'GET, POST' });
  }
  const arrival = (deps.clock ?? Date.now)();
  const secrets = await loadSecrets(request, deps);
  if ('statusCode' in secrets) return secrets;
  return method === 'GET'
    ? verifySubscription(request, secrets, deps)
    : acceptDelivery(request, secrets, deps, arrival);
}

async function loadSecrets(
  request: WebhookRequest,
  { secrets, logger }: ReceiverDependencies,
): Promise<WebhookSecrets | WebhookResponse> {
  try {
    return await secrets.load();
  } catch (error) {
    const misconfigured = error instanceof WebhookSecretsMisconfiguredError;
    logger.error(
      misconfigured ? 'Receiver misconfigured: no usable webhook secret' : 'Webhook secrets unavailable',
      {
        requestId: request.requestId,
        secretsOrigin: secrets.origin,
        problem: error instanceof Error ? error.message : String(error),
      },
    );
    return misconfigured ? respond(500, 'receiver misconfigured') : respond(503, 'try again later');
  }
}

function verifySubscription(
  request: WebhookRequest,
  secrets: WebhookSecrets,
  { logger }: ReceiverDependencies,
): WebhookResponse {
  if (secrets.verifyToken === undefined) {
    logger.error('Receiver misconfigured: no verify token, the subscription handshake cannot succeed', {
      requestId: request.requestId,
    });
    return respond(500, 'receiver misconfigured');
  }
  const answer = answerVerificationHandshake(request.query, secrets.verifyToken);
  logger.info('Subscription handshake', { requestId: request.requestId, outcome: answer.outcome });
  return respond(answer.statusCode, answer.body);
}

async function acceptDelivery(
  request: WebhookRequest,
  secrets: WebhookSecrets,
  deps: ReceiverDependencies,
  arrival: number,
): Promise<WebhookResponse> {
  const { metrics, logger } = deps;
  const bodyBytes =
    typeof request.body === 'string' ? Buffer.byteLength(request.body) : request.body.byteLength;
  const logKeys = { requestId: request.requestId, bodyBytes };

  if (secrets.appSecrets.length === 0) {
    // The GET handshake may already have succeeded with the verify token alone. Meta retries a refused POST,
    // so storing the app secret soon loses nothing; a 401 keeps the 5xx alarm for real outages.
    metrics.addMetric(ReceiverMetric.SignatureRejected, MetricUnit.Count, 1);
    logger.error('Delivery refused: no app secret configured, so no signature can be verified', {
      ...logKeys,
      secretsOrigin: deps.secrets.origin,
    });
    return respond(401, 'invalid signature');
  }
  const signature = checkSignature(
    request.body,
    findHeader(request.headers, SIGNATURE_HEADER),
    secrets.appSecrets,
  );
  if (!signature.valid) {
    metrics.addMetric(ReceiverMetric.SignatureRejected, MetricUnit.Count, 1);
    logger.warn('Delivery refused: bad signature', { ...logKeys, problem: signature.problem });
    return respond(401, 'invalid signature');
  }

  const meta: DeliveryMeta = {
    deliveryId: request.requestId,
    receivedAt: new Date(arrival).toISOString(),
    retryDeadline: arrival + (deps.retryBudgetMs ?? RETRY_BUDGET_MS),
  };
  if (bodyBytes === 0) {
    // Nothing to keep, and SQS refuses an empty message: acknowledge so that it is not retried forever.
    logger.warn('Signed empty body acknowledged; nothing to quarantine', logKeys);
    return respond(200);
  }
  const reading = readDelivery(request.body, bodyBytes);
  if (!reading.ok) return quarantineWhole(request.body, reading.reason, reading.detail, meta, deps, logKeys);

  const targets = subscribersWanting(deps.subscribers, reading.eventOrigins);
  if (targets.length === 0) {
    try {
      await archiveCopy(deps, request.body, { verdict: 'accepted', subscribers: [] }, meta);
    } catch (error) {
      return enqueueFailed(deps, logKeys, 'archive', error);
    }
    metrics.addMetric(ReceiverMetric.DeliveriesUnrouted, MetricUnit.Count, 1);
    logger.info('Delivery wanted by no subscriber: acknowledged, not enqueued', {
      ...logKeys,
      ...readingSummary(reading),
    });
    return respond(200);
  }
  return enqueueForSubscribers(request.body, reading, targets, meta, deps, logKeys, signature.secretIndex);
}

/** The signed body, whole and byte-exact, in the quarantine queue (and the archive), answered 200 and counted. */
async function quarantineWhole(
  body: Uint8Array | string,
  reason: QuarantineReason,
  detail: string,
  meta: DeliveryMeta,
  deps: ReceiverDependencies,
  logKeys: Record<string, unknown>,
  summary: Record<string, unknown> = {},
): Promise<WebhookResponse> {
  try {
    await Promise.all([
      deps.quarantine.quarantine(bodyBytesOf(body), reason, meta),
      archiveCopy(deps, body, { verdict: 'quarantined', subscribers: [] }, meta),
    ]);
  } catch (error) {
    return enqueueFailed(deps, logKeys, 'quarantine', error);
  }
  deps.metrics.addMetric(ReceiverMetric.DeliveriesQuarantined, MetricUnit.Count, 1);
  deps.logger.warn('Signed body quarantined', { ...logKeys, ...summary, reason, detail });
  // Meta reads only the status; a person sending a test body reads why it went nowhere. The reason, never the
  // detail: a JSON parser's message can quote the body.
  return respond(200, `${QUARANTINED_ANSWER_PREFIX}${reason}`);
}

/** Resolves at once when no archive is wired; the body goes as the receiver got it, text or bytes. */
async function archiveCopy(
  { archive }: ReceiverDependencies,
  body: Uint8Array | string,
  copy: ArchiveCopy,
  meta: DeliveryMeta,
): Promise<void> {
  if (archive !== undefined) await archive.archive(body, copy, meta);
}

async function enqueueForSubscribers(
  body: Uint8Array | string,
  reading: Extract<DeliveryReading, { ok: true }>,
  targets: readonly SubscriberQueue[],
  meta: DeliveryMeta,
  deps: ReceiverDependencies,
  logKeys: Record<string, unknown>,
  secretIndex: number,
): Promise<WebhookResponse> {
  const { fanOut, quarantine, metrics, logger } = deps;
  const plan = planDelivery(reading, targets, fanOut.maximumBodyBytes);
  if (!plan.ok) {
    // Nothing of it is enqueued: the body is kept whole, once, where an operator can see why.
    return quarantineWhole(body, plan.reason, plan.detail, meta, deps, logKeys, readingSummary(reading));
  }
  const { parts, routes, oversized } = plan;
  let quarantined = 0;
  try {
    const [enqueued] = await Promise.all([
      routes.length > 0 ? fanOut.enqueue(parts, routes, meta) : { rejected: [] },
      ...oversized.map((piece) => quarantine.quarantine(Buffer.from(piece, 'utf8'), 'event-too-large', meta)),
      archiveCopy(deps, body, { verdict: 'accepted', subscribers: targets.map(({ name }) => name) }, meta),
    ]);
    quarantined += oversized.length;
    // Refused by SQS as the sender's fault: retrying cannot help, Meta's retry neither; keep them for an
    // operator, once per part however many subscriber queues refused it.
    const refusals = new Map<number, RejectedPart[]>();
    for (const refusal of enqueued.rejected) {
      refusals.set(refusal.part, [...(refusals.get(refusal.part) ?? []), refusal]);
    }
    for (const [part, refused] of refusals) {
      await quarantine.quarantine(Buffer.from(parts[part]?.body ?? '', 'utf8'), 'rejected-by-queue', meta);
      logger.warn('Part refused by the queue, quarantined', {
        ...logKeys,
        part,
        subscribers: refused.map(({ subscriber }) => subscriber),
        codes: [...new Set(refused.map(({ code }) => code))],
      });
      quarantined++;
    }
  } catch (error) {
    return enqueueFailed(deps, logKeys, 'enqueue', error);
  }

  metrics.addMetric(ReceiverMetric.DeliveriesAccepted, MetricUnit.Count, 1);
  metrics.addMetric(ReceiverMetric.EventsPerDelivery, MetricUnit.Count, reading.events);
  if (quarantined > 0) metrics.addMetric(ReceiverMetric.DeliveriesQuarantined, MetricUnit.Count, quarantined);
  if (oversized.length > 0) {
    logger.warn('Pieces too large for a queue message quarantined', {
      ...logKeys,
      reason: 'event-too-large',
      pieces: oversized.length,
    });
  }
  // What follows the delivery (its id, what it held, who got it) at INFO; how it was cut up and signed at DEBUG.
  // A secret other than the first stays at INFO: it tells when an old secret can be retired.
  logger.info('Delivery accepted', {
    requestId: logKeys.requestId,
    ...readingSummary(reading),
    subscribers: targets.map(({ name }) => name),
    ...(secretIndex > 0 && { secretIndex }),
  });
  logger.debug?.('Delivery accepted, in detail', {
    ...logKeys,
    parts: parts.length,
    ...(reading.inboundMessages > 0 && {
      conversations: new Set(parts.flatMap(({ conversationId }) => conversationId ?? [])).size,
    }),
    quarantined,
    secretIndex,
    subscriberCount: targets.length,
  });
  return respond(200);
}

/** What a log line may say about a delivery's content: counts and field names. */
function readingSummary(reading: Extract<DeliveryReading, { ok: true }>): Record<string, unknown> {
  return {
    events: reading.events,
    fields: reading.eventFields,
    ...(reading.unknownFields.length > 0 && { unknownFields: reading.unknownFields.slice(0, 20) }),
    ...(reading.malformedParts > 0 && { malformedParts: reading.malformedParts }),
  };
}

function enqueueFailed(
  { metrics, logger }: ReceiverDependencies,
  logKeys: Record<string, unknown>,
  step: 'enqueue' | 'quarantine' | 'archive',
  error: unknown,
): WebhookResponse {
  metrics.addMetric(ReceiverMetric.EnqueueFailures, MetricUnit.Count, 1);
  // Our own error says which queue and how many messages; any other error is logged by name only.
  const details =
    error instanceof EnqueueFailedError
      ? { problem: error.message, ...(error.subscribers.length > 0 && { subscribers: error.subscribers }) }
      : { problem: error instanceof Error ? error.name : 'UnknownError' };
  // The archive copy fails the delivery wherever it runs beside the other sends: name that step.
  const failedStep = error instanceof EnqueueFailedError && error.queue === 'archive' ? 'archive' : step;
  logger.error('Delivery not stored: answering 503 so that Meta retries', {
    ...logKeys,
    step: failedStep,
    ...details,
  });
  return respond(503, 'try again later');
}

function bodyBytesOf(body: Uint8Array | string): Uint8Array {
  return typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
}
