import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { checkSignature, findHeader, signBody } from '../../../functions/receiver/signature.ts';

const SECRET = 'app-secret-one';
const OTHER = 'app-secret-two';
const body = Buffer.from('{"object":"whatsapp_business_account","entry":[]}');

describe('checkSignature', () => {
  it('accepts the HMAC-SHA256 of the raw bytes with a configured secret', () => {
    expect(checkSignature(body, signBody(body, SECRET), [SECRET])).toEqual({ valid: true, secretIndex: 0 });
  });

  it('accepts a signature made with any of several secrets (rotation, two apps) and says which', () => {
    expect(checkSignature(body, signBody(body, OTHER), [SECRET, OTHER])).toEqual({
      valid: true,
      secretIndex: 1,
    });
  });

  it('accepts the body given as its UTF-8 text', () => {
    expect(checkSignature(body.toString('utf8'), signBody(body, SECRET), [SECRET]).valid).toBe(true);
  });

  it('accepts surrounding whitespace, which is not part of an HTTP field value', () => {
    expect(checkSignature(body, ` ${signBody(body, SECRET)} `, [SECRET]).valid).toBe(true);
  });

  it.each([
    ['missing', undefined, 'missing'],
    ['empty', '', 'missing'],
    ['without the sha256= prefix', signBody(body, SECRET).slice('sha256='.length), 'malformed'],
    ['sha1', `sha1=${'a'.repeat(40)}`, 'malformed'],
    ['truncated', signBody(body, SECRET).slice(0, -2), 'malformed'],
    ['too long', `${signBody(body, SECRET)}00`, 'malformed'],
    ['not hex', `sha256=${'z'.repeat(64)}`, 'malformed'],
    // Right digest, other spelling: only Meta's own (lowercase label, lowercase hex) is accepted.
    ['labelled SHA256=', signBody(body, SECRET).replace('sha256=', 'SHA256='), 'malformed'],
    ['labelled Sha256=', signBody(body, SECRET).replace('sha256=', 'Sha256='), 'malformed'],
    [
      'in upper-case hex',
      `sha256=${signBody(body, SECRET).slice('sha256='.length).toUpperCase()}`,
      'malformed',
    ],
    ['spaced after the label', signBody(body, SECRET).replace('=', '= '), 'malformed'],
    ['signed with another secret', signBody(body, 'not-configured'), 'mismatch'],
  ])('refuses a header that is %s', (_, header, problem) => {
    expect(checkSignature(body, header, [SECRET, OTHER])).toEqual({ valid: false, problem });
  });

  it('refuses everything when no secret is configured, and never treats an empty secret as a key', () => {
    expect(checkSignature(body, signBody(body, ''), [])).toEqual({ valid: false, problem: 'mismatch' });
    expect(checkSignature(body, signBody(body, ''), [''])).toEqual({ valid: false, problem: 'mismatch' });
  });

  it('checks the exact bytes Meta signed: a re-serialised escaped-unicode body fails', () => {
    const raw = readFileSync(new URL('../../fixtures/webhooks/escaped-unicode.json', import.meta.url));
    const header = signBody(raw, SECRET);
    expect(checkSignature(raw, header, [SECRET]).valid).toBe(true);
    const reserialised = Buffer.from(JSON.stringify(JSON.parse(raw.toString('utf8'))));
    expect(reserialised.equals(raw)).toBe(false);
    expect(checkSignature(reserialised, header, [SECRET])).toEqual({ valid: false, problem: 'mismatch' });
  });

  it('detects a single flipped byte', () => {
    const header = signBody(body, SECRET);
    const tampered = Buffer.from(body);
    tampered[10] = (tampered[10] ?? 0) ^ 1;
    expect(checkSignature(tampered, header, [SECRET]).valid).toBe(false);
  });
});

describe('findHeader', () => {
  it('finds a header whatever the case of its name', () => {
    expect(findHeader({ 'x-hub-signature-256': 'a' }, 'x-hub-signature-256')).toBe('a');
    expect(findHeader({ 'X-Hub-Signature-256': 'b' }, 'x-hub-signature-256')).toBe('b');
    expect(findHeader({ other: 'c' }, 'x-hub-signature-256')).toBeUndefined();
    expect(findHeader(undefined, 'x-hub-signature-256')).toBeUndefined();
  });
});
