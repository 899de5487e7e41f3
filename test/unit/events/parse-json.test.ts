import { isLosslessNumber, LosslessNumber } from 'lossless-json';
import { describe, expect, it } from 'vitest';
import {
  MAX_LOSSLESS_NESTING,
  parseWebhookJson,
  stringifyWebhookJson,
} from '../../../functions/events/parse-json.ts';

function body(text: string) {
  const parsed = parseWebhookJson(text);
  if (!parsed.ok) throw new Error(`expected valid JSON: ${parsed.detail}`);
  return parsed.body;
}

describe('parseWebhookJson', () => {
  it('keeps integers above 2^53 exactly as written', () => {
    const parsed = body(
      '{"id":12988455123377601234,"next":9007199254740993,"max":9007199254740991}',
    ) as Record<string, unknown>;
    expect(isLosslessNumber(parsed.id)).toBe(true);
    expect(String(parsed.id)).toBe('12988455123377601234');
    expect(String(parsed.next)).toBe('9007199254740993');
    // A number that prints back as written stays a plain number.
    expect(parsed.max).toBe(9007199254740991);
  });

  it.each([
    ['1.50', '1.50'],
    ['1e3', '1e3'],
    ['1E+3', '1E+3'],
    ['-0', '-0'],
    ['0.10', '0.10'],
    ['123456789012345678901234567890', '123456789012345678901234567890'],
  ])('keeps the lexeme of %s', (lexeme, expected) => {
    const [value] = body(`[${lexeme}]`) as unknown[];
    expect(isLosslessNumber(value)).toBe(true);
    expect((value as LosslessNumber).value).toBe(expected);
  });

  it.each([
    ['0', 0],
    ['-12', -12],
    ['1.5', 1.5],
    ['1751301200', 1751301200],
  ])('turns the round-tripping number %s into a plain number', (lexeme, expected) => {
    expect(body(`[${lexeme}]`)).toEqual([expected]);
  });

  it('decodes UTF-8 bytes and escapes alike', () => {
    const text = '{"a":"Caf\\u00e9 \\ud83d\\ude80 \\/","b":"Café 🚀 /"}';
    const fromBytes = parseWebhookJson(new TextEncoder().encode(text));
    expect(fromBytes).toEqual({ ok: true, body: { a: 'Café 🚀 /', b: 'Café 🚀 /' } });
    expect(parseWebhookJson(Buffer.from(text, 'utf8'))).toEqual(fromBytes);
  });

  it('rejects bytes that are not UTF-8 as invalid JSON', () => {
    expect(parseWebhookJson(new Uint8Array([0x7b, 0x22, 0xc3, 0x28, 0x22, 0x7d]))).toEqual({
      ok: false,
      reason: 'invalid-json',
      detail: 'body is not valid UTF-8',
    });
  });

  it('judges a byte order mark the same in bytes and text, like JSON.parse', () => {
    const withBom = '\ufeff{"a":1}';
    expect(() => JSON.parse(withBom)).toThrow();
    expect(parseWebhookJson(withBom)).toMatchObject({ ok: false, reason: 'invalid-json' });
    expect(parseWebhookJson(Buffer.from(withBom, 'utf8'))).toMatchObject({
      ok: false,
      reason: 'invalid-json',
    });
  });

  it('lets the last of duplicate keys win, like JSON.parse', () => {
    expect(body('{"status":"sent","status":"read"}')).toEqual(
      JSON.parse('{"status":"sent","status":"read"}'),
    );
  });

  it('keeps a "__proto__" key as data, like JSON.parse', () => {
    const parsed = body('{"__proto__":{"polluted":true}}') as Record<string, unknown>;
    expect(Object.getPrototypeOf(parsed)).toBe(Object.prototype);
    expect(Object.keys(parsed)).toEqual(['__proto__']);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('behaves like JSON.parse for repeated and "__proto__" keys on the lossless path too', () => {
    const parsed = body(
      '{"id":12988455123377601234,"status":"sent","status":"read","__proto__":{"x":1}}',
    ) as Record<string, unknown>;
    expect(String(parsed.id)).toBe('12988455123377601234');
    expect(parsed.status).toBe('read');
    expect(Object.getPrototypeOf(parsed)).toBe(Object.prototype);
    expect(Object.keys(parsed)).toEqual(['id', 'status', '__proto__']);
  });

  it.each([
    ['empty', ''],
    ['truncated', '{"object":"whatsapp_business_account","entry":['],
    ['trailing comma', '{"a":1,}'],
    ['single quotes', "{'a':1}"],
    ['trailing garbage', '{"a":1} x'],
    ['leading dot number', '[.5]'],
    ['raw control char', '["a\u0001b"]'],
    ['bad escape', '["\\x41"]'],
    ['NaN', '[NaN]'],
  ])('returns invalid-json for %s input', (_, text) => {
    expect(parseWebhookJson(text)).toMatchObject({ ok: false, reason: 'invalid-json' });
  });

  it('names the position of a syntax error, never the content around it', () => {
    const result = parseWebhookJson('{"text":"my secret phone 4915112345678", oops}');
    expect(result).toEqual({ ok: false, reason: 'invalid-json', detail: 'invalid JSON at position 41' });
  });

  it('does not throw on deep nesting, on either parsing path', () => {
    const deep = `${'['.repeat(200_000)}${']'.repeat(200_000)}`;
    expect(parseWebhookJson(deep).ok).toBe(true);
    // A number that needs its lexeme sends the body to the recursive lossless parser, which runs out of stack.
    const deepWithLargeId = `${'['.repeat(200_000)}12988455123377601234${']'.repeat(200_000)}`;
    expect(parseWebhookJson(deepWithLargeId)).toEqual({
      ok: false,
      reason: 'invalid-json',
      detail: 'JSON nested too deeply to parse',
    });
  });

  it('gives the lossless path a fixed nesting limit, so every caller gets the same verdict', () => {
    const nested = (depth: number, inner: string) => `${'['.repeat(depth)}${inner}${']'.repeat(depth)}`;
    const largeId = '12988455123377601234';
    // Brackets inside strings do not count.
    const atLimit = nested(MAX_LOSSLESS_NESTING - 1, `["${'['.repeat(5000)}", ${largeId}]`);
    const parsed = parseWebhookJson(atLimit);
    expect(parsed.ok).toBe(true);
    const beyond = nested(MAX_LOSSLESS_NESTING, `[${largeId}]`);
    // Far below the depth where the stack runs out, which moves with the JIT's state and the caller's stack.
    expect(parseWebhookJson(beyond)).toEqual({
      ok: false,
      reason: 'invalid-json',
      detail: 'JSON nested too deeply to parse',
    });
    // Native JSON.parse has no such limit: a body whose numbers round-trip is parsed at any depth.
    expect(parseWebhookJson(nested(MAX_LOSSLESS_NESTING + 10, '[1]')).ok).toBe(true);
  });

  it('refuses inputs that are neither text nor bytes without throwing', () => {
    expect(parseWebhookJson(42 as unknown as string)).toMatchObject({ ok: false, reason: 'invalid-json' });
    expect(parseWebhookJson(undefined as unknown as string)).toMatchObject({
      ok: false,
      reason: 'invalid-json',
    });
  });
});

describe('stringifyWebhookJson', () => {
  it('writes lossless numbers back verbatim', () => {
    const text = '{"id":12988455123377601234,"price":89.90,"n":1e3,"t":1751301200,"s":"é\\/"}';
    expect(stringifyWebhookJson(body(text))).toBe(
      '{"id":12988455123377601234,"price":89.90,"n":1e3,"t":1751301200,"s":"é/"}',
    );
  });

  it('round-trips a parsed body to the same value', () => {
    const text = '{"entry":[{"id":"1","time":1781175600,"v":[true,false,null,{"x":-0}]}]}';
    const first = body(text);
    expect(body(stringifyWebhookJson(first))).toEqual(first);
    expect(stringifyWebhookJson(body(stringifyWebhookJson(first)))).toBe(stringifyWebhookJson(first));
  });

  it('serialises a LosslessNumber created by hand', () => {
    expect(stringifyWebhookJson({ id: new LosslessNumber('18446744073709551616') })).toBe(
      '{"id":18446744073709551616}',
    );
  });
});
