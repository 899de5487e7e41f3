/**
 * The conversations bench's subscriber module (given to the local stack through LOCAL_SUBSCRIBERS, see
 * ./journal-subscribers.ts): every handler writes when it started and when it finished to the journal named by
 * BENCH_CONVERSATIONS_JOURNAL, one line each, `S <key> <ms>` and `E <key> <ms>` (epoch ms with a fraction, the
 * clock the bench reads when it POSTs). A message whose text is `sleep:<ms>` takes that long; a status takes
 * BENCH_STATUS_HANDLER_MS (an analytics write). Synchronous appends: a line is in the file once written.
 */
import { appendFileSync } from 'node:fs';
import { defineWebhookHandlers } from '../../../functions/consumer/handler-api.ts';

export const JOURNAL_ENV = 'BENCH_CONVERSATIONS_JOURNAL';
export const STATUS_HANDLER_MS_ENV = 'BENCH_STATUS_HANDLER_MS';

const SLEEP_PREFIX = 'sleep:';

/** The text of a message that makes its handler take `ms`. */
export function sleepText(ms: number): string {
  return `${SLEEP_PREFIX}${Math.round(ms)}`;
}

export function nowMs(): number {
  return performance.timeOrigin + performance.now();
}

function journal(kind: 'S' | 'E', key: string): void {
  const path = process.env[JOURNAL_ENV];
  if (path) appendFileSync(path, `${kind} ${key} ${nowMs().toFixed(2)}\n`);
}

function messageSleepMs(payload: Readonly<Record<string, unknown>>): number {
  const text = (payload.text as { body?: unknown } | undefined)?.body;
  if (typeof text !== 'string' || !text.startsWith(SLEEP_PREFIX)) return 0;
  const ms = Number(text.slice(SLEEP_PREFIX.length));
  return Number.isFinite(ms) && ms > 0 ? ms : 0;
}

const sleep = (ms: number) => (ms > 0 ? new Promise((done) => setTimeout(done, ms)) : undefined);

/** Shared with the pass-through floor (./pass-through-consumer.ts), which calls these with no claim. */
export const webhookHandlers = defineWebhookHandlers({
  onMessage: async ({ key, payload }) => {
    journal('S', key);
    await sleep(messageSleepMs(payload));
    journal('E', key);
  },
  onStatus: async ({ key }) => {
    journal('S', key);
    await sleep(Number(process.env[STATUS_HANDLER_MS_ENV] ?? 0));
    journal('E', key);
  },
});
