import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MAX_STORED_KEY_BYTES, storageKey } from '../../../functions/claims/storage-key.ts';

describe('storageKey', () => {
  it('keeps ordinary keys verbatim, with the namespace prefix when one is set', () => {
    expect(storageKey('msg:wamid.HBgL')).toBe('msg:wamid.HBgL');
    expect(storageKey('st:wamid.HBgL:read', 'crm')).toBe('crm#st:wamid.HBgL:read');
  });

  it('bounds every stored key and never maps two different keys to one', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 4000 }), fc.string({ maxLength: 4000 }), (a, b) => {
        fc.pre(a !== b);
        expect(Buffer.byteLength(storageKey(a), 'utf8')).toBeLessThanOrEqual(MAX_STORED_KEY_BYTES + 300 * 4);
        expect(storageKey(a)).not.toBe(storageKey(b));
      }),
    );
  });

  it('hashes an overlong key deterministically, keeping a readable prefix', () => {
    const key = `msg:${'x'.repeat(5000)}`;
    expect(storageKey(key)).toBe(storageKey(key));
    expect(storageKey(key)).toMatch(/^msg:x{252}#sha256:[0-9a-f]{64}$/);
  });
});
