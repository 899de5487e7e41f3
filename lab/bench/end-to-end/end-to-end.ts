/**
 * End to end on the local stack (`npm start`, run as a child process exactly as a user starts it): signed
 * POSTs from autocannon for a bounded time, while the consumer drains the queue; then a check that every
 * acknowledged event was effected exactly once.
 *
 * Deliveries are single-message bodies as Meta sends them; `duplicateRatio` of them repeat an earlier
 * body byte for byte, as Meta's retries do.
 */
import autocannon from 'autocannon';
import { seededRandom } from '../../../cli/local/seeded-random.ts';
import type { EffectsView } from '../../../cli/local/stack/effects-journal.ts';
import { spawnLocalStack } from '../../../cli/local/stack/spawn-local-stack.ts';
import { inboundTextMessage, singleMessageBody } from '../../../cli/meta-traffic/webhook-bodies.ts';
import { signBody } from '../../../functions/receiver/signature.ts';

export interface EndToEndInput {
  readonly durationSeconds: number;
  /** Load before the measured run (not measured; its effects are checked too). */
  readonly warmupSeconds: number;
  /**
   * A local stack already running (e.g. started with `node --cpu-prof --import tsx cli/local/start.ts` to
   * profile it), with WHATSAPP_APP_SECRETS=bench-e2e-app-secret. By default one is spawned and stopped.
   */
  readonly stackUrl?: string;
  readonly connections: number;
  readonly duplicateRatio: number;
  /** Longest wait for the consumer to drain after the load stops. */
  readonly drainTimeoutMs: number;
}

export interface EndToEndResult {
  readonly deliveriesPerSec: number;
  readonly ackP50Ms: number;
  readonly ackP99Ms: number;
  readonly ackMaxMs: number;
  readonly durationSeconds: number;
  readonly connections: number;
  /** Acknowledged during the measured run. */
  readonly deliveriesAcked: number;
  readonly warmupDeliveriesAcked: number;
  readonly non2xx: number;
  readonly errors: number;
  readonly timeouts: number;
  /** Distinct message keys among the acknowledged deliveries (warm-up included, like the effects). */
  readonly distinctEventsAcked: number;
  readonly effects: number;
  /** Keys effected more than once (must be 0). */
  readonly repeatedEffects: number;
  /** Acknowledged keys never effected (must be 0). */
  readonly missingEffects: number;
  /**
   * Effected keys whose every delivery was still unanswered when the load stopped (autocannon drops the
   * requests in flight at the end; the receiver may have enqueued them anyway).
   */
  readonly effectsOfUnansweredDeliveries: number;
  /** Effects of the measured run, from its start to the drained queue: what the consumer sustained. */
  readonly effectsPerSec: number;
  /** How long the queue took to drain once the load stopped. */
  readonly drainMs: number;
}

const APP_SECRET = 'bench-e2e-app-secret';

interface Delivery {
  readonly body: Buffer;
  readonly signature: string;
  readonly key: string;
}

/** A deterministic stream of deliveries: fresh messages, and byte-identical retries of recent ones. */
function deliveryStream(duplicateRatio: number): () => Delivery {
  const random = seededRandom(99);
  const sent: Delivery[] = [];
  let serial = 5_000_000;
  return () => {
    if (sent.length > 0 && random() < duplicateRatio) {
      // Meta retries within seconds to minutes: repeat one of the last few hundred deliveries.
      const from = Math.max(0, sent.length - 500);
      return sent[from + Math.floor(random() * (sent.length - from))] as Delivery;
    }
    const message = inboundTextMessage(serial++, random);
    const body = Buffer.from(singleMessageBody(message));
    const delivery = {
      body,
      signature: signBody(body, APP_SECRET),
      key: `msg:${message.id}`,
    };
    sent.push(delivery);
    return delivery;
  };
}

export const E2E_APP_SECRET = APP_SECRET;

export async function runEndToEnd(
  input: EndToEndInput,
  progress: (line: string) => void,
): Promise<EndToEndResult> {
  const stack =
    input.stackUrl === undefined
      ? await spawnLocalStack({ env: { WHATSAPP_APP_SECRETS: APP_SECRET } })
      : { url: input.stackUrl, stop: async () => undefined };
  try {
    progress(`end to end: local stack up at ${stack.url}`);
    const next = deliveryStream(input.duplicateRatio);
    const acked = new Set<string>();
    let ackedDeliveries = 0;
    const load = (durationSeconds: number) =>
      autocannon({
        url: stack.url,
        connections: input.connections,
        duration: durationSeconds,
        requests: [
          {
            method: 'POST',
            path: '/webhook',
            setupRequest: (request: Record<string, unknown>, context: Record<string, unknown>) => {
              const delivery = next();
              context.delivery = delivery;
              return {
                ...request,
                body: delivery.body,
                headers: {
                  'content-type': 'application/json',
                  'x-hub-signature-256': delivery.signature,
                },
              };
            },
            onResponse: (status: number, _body: string, context: Record<string, unknown>) => {
              if (status !== 200) return;
              ackedDeliveries++;
              acked.add((context.delivery as Delivery).key);
            },
          },
        ],
      });
    const drain = async () => {
      const response = await fetch(`${stack.url}/local/drained?timeoutMs=${input.drainTimeoutMs}`);
      await response.arrayBuffer();
      if (response.status !== 200) {
        throw new Error(`The local stack did not drain within ${input.drainTimeoutMs} ms after the load.`);
      }
    };

    // Warm-up: the JVM of DynamoDB Local and V8 both start cold; neither is what a running stack shows.
    if (input.warmupSeconds > 0) {
      await load(input.warmupSeconds);
      await drain();
      progress(`end to end: warm-up done (${ackedDeliveries} deliveries)`);
    }
    const warmupAcked = ackedDeliveries;
    const { total: effectsBefore } = (await (
      await fetch(`${stack.url}/local/effects`)
    ).json()) as EffectsView;
    const started = Date.now();
    const result = await load(input.durationSeconds);
    const measuredAcked = ackedDeliveries - warmupAcked;
    const loadEnded = Date.now();
    progress(`end to end: ${measuredAcked} deliveries acknowledged; waiting for the consumer to drain`);
    await drain();
    const drainedAt = Date.now();
    const effects = (await (await fetch(`${stack.url}/local/effects`)).json()) as EffectsView;
    const counts = new Map(effects.effects.map((effect) => [effect.key, effect.count]));
    const repeatedEffects = effects.effects.filter((effect) => effect.count > 1).length;
    const missingEffects = [...acked].filter((key) => !counts.has(key)).length;
    const effectsOfUnansweredDeliveries = effects.effects.filter((effect) => !acked.has(effect.key)).length;
    return {
      deliveriesPerSec: measuredAcked / result.duration,
      ackP50Ms: result.latency.p50,
      ackP99Ms: result.latency.p99,
      ackMaxMs: result.latency.max,
      durationSeconds: result.duration,
      connections: input.connections,
      deliveriesAcked: measuredAcked,
      warmupDeliveriesAcked: warmupAcked,
      non2xx: result.non2xx,
      errors: result.errors,
      timeouts: result.timeouts,
      distinctEventsAcked: acked.size,
      effects: effects.total,
      repeatedEffects,
      missingEffects,
      effectsOfUnansweredDeliveries,
      effectsPerSec: (effects.total - effectsBefore) / ((drainedAt - started) / 1000),
      drainMs: drainedAt - loadEnded,
    };
  } finally {
    await stack.stop();
  }
}
