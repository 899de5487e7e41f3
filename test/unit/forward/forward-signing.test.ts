/**
 * Forwarded bodies' headers (functions/forward/forward-signing.ts) checked by the verifiers destinations use:
 * Meta's signature recomputed as Meta's own consumers do, Standard Webhooks' by its reference library; and
 * what each answer means (functions/forward/forward-answer.ts).
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import {
  outcomeOfAnswer,
  outcomeOfFailure,
  retryAfterSeconds,
} from '../../../functions/forward/forward-answer.ts';
import { eventShapeHeaders, metaShapeHeaders } from '../../../functions/forward/forward-signing.ts';

const body = '{"object":"whatsapp_business_account","entry":[]}';

describe('the meta shape headers', () => {
  it('sign the exact bytes as Meta does and give an idempotency key that depends on the events only', () => {
    const headers = metaShapeHeaders(body, ['msg:wamid.A'], 'app-secret');
    const expected = `sha256=${createHmac('sha256', 'app-secret').update(body).digest('hex')}`;
    expect(timingSafeEqual(Buffer.from(headers['x-hub-signature-256'] ?? ''), Buffer.from(expected))).toBe(
      true,
    );
    expect(headers['idempotency-key']).toMatch(/^[0-9a-f]{64}$/);
    expect(metaShapeHeaders(`${body} `, ['msg:wamid.A'], 'other')['idempotency-key']).toBe(
      headers['idempotency-key'],
    );
    expect(metaShapeHeaders(body, ['msg:wamid.B'], 'app-secret')['idempotency-key']).not.toBe(
      headers['idempotency-key'],
    );
    expect(JSON.stringify(headers)).not.toContain('wamid');
  });
});

describe('the event shape headers', () => {
  const secret = `whsec_${Buffer.from('a Standard Webhooks secret of 32 bytes').toString('base64')}`;

  it("pass Standard Webhooks' reference verifier, and fail it for other bytes or another secret", () => {
    const sentAt = new Date();
    const headers = eventShapeHeaders(body, 'st:wamid.A:read', secret, sentAt);
    expect(headers['webhook-id']).toBe('st:wamid.A:read');
    expect(headers['webhook-timestamp']).toBe(String(Math.floor(sentAt.getTime() / 1000)));
    expect(new Webhook(secret).verify(body, headers)).toEqual(JSON.parse(body));
    expect(() => new Webhook(secret).verify(`${body} `, headers)).toThrow();
    const other = `whsec_${Buffer.from('another secret, also 32 bytes!!!').toString('base64')}`;
    expect(() => new Webhook(other).verify(body, headers)).toThrow();
  });
});

describe('what an answer means', () => {
  const now = new Date('2026-12-03T10:00:00Z');

  it.each([
    [200, 'delivered'],
    [204, 'delivered'],
    [408, 'retry'],
    [429, 'retry'],
    [500, 'retry'],
    [503, 'retry'],
    [301, 'refused'],
    [400, 'refused'],
    [401, 'refused'],
    [404, 'refused'],
    [410, 'refused'],
  ])('%i is %s', (status, kind) => {
    expect(outcomeOfAnswer(status, null, now).kind).toBe(kind);
  });

  it('honours Retry-After in seconds or as a date, and ignores one it cannot read', () => {
    expect(outcomeOfAnswer(503, '120', now)).toEqual({
      kind: 'retry',
      status: 503,
      reason: 'http-503',
      afterSeconds: 120,
    });
    expect(retryAfterSeconds('Thu, 03 Dec 2026 10:01:30 GMT', now)).toBe(90);
    expect(retryAfterSeconds('Thu, 03 Dec 2026 09:00:00 GMT', now)).toBe(0);
    expect(retryAfterSeconds('soon', now)).toBeUndefined();
    expect(retryAfterSeconds(null, now)).toBeUndefined();
  });

  it('retries a timeout and a connection failure', () => {
    expect(outcomeOfFailure(new DOMException('timed out', 'TimeoutError'))).toEqual({
      kind: 'retry',
      reason: 'timeout',
    });
    expect(outcomeOfFailure(new TypeError('fetch failed'))).toEqual({ kind: 'retry', reason: 'connection' });
  });
});
