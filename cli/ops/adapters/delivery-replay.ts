/**
 * Sends a quarantined body through the receiver again, as a fresh delivery: the receiver's own code
 * (`receiveWebhook`: reading, field routing, splitting, fan-out to every subscriber queue that wants it) with
 * the target's queues. The body was verified when it first arrived; it is signed here with a secret made for
 * this one call, so that it passes the receiver's signature check unchanged instead of through a second path.
 *
 * What the receiver would quarantine again is not written: the body is still invalid, and its original stays
 * in the quarantine queue (the caller deletes the original only after `stored`).
 *
 * `ops replay` sends archived deliveries the same way, to one subscriber's queues, with `ownMessageGroups`:
 * each message-lane part goes to the group `replay:<conversation>` instead of the conversation's own, so that
 * a replayed conversation never queues in front of (or behind) the live messages of the same chat, and its
 * deduplication id is salted with the run, so that a second replay within SQS's 5 minutes still reaches the
 * consumer (whose claims skip what is done, and count it). Parts keep their order within the replayed group.
 */
import { randomBytes } from 'node:crypto';
import type { SQSClient } from '@aws-sdk/client-sqs';
import { ReceiverMetric } from 'whatsapp-webhook-dedup/contract/metric-names';
import type { SubscriberQueue } from 'whatsapp-webhook-dedup/contract/subscribers';
import { proofHolds, proofOf } from 'whatsapp-webhook-dedup/functions/commons/provenance';
import type {
  DeliveryMeta,
  DeliveryPart,
  DeliveryRoute,
  FanOutPort,
  FanOutResult,
  QuarantinePort,
  QuarantineReason,
} from 'whatsapp-webhook-dedup/functions/queue/delivery-queue-port';
import { SubscriberFanOut } from 'whatsapp-webhook-dedup/functions/queue/subscriber-fan-out';
import {
  type ReceiverLogger,
  receiveWebhook,
} from 'whatsapp-webhook-dedup/functions/receiver/receive-webhook';
import { SIGNATURE_HEADER, signBody } from 'whatsapp-webhook-dedup/functions/receiver/signature';

export type ReplayOutcome =
  /**
   * The body carries no proof that the receiver verified it, or one that does not hold: it is never sent in
   * as if Meta had signed it (anything that may write to a quarantine or archive queue could have put it there).
   */
  | { readonly outcome: 'unproven'; readonly problem: string }
  /** Every part is in the queue of every subscriber that wants it. */
  | { readonly outcome: 'stored'; readonly subscribers: readonly string[]; readonly events: number }
  /** The receiver would quarantine the body (or a piece of it) again. */
  | { readonly outcome: 'still-invalid'; readonly reasons: readonly QuarantineReason[] }
  /**
   * A valid delivery no subscriber wants (by its fields, numbers and wabas): a fresh one would be acknowledged
   * and dropped.
   */
  | { readonly outcome: 'unrouted'; readonly fields: readonly string[] }
  /** A queue still missed a part after the receiver's retries (it would answer 503). */
  | { readonly outcome: 'failed'; readonly problem: string };

export interface DeliveryReplayOptions {
  readonly sqs: SQSClient;
  readonly subscribers: readonly SubscriberQueue[];
  readonly maximumMessageSizeBytes: number;
  /** Named in the receiver's log lines as where the secret came from. @default 'ops quarantine requeue' */
  readonly origin?: string;
  /** Message-lane parts in groups of their own (`replay:<conversation>`), deduplicated per `runId`. */
  readonly ownMessageGroups?: { readonly runId: string };
  /**
   * The pipeline's provenance key: each body's proof is checked with it before anything is sent, and the
   * parts sent carry their own proofs, as the receiver's do. `undefined` (a target that cannot tell it): every
   * body is refused as unproven.
   */
  readonly provenanceKey: string | undefined;
}

/** The group prefix of replayed message-lane parts. */
export const REPLAY_GROUP_PREFIX = 'replay:';

export class DeliveryReplay {
  readonly #options: DeliveryReplayOptions;
  readonly #fanOut: FanOutPort;

  constructor(options: DeliveryReplayOptions) {
    this.#options = options;
    const key = options.provenanceKey;
    const fanOut = new SubscriberFanOut({
      sqs: options.sqs,
      maximumMessageSizeBytes: options.maximumMessageSizeBytes,
      ...(key === undefined ? {} : { proofs: async (bytes) => proofOf(key, bytes) }),
    });
    this.#fanOut =
      options.ownMessageGroups === undefined
        ? fanOut
        : new ReplayMessageGroups(fanOut, options.ownMessageGroups.runId);
  }

  /** `proof`: the one the receiver stored with the body (a quarantine message's or archive line's). */
  async replay(body: Uint8Array, deliveryId: string, proof: string | undefined): Promise<ReplayOutcome> {
    const key = this.#options.provenanceKey;
    if (key === undefined) {
      return { outcome: 'unproven', problem: 'the target has no provenance key to check the body with' };
    }
    if (!proofHolds(key, body, proof)) {
      return {
        outcome: 'unproven',
        problem:
          proof === undefined
            ? 'no proof that the receiver verified it'
            : 'its proof does not hold: the receiver did not store these bytes',
      };
    }
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
          origin: this.#options.origin ?? 'ops quarantine requeue',
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

/**
 * The receiver's fan-out with every message-lane part renamed into its replay group; the FIFO ids are derived
 * from a part's conversation and event keys (`fifoIds`), so the group follows the new conversation name and
 * the deduplication id the run id put before the keys.
 */
class ReplayMessageGroups implements FanOutPort {
  readonly #inner: FanOutPort;
  readonly #runId: string;

  constructor(inner: FanOutPort, runId: string) {
    this.#inner = inner;
    this.#runId = runId;
  }

  get maximumBodyBytes(): number {
    return this.#inner.maximumBodyBytes;
  }

  enqueue(
    parts: readonly DeliveryPart[],
    routes: readonly DeliveryRoute[],
    meta: DeliveryMeta,
  ): Promise<FanOutResult> {
    const renamed = parts.map((part) =>
      part.conversationId === undefined
        ? part
        : {
            ...part,
            conversationId: `${REPLAY_GROUP_PREFIX}${part.conversationId}`,
            eventKeys: [`${REPLAY_GROUP_PREFIX}${this.#runId}`, ...(part.eventKeys ?? [])],
          },
    );
    return this.#inner.enqueue(renamed, routes, meta);
  }
}
