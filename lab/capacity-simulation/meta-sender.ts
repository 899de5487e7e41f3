/**
 * Meta's side of the webhook: each update POSTed once, signed with the app secret; a 200 ends it, anything
 * else (a 429 from the throttle, a 5xx, a timeout) is retried on the house's one model of Meta's retries
 * (cli/meta-traffic/retries.ts, META_RETRIES). Meta also delivers at least once: an accepted update is sent
 * again at RESEND_RATE, within minutes (an assumption: Meta publishes no rate).
 */
import { createHmac } from 'node:crypto';
import type { SeededRandom } from '../../cli/local/seeded-random.ts';
import { META_RETRIES, retryDelayMs } from '../../cli/meta-traffic/retries.ts';
import type { Engine } from '../virtual-time/engine.ts';
import { LatencySeries } from './measures.ts';
import type { TrafficEvent } from './traffic.ts';

/** Share of accepted updates Meta sends once more (assumed: "at least once", no published rate). */
export const RESEND_RATE = 0.001;
export const RESEND_DELAY_MS = [1_000, 5 * 60_000] as const;

export type Answer = { readonly status: number; readonly ackMs: number };

export interface Endpoint {
  /** `event`: which update the body carries, for the simulation's own bookkeeping (the receiver gets the body). */
  post(body: string, signature: string, event: TrafficEvent): Promise<Answer>;
}

export interface SenderCounts {
  posts: number;
  accepted: number;
  throttled429: number;
  serverErrors: number;
  retries: number;
  resends: number;
  /** Updates still not accepted when the run ended. */
  pending: number;
}

export class MetaSender {
  readonly #engine: Engine;
  readonly #random: SeededRandom;
  readonly #endpoint: Endpoint;
  readonly #appSecret: string;
  readonly #onAccepted: (event: TrafficEvent, ack: Answer) => void;
  readonly #onDone: (event: TrafficEvent) => void;
  readonly #resendRate: number;
  readonly ackLatencies = new LatencySeries();
  readonly counts: SenderCounts = {
    posts: 0,
    accepted: 0,
    throttled429: 0,
    serverErrors: 0,
    retries: 0,
    resends: 0,
    pending: 0,
  };

  constructor(options: {
    engine: Engine;
    random: SeededRandom;
    endpoint: Endpoint;
    appSecret: string;
    resendRate?: number;
    onAccepted: (event: TrafficEvent, ack: Answer) => void;
    /** Meta will not POST the update again: accepted and not to be re-sent, or given up after 7 days. */
    onDone?: (event: TrafficEvent) => void;
  }) {
    this.#engine = options.engine;
    this.#random = options.random;
    this.#endpoint = options.endpoint;
    this.#appSecret = options.appSecret;
    this.#resendRate = options.resendRate ?? RESEND_RATE;
    this.#onAccepted = options.onAccepted;
    this.#onDone = options.onDone ?? (() => undefined);
  }

  /** Schedules the update's first POST at `event.at`. */
  schedule(event: TrafficEvent): void {
    this.counts.pending++;
    this.#engine.at(event.at, () => void this.#attempt(event, 0, event.at, false));
  }

  async #attempt(event: TrafficEvent, failures: number, firstAt: number, resend: boolean): Promise<void> {
    this.counts.posts++;
    // Built for this POST (traffic.ts): an update waiting for its retry holds no body.
    const body = event.body;
    const signature = `sha256=${createHmac('sha256', this.#appSecret).update(body).digest('hex')}`;
    const answer = await this.#endpoint.post(body, signature, event);
    if (answer.status === 200) {
      this.ackLatencies.add(answer.ackMs);
      this.counts.accepted++;
      if (!resend) this.counts.pending--;
      this.#onAccepted(event, answer);
      if (!resend && this.#random.chance(this.#resendRate)) {
        this.counts.resends++;
        const [low, high] = RESEND_DELAY_MS;
        this.counts.pending++;
        this.#engine.after(low + this.#random.next() * (high - low), () => {
          this.counts.pending--;
          void this.#attempt(event, 0, this.#engine.now, true);
        });
        return;
      }
      this.#onDone(event);
      return;
    }
    if (answer.status === 429) this.counts.throttled429++;
    else this.counts.serverErrors++;
    const delay = retryDelayMs(failures + 1, META_RETRIES, () => this.#random.next());
    if (this.#engine.now + delay - firstAt > META_RETRIES.windowMs) {
      this.#onDone(event);
      return;
    }
    this.counts.retries++;
    this.#engine.after(delay, () => void this.#attempt(event, failures + 1, firstAt, resend));
  }
}
