/**
 * `npm start` with two subscribers (LOCAL_SUBSCRIBERS): `bot` wants only the `messages` field, `crm` every
 * field. One stack for the whole file (a start costs half a minute): routing and effects per subscriber,
 * `/local/info`, the dashboard's subscribers table in headless Chromium, and the outage drill's verdict per
 * subscriber.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchHeadlessChromium } from '../../../test/support/headless-chromium.ts';
import { spawnTestStack } from '../../../test/support/test-local-stack.ts';
import { waitFor } from '../../../test/support/wait-for.ts';
import { keysOfEnvelope } from '../../../test/support/webhooks/event-keys.ts';
import type { LocalStatsSnapshot } from '../../local/observe/subscriber-stats.ts';
import { DEV_APP_SECRET } from '../../local/stack/local-config.ts';
import { LocalStackClient } from '../../local/stack/local-stack-client.ts';
import type { SpawnedLocalStack } from '../../local/stack/spawn-local-stack.ts';
import {
  envelope,
  inboundMessagesWithIds,
  messagesChange,
  statusesChange,
  wamidFactory,
} from '../../meta-traffic/webhook-bodies.ts';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const TWO_SUBSCRIBERS = 'test/support/local-subscribers/two-subscribers.ts';
let stack: SpawnedLocalStack;
let client: LocalStackClient;

beforeAll(async () => {
  stack = await spawnTestStack({
    env: {
      LOCAL_SUBSCRIBERS: TWO_SUBSCRIBERS,
      // Small batches and a short window: the outage drill at the end compares with M/M/c over batch size 1.
      LOCAL_BATCH_SIZE: '1',
      LOCAL_BATCHING_WINDOW_SECONDS: '0',
      LOCAL_MAX_CONCURRENCY: '2',
      // A repeat found in flight comes back at its holder's lease end: keep leases short.
      LOCAL_CONSUMER_TIMEOUT_SECONDS: '5',
    },
  });
  client = new LocalStackClient(stack.url);
});

afterAll(async () => {
  await stack?.stop();
});

/** A template status update unique to this run (its template id is numeric). */
function templateChange(): object {
  return {
    field: 'message_template_status_update',
    value: {
      event: 'APPROVED',
      message_template_id: Number(`9${Date.now()}`.slice(0, 15)) + Math.floor(Math.random() * 1000),
      message_template_name: 'order_update',
      message_template_language: 'en_US',
      reason: 'NONE',
    },
  };
}

