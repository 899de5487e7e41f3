import { describe, expect, it } from 'vitest';
import { fromApiGatewayV2Result, toApiGatewayV2Event } from '../../../local/http/api-gateway-v2.ts';

describe('toApiGatewayV2Event (payload format 2.0)', () => {
  it('lowercases header names, joins repeats with commas, and moves cookies out', () => {
    const event = toApiGatewayV2Event({
      method: 'post',
      url: '/webhook',
      rawHeaders: [
        'X-Hub-Signature-256',
        'sha256=ab',
        'X-Forwarded-For',
        '1.1.1.1',
        'x-forwarded-for',
        '2.2.2.2',
        'Cookie',
        'a=1; b=2',
      ],
      body: Buffer.from('{}'),
    });
    expect(event.headers).toEqual({
      'x-hub-signature-256': 'sha256=ab',
      'x-forwarded-for': '1.1.1.1,2.2.2.2',
    });
    expect(event.cookies).toEqual(['a=1', 'b=2']);
    expect(event.requestContext.http.method).toBe('POST');
    expect(event.version).toBe('2.0');
  });

  it('keeps the raw query string and decodes the parameters', () => {
    const event = toApiGatewayV2Event({
      method: 'GET',
      url: '/webhook?hub.mode=subscribe&hub.challenge=a%20b&hub.verify_token=t&x=1&x=2',
      rawHeaders: [],
      body: Buffer.alloc(0),
    });
    expect(event.rawPath).toBe('/webhook');
    expect(event.requestContext.http.path).toBe('/webhook');
    expect(event.rawQueryString).toBe('hub.mode=subscribe&hub.challenge=a%20b&hub.verify_token=t&x=1&x=2');
    expect(event.queryStringParameters).toEqual({
      'hub.mode': 'subscribe',
      'hub.challenge': 'a b',
      'hub.verify_token': 't',
      x: '1,2',
    });
    expect(event.body).toBeUndefined();
    expect(event.isBase64Encoded).toBe(false);
  });

  it('passes UTF-8 bodies verbatim, escapes included', () => {
    const raw = '{"text":"caf\\u00e9 é"}';
    const event = toApiGatewayV2Event({
      method: 'POST',
      url: '/webhook',
      rawHeaders: [],
      body: Buffer.from(raw),
    });
    expect(event.body).toBe(raw);
    expect(event.isBase64Encoded).toBe(false);
  });

  it('base64-encodes bodies that are not valid UTF-8, byte for byte', () => {
    const bytes = Buffer.from([0x7b, 0xff, 0xfe, 0x7d]);
    const event = toApiGatewayV2Event({ method: 'POST', url: '/webhook', rawHeaders: [], body: bytes });
    expect(event.isBase64Encoded).toBe(true);
    expect(Buffer.from(event.body ?? '', 'base64').equals(bytes)).toBe(true);
  });
});

describe('fromApiGatewayV2Result', () => {
  it('takes a structured result as is', () => {
    const answer = fromApiGatewayV2Result({
      statusCode: 401,
      headers: { 'Content-Type': 'text/plain' },
      body: 'no',
    });
    expect(answer.statusCode).toBe(401);
    expect(answer.headers).toEqual({ 'content-type': 'text/plain' });
    expect(answer.body.toString()).toBe('no');
  });

  it('decodes a base64 body', () => {
    const answer = fromApiGatewayV2Result({
      statusCode: 200,
      body: Buffer.from([1, 2, 3]).toString('base64'),
      isBase64Encoded: true,
    });
    expect([...answer.body]).toEqual([1, 2, 3]);
  });

  it('reads a bare string or object as a 200 JSON answer, as API Gateway does', () => {
    expect(fromApiGatewayV2Result('hello')).toMatchObject({
      statusCode: 200,
      headers: { 'content-type': 'application/json' },
    });
    expect(fromApiGatewayV2Result({ ok: true } as never).body.toString()).toBe('{"ok":true}');
  });
});
