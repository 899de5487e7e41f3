/**
 * Sends a quarantined body through the receiver again, as a fresh delivery: the receiver's own code
 * (`receiveWebhook`: reading, field routing, splitting, fan-out to every subscriber queue that wants it) with
 * the target's queues. The body was verified when it first arrived; it is signed here with a secret made for
 * this one call, so that it passes the receiver's signature check unchanged instead of through a second path.
 *
 * What the receiver would quarantine again is not written: the body is still invalid, and its original stays
 * in the quarantine queue (the caller deletes the original only after `stored`).
 */
import { randomBytes } from 'node:crypto';
import type { SQSClient } from '@aws-sdk/client-sqs';
import { ReceiverMetric } from '../../contract/metric-names.ts';
import type { SubscriberQueue } from '../../contract/subscribers.ts';
import type { QuarantinePort, QuarantineReason } from '../../functions/queue/delivery-queue-port.ts';
import { SubscriberFanOut } from '../../functions/queue/subscriber-fan-out.ts';
import { type ReceiverLogger, receiveWebhook } from '../../functions/receiver/receive-webhook.ts';
import { SIGNATURE_HEADER, signBody } from '../../functions/receiver/signature.ts';

export type ReplayOutcome =
  /** Every part is in the queue of every subscriber that wants it. */
  | { readonly outcome: 'stored'; readonly subscribers: readonly string[]; readonly events: number }
  /** The receiver would quarantine the body (or a piece of it) again. */
  | { readonly outcome: 'still-invalid'; readonly reasons: readonly QuarantineReason[] }
  /** A valid delivery whose fields no subscriber wants: a fresh one would be acknowledged and dropped. */
  | { readonly outcome: 'unrouted'; readonly fields: readonly string[] }
  /** A queue still missed a part after the receiver's retries (it would answer 503). */
  | { readonly outcome: 'failed'; readonly problem: string };

export interface DeliveryReplayOptions {
  readonly sqs: SQSClient;
  readonly subscribers: readonly SubscriberQueue[];
  readonly maximumMessageSizeBytes: number;
}

export class DeliveryReplay {
  readonly #options: DeliveryReplayOptions;
  readonly #fanOut: SubscriberFanOut;

  constructor(options: DeliveryReplayOptions) {
    this.#options = options;
    this.#fanOut = new SubscriberFanOut({
      sqs: options.sqs,
      maximumMessageSizeBytes: options.maximumMessageSizeBytes,
    });
  }

  async replay(body: Uint8Array, deliveryId: string): Promise<ReplayOutcome> {
    const secret = randomBytes(32).toString('hex');
    const reasons: QuarantineReason[] = [];
    const quarantine: QuarantinePort = {
      async quarantine(_raw, reason) {
        reasons.push(reason);
        return { messages: 0 };
      },
    };
    // The receiver tells what it did through its metrics; its log lines add names (subscribers, fields).
    const metrics = new Map<string, number>();
    const logged: Record<string, unknown>[] = [];
    const log = (_message: string, fields: Record<string, unknown>) => logged.push(fields);
    const logger: ReceiverLogger = { info: log, warn: log, error: log };
    const response = await receiveWebhook(
      {
        method: 'POST',
        path: '/webhook',
        query: {},
        headers: { [SIGNATURE_HEADER]: signBody(body, secret) },
        body,
        requestId: deliveryId,
      },
      {
        secrets: {
          origin: 'ops quarantine requeue',
          load: async () => ({ appSecrets: [secret], verifyToken: undefined }),
        },
        subscribers: this.#options.subscribers,
        fanOut: this.#fanOut,
        quarantine,
        metrics: { addMetric: (name, _unit, value) => metrics.set(name, (metrics.get(name) ?? 0) + value) },
        logger,
      },
    );
    const loggedList = (name: string) =>
      (logged.find((fields) => Array.isArray(fields[name]))?.[name] as string[] | undefined) ?? [];
    if (response.statusCode !== 200) {
      const problem = logged.find((fields) => fields.problem !== undefined)?.problem;
      return {
        outcome: 'failed',
        problem: `the receiver answered ${response.statusCode}${problem === undefined ? '' : ` (${String(problem)})`}`,
      };
    }
    if (reasons.length > 0) return { outcome: 'still-invalid', reasons: [...new Set(reasons)] };
    if (metrics.has(ReceiverMetric.DeliveriesUnrouted))
      return { outcome: 'unrouted', fields: loggedList('fields') };
    if (!metrics.has(ReceiverMetric.DeliveriesAccepted)) {
      return { outcome: 'failed', problem: 'the receiver acknowledged the body without storing it' };
    }
    return {
      outcome: 'stored',
      subscribers: loggedList('subscribers'),
      events: metrics.get(ReceiverMetric.EventsPerDelivery) ?? 0,
    };
  }
}