describe('npm start with two subscribers', () => {
  it('lists each subscriber with its fields, namespace, queue and DLQ, and the quarantine queue', async () => {
    const info = await client.info();

    expect(info.subscribersSource).toBe(TWO_SUBSCRIBERS);
    expect(
      info.subscribers.map(({ name, fields, keyNamespace }) => ({ name, fields, keyNamespace })),
    ).toEqual([
      { name: 'bot', fields: ['messages'], keyNamespace: 'bot' },
      { name: 'crm', fields: null, keyNamespace: 'crm' },
    ]);
    const urls = [...info.subscribers.flatMap((s) => [s.queueUrl, s.dlqUrl]), info.quarantineQueueUrl];
    expect(new Set(urls).size).toBe(5);
    expect(info.subscribers[0]?.queueUrl).toMatch(/whatsapp-webhook-bot-deliveries$/);
    expect(info.subscribers[1]?.dlqUrl).toMatch(/whatsapp-webhook-crm-deliveries-dlq$/);
    expect(info.quarantineQueueUrl).toMatch(/whatsapp-webhook-quarantine$/);
    // On the test run's shared DynamoDB Local (test/support/test-local-stack.ts), a table of the stack's own name.
    expect(info.tableName).toMatch(/^whatsapp-webhook-dedup-claims-[0-9a-f]{12}$/);
    expect(info.subscribers[0]?.handlers).toEqual(['onMessage', 'onStatus', 'onError', 'onManagementEvent']);
  });

  it('gives each subscriber its own ordered message lane beside its status lane', async () => {
    const info = await client.info();
    const lanes = info.subscribers.map((s) => ({
      name: s.name,
      messageQueue: s.messageQueueUrl?.split('/').pop(),
      messageDlq: s.messageDlqUrl?.split('/').pop(),
      ordered: s.messageLaneOrdered,
      window: s.messageLaneSettings?.maxBatchingWindowSeconds,
    }));

    expect(lanes).toEqual([
      {
        name: 'bot',
        messageQueue: 'whatsapp-webhook-bot-messages.fifo',
        messageDlq: 'whatsapp-webhook-bot-messages-dlq.fifo',
        ordered: true,
        window: 0,
      },
      {
        name: 'crm',
        messageQueue: 'whatsapp-webhook-crm-messages.fifo',
        messageDlq: 'whatsapp-webhook-crm-messages-dlq.fifo',
        ordered: true,
        window: 0,
      },
    ]);
    const stats = (await client.get<LocalStatsSnapshot>('/local/stats')).body;
    expect(Object.keys(stats.subscribers.bot?.lanes ?? {}).sort()).toEqual(['message', 'status']);
    expect(Object.keys(stats.subscribers.crm?.lanes ?? {}).sort()).toEqual(['message', 'status']);
  });

  it('effects each key once per subscriber that wants its field, repeats included', async () => {
    const wamid = wamidFactory('fanout');
    const messagesAndStatuses = envelope([
      messagesChange(inboundMessagesWithIds([wamid(1), wamid(2)])),
      statusesChange([
        { id: wamid(9), status: 'delivered', timestamp: '1780000000', recipientId: '15551230000' },
      ]),
    ]);
    const mixed = envelope([messagesChange(inboundMessagesWithIds([wamid(3)])), templateChange()]);
    const templateOnly = envelope([templateChange()]);
    const messageKeys = [...keysOfEnvelope(messagesAndStatuses), keysOfEnvelope(mixed)[0] as string];
    const templateKeys = [keysOfEnvelope(mixed)[1] as string, ...keysOfEnvelope(templateOnly)];
    const records = async () => {
      const { subscribers } = await client.stats();
      return [subscribers.bot?.totals.records ?? 0, subscribers.crm?.totals.records ?? 0];
    };
    const [botBefore, crmBefore] = await records();

    // A delivery of none of bot's fields never reaches its queue.
    expect((await client.postWebhook(templateOnly, DEV_APP_SECRET)).status).toBe(200);
    await client.drained();
    expect(await records()).toEqual([botBefore, (crmBefore ?? 0) + 1]);

    for (const body of [messagesAndStatuses, mixed, messagesAndStatuses, mixed]) {
      expect((await client.postWebhook(body, DEV_APP_SECRET)).status).toBe(200);
    }

    const all = [...messageKeys, ...templateKeys];
    const once = (keys: string[]) => Object.fromEntries(keys.map((key) => [key, 1]));
    const never = (keys: string[]) => Object.fromEntries(keys.map((key) => [key, 0]));
    expect(await client.effectCounts(all, 60_000, 'bot')).toEqual({
      ...once(messageKeys),
      ...never(templateKeys),
    });
    expect(await client.effectCounts(all, 60_000, 'crm')).toEqual(once(all));
    // Summed over the subscribers: a key both effected counts twice.
    expect(await client.effectCounts(all)).toEqual({
      ...Object.fromEntries(messageKeys.map((key) => [key, 2])),
      ...once(templateKeys),
    });

    // Each body went twice. The repeated messages never reach a consumer: each subscriber's FIFO message lane
    // drops a conversation's repeated part (same deduplication id, from its event keys, within SQS's 5
    // minutes). The repeated status (both) and template event (crm only) reach the status lanes, whose
    // consumers skip them as duplicates.
    await client.drained();
    const effects = await client.effects();
    // A repeat that met its twin in flight is counted when it waits (in flight) and again when it comes back
    // to find the claim done: one or two counts per repeat.
    expect(effects.subscribers.bot?.duplicatesSkipped).toBeGreaterThanOrEqual(1);
    expect(effects.subscribers.bot?.duplicatesSkipped).toBeLessThanOrEqual(2);
    expect(effects.subscribers.crm?.duplicatesSkipped).toBeGreaterThanOrEqual(2);
    expect(effects.subscribers.crm?.duplicatesSkipped).toBeLessThanOrEqual(4);
    // The repeated messages: each subscriber's message lane queue absorbed them, and says so once its queues
    // are next sampled (every second, as CloudWatch reads SQS's metric every minute).
    await waitFor(async () => {
      const { subscribers } = await client.effects();
      return [subscribers.bot, subscribers.crm].every((view) => (view?.duplicatesAbsorbedByQueue ?? 0) >= 1);
    }, 10_000);
    // A key both effected counts 2 in all, one for each: no double effect.
    for (const key of messageKeys) {
      expect(effects.effects.find((entry) => entry.key === key)?.bySubscriber).toEqual({ bot: 1, crm: 1 });
    }
    // The mixed delivery's template part never reached bot: the receiver sent it only the conversation's part.
    const botCounters = (await client.stats()).subscribers.bot?.totals.counters ?? {};
    expect(Object.keys(botCounters).filter((name) => name.startsWith('EventsFilteredOut'))).toEqual([]);
  }, 90_000);

  it('keeps a status ledger per subscriber', async () => {
    const wamid = wamidFactory('ledgers')(1);
    const body = envelope([
      statusesChange([{ id: wamid, status: 'read', timestamp: '1780000300', recipientId: '15551230000' }]),
    ]);
    expect((await client.postWebhook(body, DEV_APP_SECRET)).status).toBe(200);
    await client.drained();

    for (const subscriber of ['bot', 'crm']) {
      const ledger = await client.get<{ current: string }>(
        `/local/ledger/${encodeURIComponent(wamid)}?subscriber=${subscriber}`,
      );
      expect(ledger.status).toBe(200);
      expect(ledger.body.current).toBe('read');
    }
    expect((await client.get(`/local/ledger/${encodeURIComponent(wamid)}?subscriber=nobody`)).status).toBe(
      404,
    );
  });

  it('shows both subscribers on the dashboard, with their effects and fields', async () => {
    let browser: Browser | undefined;
    try {
      browser = await launchHeadlessChromium();
      const page = await browser.newPage();
      await page.goto(`${stack.url}/`);
      const stats = await client.stats();
      await page.waitForFunction(
        `document.querySelectorAll('#subscribers tr').length === 2 && document.querySelector('#subscribers tr[data-subscriber="bot"] td.fields').textContent === 'messages'`,
        undefined,
        { timeout: 15_000 },
      );
      const rows = await page.$$eval('#subscribers tr', (trs) =>
        trs.map((tr) => ({
          name: tr.getAttribute('data-subscriber'),
          fields: tr.querySelector('td.fields')?.textContent,
          effects: Number(tr.querySelector('td.effects')?.textContent),
        })),
      );
      expect(rows).toEqual([
        { name: 'bot', fields: 'messages', effects: stats.subscribers.bot?.effects },
        { name: 'crm', fields: 'all', effects: stats.subscribers.crm?.effects },
      ]);
      expect(rows[1]?.effects).toBeGreaterThan(rows[0]?.effects ?? 0);
    } finally {
      await browser?.close();
    }
  });

  it('drills an outage and gives the exactly-once verdict per subscriber', async () => {
    const { code, stdout, stderr } = await new Promise<{
      code: number | null;
      stdout: string;
      stderr: string;
    }>((resolve) => {
      execFile(
        process.execPath,
        // Shorter than --short alone: the verdict per subscriber needs a few dozen events, not a hundred.
        [
          ...[
            '--import',
            'tsx',
            'cli/outage-drill/outage-drill.ts',
            '--short',
            '--json',
            '--seed',
            '7',
            '--url',
            stack.url,
          ],
          ...['--rate', '4', '--duration', '10', '--outage-start', '3', '--outage', '3'],
        ],
        { cwd: ROOT, timeout: 150_000 },
        (error, out, err) =>
          resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout: out, stderr: err }),
      );
    });

    expect(code, `${stdout}\n${stderr}`).toBe(0);
    const summary = JSON.parse(stdout.trim().split('\n').at(-1) ?? '{}') as {
      verdict: {
        exactlyOnce: boolean;
        distinctEvents: number;
        bySubscriber: Record<string, { exactlyOnce: boolean; distinctEvents: number; unexpected: number }>;
      };
    };
    const { bot, crm } = summary.verdict.bySubscriber;
    expect(summary.verdict.exactlyOnce).toBe(true);
    expect(bot).toMatchObject({ exactlyOnce: true, unexpected: 0 });
    expect(crm).toMatchObject({ exactlyOnce: true, unexpected: 0 });
    // crm had every event; bot those of `messages` (not the odd template update), and effected no other.
    expect(crm?.distinctEvents).toBe(summary.verdict.distinctEvents);
    expect(bot?.distinctEvents).toBeGreaterThan(10);
    expect(bot?.distinctEvents).toBeLessThanOrEqual(crm?.distinctEvents ?? 0);
    expect(stdout).toMatch(/^ {2}bot: EXACTLY ONCE — \d+ events of its own/m);
    expect(stdout).toMatch(/^ {2}crm: EXACTLY ONCE — \d+ events of its own/m);
  }, 180_000);
});

describe('npm start with unsafe subscribers', () => {
  it('refuses them with one clear line and exit code 1, before starting anything', async () => {
    const result = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
      execFile(
        process.execPath,
        ['--import', 'tsx', 'cli/local/start.ts'],
        {
          cwd: ROOT,
          env: { ...process.env, LOCAL_SUBSCRIBERS: 'test/support/local-subscribers/unsafe-subscribers.ts' },
          timeout: 30_000,
        },
        (error, _stdout, stderr) =>
          resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stderr }),
      );
    });

    expect(result.code).toBe(1);
    expect(result.stderr.trim().split('\n')).toEqual([
      'npm start: Subscribers bot and crm share the key namespace "shared": each subscriber needs its own, or one would skip the other\'s events as duplicates.',
    ]);
  });
});
