import { describe, expect, it } from 'vitest';
import { PRICES } from '../../../cli/cost/prices.ts';
import { ARCHIVER_BATCHING_WINDOW_SECONDS } from '../../../contract/archiver-settings.ts';
import { ARCHIVE_ASSUMPTIONS, archiveCostPerMillion } from '../../bench/cost/archive-cost.ts';
import { archiveRegion } from '../../bench/markdown/cost-page.ts';

describe('archiveCostPerMillion', () => {
  it('bills one PUT per batching window of deliveries, so PUTs fall as the rate rises', () => {
    const slow = archiveCostPerMillion(1);
    expect(slow.deliveriesPerObject).toBe(ARCHIVER_BATCHING_WINDOW_SECONDS);
    expect(slow.puts).toBeCloseTo((1e6 / ARCHIVER_BATCHING_WINDOW_SECONDS) * PRICES.s3.perPutRequest, 10);
    expect(archiveCostPerMillion(10).puts).toBeCloseTo(slow.puts / 10, 10);
  });

  it("caps an object at Lambda's 6 MB payload of archive messages, before the batch size", () => {
    // The body as its text, not base64: a third fewer bytes than before, so more deliveries to an object.
    const messageBytes = ARCHIVE_ASSUMPTIONS.bodyBytes + ARCHIVE_ASSUMPTIONS.attributeBytes;
    const busy = archiveCostPerMillion(1_000);
    expect(busy.deliveriesPerObject).toBe(Math.floor((6 * 1024 * 1024) / messageBytes));
    expect(archiveCostPerMillion(10_000).deliveriesPerObject).toBe(busy.deliveriesPerObject);
  });

  it('stores for the retention: twice the days, twice the storage, the rest unchanged', () => {
    const month = archiveCostPerMillion(10, 30);
    const two = archiveCostPerMillion(10, 60);
    expect(two.storage).toBeCloseTo(month.storage * 2, 10);
    expect(two.total - two.storage).toBeCloseTo(month.total - month.storage, 10);
    expect(month.total).toBeCloseTo(month.puts + month.storage + month.sqs + month.archiver, 10);
  });

  it('counts the send, and the receive and delete of ten at a time, for the archive queue', () => {
    expect(archiveCostPerMillion(10).sqs).toBeCloseTo((1e6 + 2e5) * PRICES.sqs.perRequest, 10);
  });

  it('prints a row per rate, each total the sum of its columns', () => {
    const region = archiveRegion();
    const totals = [...region.matchAll(/\*\*\$(\d+\.\d+)\*\*/g)].map((match) => Number(match[1]));
    expect(totals).toEqual([1, 10, 100].map((rate) => Number(archiveCostPerMillion(rate).total.toFixed(2))));
  });
});
