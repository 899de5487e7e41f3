import { describe, expect, it } from 'vitest';
import {
  ArchiveFormatError,
  type ArchiveRecord,
  archivedBodyBytes,
  archiveObjectKey,
  decodeArchiveLines,
  encodeArchiveLines,
  hourPrefixesForRange,
  overlaps,
  parseArchiveObjectKey,
} from '../../../contract/archive.ts';

const at = (iso: string): number => Date.parse(iso);

function record(
  deliveryId: string,
  arrivedAt: string,
  body = '{"object":"whatsapp_business_account"}',
): ArchiveRecord {
  return {
    v: 1,
    deliveryId,
    arrivedAt,
    verdict: 'accepted',
    subscribers: ['default'],
    encoding: 'utf8',
    body,
  };
}

describe('archive object keys', () => {
  it('files an object under its first arrival hour and reads both instants back', () => {
    const key = archiveObjectKey(at('2026-12-01T14:00:00.123Z'), at('2026-12-01T15:00:01.000Z'), 'b-1');
    expect(key).toBe('deliveries/dt=2026-12-01/hour=14/20261201T140000123Z-20261201T150001000Z-b-1.jsonl.gz');
    const name = parseArchiveObjectKey(key);
    expect(name.firstArrivalMs).toBe(at('2026-12-01T14:00:00.123Z'));
    expect(name.lastArrivalMs).toBe(at('2026-12-01T15:00:01.000Z'));
    expect(name.batchId).toBe('b-1');
  });

  it('refuses keys and batch ids outside the format', () => {
    expect(() => parseArchiveObjectKey('deliveries/other.json')).toThrow(ArchiveFormatError);
    expect(() => archiveObjectKey(0, 1, 'a/b')).toThrow(ArchiveFormatError);
    expect(() => archiveObjectKey(2, 1, 'a')).toThrow(ArchiveFormatError);
  });

  it('lists the hour before a range, where a batch begun earlier may hold its first deliveries', () => {
    expect(hourPrefixesForRange(at('2026-12-01T14:10:00Z'), at('2026-12-01T15:30:00Z'), 60_000)).toEqual([
      'deliveries/dt=2026-12-01/hour=14/',
      'deliveries/dt=2026-12-01/hour=15/',
    ]);
    expect(hourPrefixesForRange(at('2026-12-02T00:00:30Z'), at('2026-12-02T00:10:00Z'), 60_000)).toEqual([
      'deliveries/dt=2026-12-01/hour=23/',
      'deliveries/dt=2026-12-02/hour=00/',
    ]);
  });

  it('keeps an object that overlaps the range at either end, and skips one wholly outside', () => {
    const name = parseArchiveObjectKey(
      archiveObjectKey(at('2026-12-01T14:00:00Z'), at('2026-12-01T14:01:00Z'), 'x'),
    );
    expect(overlaps(name, at('2026-12-01T14:00:30Z'), at('2026-12-01T15:00:00Z'))).toBe(true);
    expect(overlaps(name, at('2026-12-01T13:00:00Z'), at('2026-12-01T14:00:00.001Z'))).toBe(true);
    expect(overlaps(name, at('2026-12-01T14:01:00.001Z'), at('2026-12-01T15:00:00Z'))).toBe(false);
    expect(overlaps(name, at('2026-12-01T13:00:00Z'), at('2026-12-01T14:00:00Z'))).toBe(false);
  });
});

describe('archive lines', () => {
  it('sorts records by arrival and round-trips them', () => {
    const late = record('b', '2026-12-01T14:00:02.000Z');
    const early = record('a', '2026-12-01T14:00:01.000Z');
    const text = encodeArchiveLines([late, early]);
    expect(text.split('\n')).toHaveLength(3);
    expect(decodeArchiveLines(text)).toEqual([early, late]);
  });

  it('gives back the exact bytes of a body that is not UTF-8', () => {
    const bytes = Uint8Array.from([0xff, 0xfe, 0x7b]);
    const kept: ArchiveRecord = {
      ...record('q', '2026-12-01T14:00:00.000Z'),
      verdict: 'quarantined',
      encoding: 'base64',
      body: Buffer.from(bytes).toString('base64'),
    };
    expect([
      ...archivedBodyBytes(decodeArchiveLines(encodeArchiveLines([kept]))[0] as ArchiveRecord),
    ]).toEqual([...bytes]);
  });

  it('names the line that is not a record of this version', () => {
    const good = encodeArchiveLines([record('a', '2026-12-01T14:00:00.000Z')]);
    expect(() => decodeArchiveLines(`${good}not json\n`)).toThrow('Line 2 is not JSON.');
    expect(() => decodeArchiveLines(`${good}${JSON.stringify({ ...record('b', 'x'), v: 2 })}\n`)).toThrow(
      'Line 2 has version 2',
    );
    expect(() => decodeArchiveLines(JSON.stringify({ ...record('b', 'yesterday') }))).toThrow(
      'Line 1 is not an archive record.',
    );
  });
});
