/**
 * The live dashboard in real headless Chromium (the system's, else the one inside @sparticuz/chromium): the
 * page loads its charts from the local stack (no network), and shows fresh and duplicate events after a few
 * deliveries; its key lookup shows an effected event's claim, and its dead letters panel a quarantined body
 * with its reason but without its content.
 */
import { mkdirSync, statSync } from 'node:fs';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEV_APP_SECRET } from '../../local/stack/local-config.ts';
import { LocalStackClient } from '../../local/stack/local-stack-client.ts';
import { type SpawnedLocalStack, spawnLocalStack } from '../../local/stack/spawn-local-stack.ts';
import { launchHeadlessChromium } from '../support/headless-chromium.ts';
import {
  envelope,
  inboundMessagesWithIds,
  messagesChange,
  statusesChange,
  wamidFactory,
} from '../support/webhooks/webhook-bodies.ts';

const SCREENSHOT = new URL('../output/dashboard.png', import.meta.url);
const PRIVATE_TEXT = 'please call me back about my diagnosis';
const PRIVATE_PHONE = '4915112345678';
let stack: SpawnedLocalStack;
let browser: Browser;

beforeAll(async () => {
  [stack, browser] = await Promise.all([spawnLocalStack(), launchHeadlessChromium()]);
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

    await page.waitForFunction(
      'Number(document.body.dataset.freshEvents) === 3 && Number(document.body.dataset.duplicateEvents) === 3',
      undefined,
      { timeout: 15_000 },
    );
    const duplicateKeys = await page.$$eval('#duplicates td.key', (cells) => cells.map((c) => c.textContent));
    expect(duplicateKeys).toEqual(expect.arrayContaining([`msg:${wamid(1)}`, `msg:${wamid(2)}`]));
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
        rows.map((row) => [...row.querySelectorAll('td')].slice(0, 3).map((cell) => cell.textContent)),
      ),
    ).toEqual([['default', 'all', '3']]);
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
      ['DLQ of default', '0', '0'],
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
      expires: expect.stringMatching(/\(in 8 d\)$/),
      'held by message': expect.stringMatching(/\S/),
    });

    mkdirSync(new URL('.', SCREENSHOT), { recursive: true });
    await page.screenshot({
      path: new URL('../output/dashboard-operator.png', import.meta.url).pathname,
      fullPage: true,
    });
  });
});
