/**
 * The live dashboard in real headless Chromium (the system's, else the one inside @sparticuz/chromium): the
 * page loads its charts from the local stack (no network), and shows fresh and duplicate events after a few
 * deliveries.
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
});
