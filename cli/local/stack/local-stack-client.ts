/**
 * The local stack as an HTTP client sees it: webhook POSTs signed as Meta signs them, and the `/local/*`
 * endpoints (docs/design.md §6) for what happened inside. The outage drill and the end-to-end tests both
 * drive the stack through this one client.
 */
import type { PipelineSettings } from 'whatsapp-webhook-dedup/contract/settings';
import type { LocalInfo } from '../local-stack-api.ts';
import type { LocalStatsSnapshot } from '../observe/subscriber-stats.ts';
import { type SendResult, sendWebhook } from '../sender/send-webhook.ts';
import type { Faults } from './fault-switch.ts';
import type { LocalEffectsView } from './local-server.ts';

/** A partial update of the fault switch, e.g. `{ webhook: { mode: 'error' } }`. */
export interface FaultsPatch {
  readonly webhook?: Partial<Faults['webhook']>;
  readonly effect?: Partial<Faults['effect']>;
}

/** How long a `/local/*` request may take: `/local/drained` holds its answer for up to 120 s. */
const LOCAL_REQUEST_TIMEOUT_MS = 130_000;

export class LocalStackClient {
  /** The stack's base URL, e.g. `http://localhost:3000`. */
  constructor(readonly url: string) {}

  /** POSTs `body` to `/webhook`, signed with `appSecret` (extra `headers` may replace the signature). */
  postWebhook(
    body: string | Uint8Array,
    appSecret: string,
    options: { readonly timeoutMs?: number; readonly headers?: Readonly<Record<string, string>> } = {},
  ): Promise<SendResult> {
    return sendWebhook(typeof body === 'string' ? Buffer.from(body) : body, {
      url: `${this.url}/webhook`,
      appSecret,
      ...options,
    });
  }

  /** Any GET: the status, and the body parsed when it is a JSON object (text otherwise). */
  async get<T>(path: string): Promise<{ status: number; body: T }> {
    const response = await fetch(`${this.url}${path}`, {
      signal: AbortSignal.timeout(LOCAL_REQUEST_TIMEOUT_MS),
    });
    const text = await response.text();
    return { status: response.status, body: (text.startsWith('{') ? JSON.parse(text) : text) as T };
  }

  faults(): Promise<Faults> {
    return this.#json('/local/faults');
  }

  setFaults(patch: FaultsPatch): Promise<Faults> {
    return this.#json('/local/faults', { method: 'POST', body: JSON.stringify(patch) });
  }

  /** Endpoints, table, queues and subscribers, with the effective settings. */
  info(): Promise<LocalInfo & { readonly settings?: PipelineSettings }> {
    return this.#json('/local/info');
  }

  /** Pipeline statistics; the per-second series from `sinceSeconds` (epoch seconds) when given. */
  stats(sinceSeconds?: number): Promise<LocalStatsSnapshot> {
    return this.#json(sinceSeconds === undefined ? '/local/stats' : `/local/stats?since=${sinceSeconds}`);
  }

  effects(): Promise<LocalEffectsView> {
    return this.#json('/local/effects');
  }

  /** True once every subscriber queue is empty and no consumer invocation runs; false after `timeoutMs`. */
  async waitUntilDrained(timeoutMs: number): Promise<boolean> {
    const response = await fetch(`${this.url}/local/drained?timeoutMs=${Math.round(timeoutMs)}`, {
      signal: AbortSignal.timeout(timeoutMs + 10_000),
    });
    await response.arrayBuffer();
    return response.ok;
  }

  /** Waits for the queue to drain, and throws when it does not within `timeoutMs`. */
  async drained(timeoutMs = 60_000): Promise<void> {
    if (!(await this.waitUntilDrained(timeoutMs)))
      throw new Error(`The local stack's queue did not drain within ${timeoutMs} ms.`);
  }

  /**
   * Effect counts of the given keys (0 for a key never effected), once the queues have drained: summed over
   * the subscribers, or one subscriber's.
   */
  async effectCounts(
    keys: readonly string[],
    drainTimeoutMs?: number,
    subscriber?: string,
  ): Promise<Record<string, number>> {
    await this.drained(drainTimeoutMs);
    const effects = await this.effects();
    const view = subscriber === undefined ? effects : effects.subscribers[subscriber];
    if (view === undefined) throw new Error(`The local stack has no subscriber ${subscriber}.`);
    const counts = new Map(view.effects.map((e) => [e.key, e.count]));
    return Object.fromEntries(keys.map((key) => [key, counts.get(key) ?? 0]));
  }

  async #json<T>(path: string, init?: RequestInit): Promise<T> {
    const response = await fetch(`${this.url}${path}`, {
      ...init,
      // A body sent to `/local/*` is JSON, and says so.
      ...(init?.body !== undefined && { headers: { 'content-type': 'application/json', ...init.headers } }),
      signal: AbortSignal.timeout(LOCAL_REQUEST_TIMEOUT_MS),
    });
    if (!response.ok)
      throw new Error(
        `${init?.method ?? 'GET'} ${path} answered ${response.status}: ${await response.text()}`,
      );
    return (await response.json()) as T;
  }
}
