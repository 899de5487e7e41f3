/**
 * The live dashboard in real headless Chromium (the system's, else the one inside @sparticuz/chromium): the
 * page loads its charts from the local stack (no network), and shows fresh and duplicate events after a few
 * deliveries; its lanes table shows each lane's wait before the handler and oldest message; its key lookup
 * shows an effected event's claim, and its dead letters panel a quarantined body with its reason but without
 * its content.
 */
import { mkdirSync, statSync } from 'node:fs';
import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { conversationId } from '../../../contract/lanes.ts';
import { DEFAULT_SETTINGS } from '../../../contract/settings.ts';
import { keyedDigest } from '../../../functions/commons/log-digest.ts';
import { launchHeadlessChromium } from '../../../test/support/headless-chromium.ts';
import { spawnTestStack } from '../../../test/support/test-local-stack.ts';
import { emptyBucket } from '../../local/observe/pipeline-stats.ts';
import { DEV_APP_SECRET } from '../../local/stack/local-config.ts';
import { LocalStackClient } from '../../local/stack/local-stack-client.ts';
import type { SpawnedLocalStack } from '../../local/stack/spawn-local-stack.ts';
import {
  envelope,
  inboundMessagesWithIds,
  messagesChange,
  PHONE_NUMBER_ID,
  statusesChange,
  wamidFactory,
} from '../../meta-traffic/webhook-bodies.ts';

const SCREENSHOT = new URL('../output/dashboard.png', import.meta.url);
const PRIVATE_TEXT = 'please call me back about my diagnosis';
const PRIVATE_PHONE = '4915112345678';
let stack: SpawnedLocalStack;
let browser: Browser;

beforeAll(async () => {
  [stack, browser] = await Promise.all([spawnTestStack(), launchHeadlessChromium()]);
});

afterAll(async () => {
  await browser?.close();
  await stack?.stop();
});

