import { describe, expect, it } from 'vitest';
import { createProofSigner, proofHolds, proofOf } from '../../../functions/commons/provenance.ts';

describe('provenance proofs', () => {
  it('hold for the bytes and key they were made with, and for nothing else', () => {
    const body = Buffer.from('{"object":"whatsapp_business_account","entry":[]}');
    const proof = proofOf('pipeline-key', body);
    expect(proof).toMatch(/^v1=[0-9a-f]{64}$/);
    expect(proofHolds('pipeline-key', body, proof)).toBe(true);
    expect(proofHolds('pipeline-key', body.toString('utf8'), proof)).toBe(true);
    expect(proofHolds('another-key', body, proof)).toBe(false);
    expect(proofHolds('pipeline-key', Buffer.concat([body, Buffer.from(' ')]), proof)).toBe(false);
    expect(proofHolds('pipeline-key', body, undefined)).toBe(false);
    expect(proofHolds('pipeline-key', body, proof.slice(0, -1))).toBe(false);
    expect(proofHolds('pipeline-key', body, proof.replace('v1=', 'v2='))).toBe(false);
  });

  it('are made by a signer that reuses its last proof only for the same text under the same key', async () => {
    let key = 'key-1';
    const sign = createProofSigner(async () => key);
    const text = '{"object":"whatsapp_business_account","entry":[]}';
    const bytes = Buffer.from(text);
    // The receiver's two proofs of a body kept whole, made side by side: the part's and the archive's.
    expect(await Promise.all([sign(text), sign(`${text}`)])).toEqual([
      proofOf('key-1', text),
      proofOf('key-1', text),
    ]);
    expect(await sign(bytes)).toBe(proofOf('key-1', bytes));
    expect(await sign(`${text} `)).toBe(proofOf('key-1', `${text} `));
    key = 'key-2';
    expect(await sign(`${text} `)).toBe(proofOf('key-2', `${text} `));
    bytes[0] = 0x5b;
    expect(await sign(bytes)).toBe(proofOf('key-2', bytes));
    // Bytes can change in place: they are proved afresh every time.
    bytes[0] = 0x7b;
    expect(await sign(bytes)).toBe(proofOf('key-2', text));
  });
});
