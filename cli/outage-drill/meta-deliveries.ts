/**
 * Meta's side of the run: every delivery it makes and how it ended. A live event goes out in a body of its
 * own; a failed delivery (5xx, no answer in time) is retried with decreasing frequency, and retries falling
 * due together may travel re-batched in one body; after the outage, the events delivered just before it
 * are delivered again (at-least-once delivery: they arrive as duplicates).
 */
import type { LocalStackClient } from '../local/stack/local-stack-client.ts';
import { type MetaRetrySchedule, retryDelayMs } from '../meta-traffic/retries.ts';
import type { ScheduledActions } from './scheduled-actions.ts';
import { type DrillEvent, webhookBody } from './traffic.ts';

export interface EventState {
  readonly event: DrillEvent;
  /** When a delivery holding the event was first answered 2xx. */
  acceptedAt: number | undefined;
}

/** Deliveries Meta attempted (live, retries, redeliveries) and how they ended. */
export interface DeliveryCounts {
  deliveriesSent: number;
  accepted: number;
  failed: number;
  retriesSent: number;
  redeliveriesSent: number;
}

/** How Meta sends, as the drill configures it. */
export interface MetaBehaviour {
  readonly appSecret: string;
  /** How long Meta waits for an answer before counting the delivery as failed. */
  readonly metaTimeoutMs: number;
  readonly retry: MetaRetrySchedule;
  /** Chance that retries falling due together travel in one body. */
  readonly rebatchProbability: number;
  readonly maxEventsPerBody: number;
  /** Events delivered this long before the outage are delivered again after it. */
  readonly redeliverWindowSeconds: number;
}

interface PendingRetry {
  readonly events: EventState[];
  readonly retry: number;
  readonly dueAt: number;
}

type DeliveryKind = 'live' | 'retry' | 'redelivery';

const noDeliveries = (): DeliveryCounts => ({
  deliveriesSent: 0,
  accepted: 0,
  failed: 0,
  retriesSent: 0,
  redeliveriesSent: 0,
});

export class MetaDeliveries {
  /** Every event of the run, in the order it was first sent. */
  readonly events: EventState[] = [];
  readonly totals: DeliveryCounts = noDeliveries();
  /** The counts since the last {@link takeIntervalCounts}. */
  #interval: DeliveryCounts = noDeliveries();
  readonly #pendingRetries: PendingRetry[] = [];
  readonly #inFlight = new Set<Promise<void>>();
  readonly #stack: LocalStackClient;
  readonly #behaviour: MetaBehaviour;
  readonly #random: () => number;
  readonly #scheduled: ScheduledActions;

  constructor(
    stack: LocalStackClient,
    behaviour: MetaBehaviour,
    random: () => number,
    scheduled: ScheduledActions,
  ) {
    this.#stack = stack;
    this.#behaviour = behaviour;
    this.#random = random;
    this.#scheduled = scheduled;
  }

  get pendingRetries(): number {
    return this.#pendingRetries.length;
  }

  /** Every delivery answered, and no retry left: Meta has nothing more to send. */
  get settled(): boolean {
    return this.#pendingRetries.length === 0 && this.#inFlight.size === 0;
  }

  sendLive(event: DrillEvent): void {
    const state: EventState = { event, acceptedAt: undefined };
    this.events.push(state);
    this.#deliver([state], 'live');
  }

  /** Sends the retries that fell due; some travel together in one body, as Meta may re-batch them. */
  sendDueRetries(): void {
    const now = Date.now();
    const due = this.#pendingRetries.filter((r) => r.dueAt <= now);
    if (due.length === 0) return;
    for (const r of due) this.#pendingRetries.splice(this.#pendingRetries.indexOf(r), 1);
    let group: PendingRetry[] = [];
    const flush = () => {
      if (group.length === 0) return;
      this.#deliver(
        group.flatMap((r) => r.events),
        'retry',
        Math.max(...group.map((r) => r.retry)),
      );
      group = [];
    };
    for (const r of due) {
      const size = group.reduce((n, g) => n + g.events.length, 0);
      if (
        group.length > 0 &&
        (this.#random() >= this.#behaviour.rebatchProbability ||
          size + r.events.length > this.#behaviour.maxEventsPerBody)
      ) {
        flush();
      }
      group.push(r);
    }
    flush();
  }

  /** Schedules the redelivery of the events accepted in the window before the outage, within 2 s. */
  redeliverRecent(outageStartedAt: number): void {
    const from = outageStartedAt - this.#behaviour.redeliverWindowSeconds * 1000;
    const recent = this.events.filter(
      (s) => s.acceptedAt !== undefined && s.acceptedAt >= from && s.acceptedAt <= outageStartedAt,
    );
    for (let i = 0; i < recent.length; i += this.#behaviour.maxEventsPerBody) {
      const batch = recent.slice(i, i + this.#behaviour.maxEventsPerBody);
      this.#scheduled.after(this.#random() * 2_000, () => this.#deliver(batch, 'redelivery'));
    }
  }

  /** The counts since the previous call, for one interval row. */
  takeIntervalCounts(): DeliveryCounts {
    const counts = this.#interval;
    this.#interval = noDeliveries();
    return counts;
  }

  #count(name: keyof DeliveryCounts): void {
    this.totals[name]++;
    this.#interval[name]++;
  }

  #deliver(batch: EventState[], kind: DeliveryKind, retry = 0): void {
    this.#count('deliveriesSent');
    if (kind === 'retry') this.#count('retriesSent');
    if (kind === 'redelivery') this.#count('redeliveriesSent');
    const body = Buffer.from(webhookBody(batch.map((s) => s.event)));
    const attempt = this.#stack
      .postWebhook(body, this.#behaviour.appSecret, { timeoutMs: this.#behaviour.metaTimeoutMs })
      .then(
        (result) => result.status >= 200 && result.status < 300,
        () => false,
      );
    const settled = attempt.then((ok) => {
      if (ok) {
        this.#count('accepted');
        for (const state of batch) state.acceptedAt ??= Date.now();
        return;
      }
      this.#count('failed');
      const next = retry + 1;
      this.#pendingRetries.push({
        events: batch,
        retry: next,
        dueAt: Date.now() + retryDelayMs(next, this.#behaviour.retry, this.#random),
      });
    });
    this.#inFlight.add(settled);
    void settled.finally(() => this.#inFlight.delete(settled));
  }
}