describe('dashboard at /', () => {
  it('loads, then charts fresh and duplicate events and lists the skipped duplicate', async () => {
    const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
    const failedRequests: string[] = [];
    page.on('requestfailed', (request) => failedRequests.push(request.url()));
    page.on('response', (response) => {
      if (response.status() >= 400) failedRequests.push(`${response.status()} ${response.url()}`);
    });
    await page.goto(`${stack.url}/`);
    await page.waitForFunction("document.getElementById('status').textContent.startsWith('live')");
    expect(await page.evaluate(() => typeof (globalThis as { Chart?: unknown }).Chart)).toBe('function');

    const client = new LocalStackClient(stack.url);
    const wamid = wamidFactory('dashboard');
    const body = envelope([
      messagesChange(inboundMessagesWithIds([wamid(1), wamid(2)])),
      statusesChange([
        { id: wamid(9), status: 'delivered', timestamp: '1780000000', recipientId: '15551230000' },
      ]),
    ]);
    expect((await client.postWebhook(body, DEV_APP_SECRET)).status).toBe(200);
    expect((await client.postWebhook(body, DEV_APP_SECRET)).status).toBe(200);
    await client.drained();

    // The repeated body's status reaches the status lane's consumer, which skips it as a duplicate; its two
    // messages never reach a consumer: the message lane's FIFO queue drops each conversation's repeated part
    // (same deduplication id, from its event keys, within SQS's 5 minutes), and the page shows both counts.
    await page.waitForFunction(
      'Number(document.body.dataset.freshEvents) === 3 && Number(document.body.dataset.duplicateEvents) === 1 && Number(document.body.dataset.absorbedByQueue) === 2',
      undefined,
      { timeout: 15_000 },
    );
    expect(await page.textContent('#tile-absorbed')).toBe('2');
    // As the consumer logged it: the keyed digest under the run's log digest key, never the key.
    const { logDigestKey } = await client.info();
    const duplicateKeys = await page.$$eval('#duplicates td.key', (cells) => cells.map((c) => c.textContent));
    expect(duplicateKeys).toEqual([keyedDigest(logDigestKey, `st:${wamid(9)}:delivered`)]);
    // 3 repeats (1 skipped by a claim, 2 absorbed by the queue) of 6 events seen.
    expect(await page.textContent('#tile-rate')).toBe('50.0 %');
    const fieldLabels = await page.evaluate(() => {
      const chart = (globalThis as { Chart?: { getChart(id: string): { data: { labels: string[] } } } })
        .Chart;
      return chart?.getChart('chart-fields')?.data.labels;
    });
    expect(fieldLabels).toEqual(['message', 'status']);
    // The single default subscriber's row: its effects (3 events) and every field.
    expect(
      await page.$$eval('#subscribers tr', (rows) =>
        rows.map((row) => [...row.querySelectorAll('td')].slice(0, 6).map((cell) => cell.textContent)),
      ),
    ).toEqual([['default', 'all', '3', '3', '1', '2']]);
    expect(failedRequests).toEqual([]);

    mkdirSync(new URL('.', SCREENSHOT), { recursive: true });
    await page.screenshot({ path: SCREENSHOT.pathname, fullPage: true });
    expect(statSync(SCREENSHOT).size).toBeGreaterThan(10_000);
  });

  it('looks up an effected key (done), and counts a quarantined body with its reason, never its content', async () => {
    const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
    await page.goto(`${stack.url}/`);
    await page.waitForFunction("document.getElementById('status').textContent.startsWith('live')");
    const client = new LocalStackClient(stack.url);
    const wamid = wamidFactory('lookup');
    const body = envelope([
      messagesChange(inboundMessagesWithIds([wamid(1)])),
      statusesChange([{ id: wamid(2), status: 'read', timestamp: '1780000100', recipientId: '15551230000' }]),
    ]);
    expect((await client.postWebhook(body, DEV_APP_SECRET)).status).toBe(200);
    await client.drained();

    const lookUp = async (key: string) => {
      await page.fill('#key-input', key);
      await page.click('#key-form button');
      await page.waitForFunction(
        `document.getElementById('key-result').dataset.shown === ${JSON.stringify(key)}`,
      );
    };
    const facts = (subscriber: string) =>
      page.$$eval(`#key-result .key-view[data-subscriber="${subscriber}"] .facts tr`, (rows) =>
        Object.fromEntries(rows.map((row) => [row.children[0]?.textContent, row.children[1]?.textContent])),
      );

    await lookUp('hello');
    expect(await page.getAttribute('#key-result', 'class')).toBe('error');
    expect(await page.textContent('#key-result')).toMatch(/^unknown event key "hello"/);

    await lookUp(`st:${wamid(2)}:read`);
    expect(await facts('default')).toMatchObject({ ledger: 'current read' });

    const notJson = `${PRIVATE_TEXT} +${PRIVATE_PHONE}`;
    expect((await client.postWebhook(notJson, DEV_APP_SECRET)).status).toBe(200);
    await page.waitForFunction('document.body.dataset.quarantinedBodies === "1"', undefined, {
      timeout: 15_000,
    });
    const counts = await page.$$eval('#dead-letter-counts tr', (rows) =>
      rows.map((row) => [...row.querySelectorAll('td')].map((cell) => cell.textContent)),
    );
    expect(counts).toEqual([
      // The default subscriber wants messages, so it has both lanes (contract/lanes.ts), each with its DLQ.
      ['DLQ of default, status lane', '0', '0'],
      ['DLQ of default, message lane (FIFO)', '0', '0'],
      ['quarantine', '1', '0'],
    ]);
    const quarantined = await page.$$eval('#quarantined tr', (rows) =>
      rows.map((row) => [...row.querySelectorAll('td')].slice(1, 4).map((cell) => cell.textContent)),
    );
    expect(quarantined).toEqual([['invalid-json', `${Buffer.byteLength(notJson)} bytes`, '1/1']]);
    const pageText = (await page.textContent('body')) ?? '';
    expect(pageText).not.toContain(PRIVATE_TEXT);
    expect(pageText).not.toContain(PRIVATE_PHONE);
    expect(await page.isVisible('#dead-letters-empty')).toBe(true);

    await lookUp(`msg:${wamid(1)}`);
    expect(await page.textContent('.key-view[data-subscriber="default"] .claim-status')).toBe('done');
    expect(await facts('default')).toMatchObject({
      'stored as': `msg:${wamid(1)}`,
      state: 'done',
      attempts: '1',
      done: expect.stringMatching(/^\d{4}-\d\d-\d\dT.* ago\)$/),
      expires: expect.stringMatching(new RegExp(`\\(in ${DEFAULT_SETTINGS.retentionDays} d\\)$`)),
      'held by message': expect.stringMatching(/\S/),
    });

    mkdirSync(new URL('.', SCREENSHOT), { recursive: true });
    await page.screenshot({
      path: new URL('../output/dashboard-operator.png', import.meta.url).pathname,
      fullPage: true,
    });
  });

  it("shows each lane's row: its order, the wait before the handler, the oldest message and its queue", async () => {
    const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
    await page.goto(`${stack.url}/`);
    await page.waitForFunction("document.getElementById('status').textContent.startsWith('live')");
    const client = new LocalStackClient(stack.url);
    const info = await client.info();
    const sqs = new SQSClient({
      region: 'us-east-1',
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
      endpoint: info.sqsEndpoint,
    });
    const wamid = wamidFactory('lanes');
    try {
      // Straight into the message lane, as the receiver queues a conversation's part.
      await sqs.send(
        new SendMessageCommand({
          QueueUrl: info.subscribers[0]?.messageQueueUrl,
          MessageBody: envelope([messagesChange(inboundMessagesWithIds([wamid(1)]))]),
          MessageGroupId: conversationId(PHONE_NUMBER_ID, '16505551000'),
          MessageDeduplicationId: `msg:${wamid(1)}`,
        }),
      );
    } finally {
      sqs.destroy();
    }
    expect(await client.effectCounts([`msg:${wamid(1)}`])).toEqual({ [`msg:${wamid(1)}`]: 1 });

    const laneRow = (lane: string) =>
      page.$$eval(`#lanes tr[data-subscriber="default"][data-lane="${lane}"] td`, (cells) =>
        cells.map((cell) => cell.textContent),
      );
    await page.waitForFunction(
      `Number(document.querySelector('#lanes tr[data-lane="message"] td.waits')?.textContent) >= 1 &&
       document.querySelector('#lanes tr[data-lane="message"] td.oldest')?.textContent === 'none waiting'`,
      undefined,
      { timeout: 15_000 },
    );
    const message = await laneRow('message');
    const status = await laneRow('status');

    expect(
      await page.$$eval('#lanes tr', (rows) => rows.map((row) => row.getAttribute('data-lane'))),
    ).toEqual(['message', 'status']);
    expect(message.slice(0, 3)).toEqual(['default', 'message (inbound messages)', 'per conversation (FIFO)']);
    expect(message[3]).toMatch(/^\d+ ms$/);
    expect(message[4]).toMatch(/^\d+ ms$/);
    expect(Number.parseInt(message[4] ?? '', 10)).toBeGreaterThanOrEqual(
      Number.parseInt(message[3] ?? '', 10),
    );
    expect(message.slice(6)).toEqual(['none waiting', '0', '0', '0']);
    expect(status.slice(0, 3)).toEqual(['default', 'status (statuses, other fields)', 'none']);
    expect(status.slice(7)).toEqual(['0', '0', '0']);

    await page.screenshot({
      path: new URL('../output/dashboard-lanes.png', import.meta.url).pathname,
      fullPage: true,
    });
  });

  it('keeps showing what a lane that went quiet last did, with its age', async () => {
    const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
    // The stack's own answer, with its message lane a minute and a half past its last wait (the lane
    // statistics' unit test shows the stack computing exactly this).
    await page.route('**/local/stats*', async (route) => {
      const stats = (await (await route.fetch()).json()) as {
        subscribers: Record<string, { lanes: Record<string, Record<string, unknown>> }>;
      };
      Object.assign(stats.subscribers.default?.lanes.message ?? {}, {
        waitCount: 0,
        waitP50Ms: null,
        waitP99Ms: null,
        lastActive: { waitCount: 4, waitP50Ms: 12, waitP99Ms: 40, ageMs: 90_000 },
      });
      await route.fulfill({ json: stats });
    });
    await page.goto(`${stack.url}/`);
    await page.waitForFunction(
      `document.querySelector('#lanes tr[data-lane="message"] td.waits')?.textContent === '4 (90 s ago)'`,
      undefined,
      { timeout: 15_000 },
    );
    const message = await page.$$eval('#lanes tr[data-lane="message"] td', (cells) =>
      cells.map((cell) => cell.textContent),
    );
    expect(message.slice(3, 6)).toEqual(['12 ms (90 s ago)', '40 ms (90 s ago)', '4 (90 s ago)']);
  });

  it('reaches back in its time charts to the last second with events, and says how long ago it was', async () => {
    const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
    // The stack's own answer with its per-second series replaced: one busy second, then 350 quiet ones.
    await page.route('**/local/stats*', async (route) => {
      const stats = (await (await route.fetch()).json()) as { now: number; series: unknown[] };
      const now = Math.floor(stats.now / 1000);
      stats.series = Array.from({ length: 400 }, (_, i) => ({
        ...emptyBucket(now - 399 + i),
        byField:
          i === 49 ? { message: { fresh: 2, duplicate: 1, duplicateInFlight: 0, handlerErrors: 0 } } : {},
      }));
      await route.fulfill({ json: stats });
    });
    await page.goto(`${stack.url}/`);
    await page.waitForFunction("document.body.dataset.chartSeconds === '380'", undefined, {
      timeout: 15_000,
    });
    expect(await page.textContent('#events-age')).toBe('(last event 6 min ago)');
    const fresh = await page.evaluate(() => {
      const chart = (
        globalThis as { Chart?: { getChart(id: string): { data: { datasets: { data: number[] }[] } } } }
      ).Chart;
      return chart?.getChart('chart-events')?.data.datasets[0]?.data;
    });
    expect(fresh?.filter((value) => value > 0)).toEqual([2]);
  });
});
