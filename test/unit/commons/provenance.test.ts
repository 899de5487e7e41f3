import { describe, expect, it } from 'vitest';
import { proofHolds, proofOf } from '../../../functions/commons/provenance.ts';

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
});
