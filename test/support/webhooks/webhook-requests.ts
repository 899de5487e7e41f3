/** API Gateway HTTP API (payload 2.0) events as the receiver gets them: any request, or a signed webhook POST. */
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
    body: options.body,
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
