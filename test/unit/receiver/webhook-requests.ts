/** Builders shared by the receiver's unit tests: API Gateway HTTP API (payload 2.0) events and webhook bodies. */
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { signBody } from '../../../functions/receiver/signature.ts';

export function httpApiEvent(options: {
  method: 'GET' | 'POST' | 'PUT';
  query?: Record<string, string>;
  headers?: Record<string, string>;
  body?: string;
  isBase64Encoded?: boolean;
  requestId?: string;
}): APIGatewayProxyEventV2 {
  const query = options.query ?? {};
  return {
    version: '2.0',
    routeKey: `${options.method} /webhook`,
    rawPath: '/webhook',
    rawQueryString: new URLSearchParams(query).toString(),
    headers: { 'content-type': 'application/json', ...options.headers },
    ...(Object.keys(query).length > 0 && { queryStringParameters: query }),
    requestContext: {
      accountId: '123456789012',
      apiId: 'api',
      domainName: 'api.example.com',
      domainPrefix: 'api',
      http: {
        method: options.method,
        path: '/webhook',
        protocol: 'HTTP/1.1',
        sourceIp: '127.0.0.1',
        userAgent: 'test',
      },
      requestId: options.requestId ?? 'req-1',
      routeKey: `${options.method} /webhook`,
      stage: '$default',
      time: '01/Jan/2026:00:00:00 +0000',
      timeEpoch: 1767225600000,
    },
    ...(options.body !== undefined && { body: options.body }),
    isBase64Encoded: options.isBase64Encoded ?? false,
  };
}

/** A POST event whose body is `raw` (sent as text, or base64 when asked) signed with `secret`. */
export function signedPost(
  raw: Buffer | string,
  secret: string | undefined,
  options: { base64?: boolean } = {},
) {
  const bytes = typeof raw === 'string' ? Buffer.from(raw, 'utf8') : raw;
  return httpApiEvent({
    method: 'POST',
    headers: secret === undefined ? {} : { 'x-hub-signature-256': signBody(bytes, secret) },
    body: options.base64 ? bytes.toString('base64') : bytes.toString('utf8'),
    isBase64Encoded: options.base64 ?? false,
  });
}

export const PRIVATE_TEXT = 'my private diagnosis is confidential';
export const PHONE = '447700900123';
export const DISPLAY_PHONE = '15550783881';
export const PROFILE_NAME = 'Sheena Nelson';

/** A `messages` body with `count` text messages (each with private text and phone numbers) in one change. */
export function messagesBody(
  count: number,
  options: { textRepeat?: number; idPrefix?: string } = {},
): string {
  const messages = Array.from({ length: count }, (_, i) => ({
    from: PHONE,
    id: `wamid.${options.idPrefix ?? 'HBgLNDQ3NzAwOTAwMTIzFQIAEhgUM0E'}${String(i).padStart(5, '0')}`,
    timestamp: '1749416383',
    type: 'text',
    text: { body: `${PRIVATE_TEXT} #${i} ${'é'.repeat(options.textRepeat ?? 0)}` },
  }));
  return JSON.stringify({
    object: 'whatsapp_business_account',
    entry: [
      {
        id: '102290129340398',
        time: 1749416383,
        changes: [
          {
            field: 'messages',
            value: {
              messaging_product: 'whatsapp',
              metadata: { display_phone_number: DISPLAY_PHONE, phone_number_id: '106540352242922' },
              contacts: [{ profile: { name: PROFILE_NAME }, wa_id: PHONE }],
              messages,
            },
          },
        ],
      },
    ],
  });
}
