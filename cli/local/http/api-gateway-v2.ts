/**
 * What API Gateway HTTP APIs do between the client and a Lambda integration (payload format 2.0), so the
 * local stack can run the real receiver handler: the request becomes an `APIGatewayProxyEventV2`, the
 * handler's result becomes the HTTP answer.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { APIGatewayProxyEventV2, APIGatewayProxyResultV2 } from 'aws-lambda';

export interface RequestFacts {
  readonly method: string;
  /** Path and query as sent, e.g. `/webhook?hub.mode=subscribe`. */
  readonly url: string;
  /** `IncomingMessage.rawHeaders`: names as sent, repeated names kept. */
  readonly rawHeaders: readonly string[];
  readonly body: Buffer;
  readonly sourceIp?: string;
  readonly receivedAt?: number;
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

export function toApiGatewayV2Event(request: RequestFacts): APIGatewayProxyEventV2 {
  const receivedAt = request.receivedAt ?? Date.now();
  const queryStart = request.url.indexOf('?');
  const rawPath = queryStart === -1 ? request.url : request.url.slice(0, queryStart);
  const rawQueryString = queryStart === -1 ? '' : request.url.slice(queryStart + 1);

  // Header names arrive lowercase; repeated headers are joined with commas; cookies move to `cookies`.
  const headers: Record<string, string> = {};
  const cookies: string[] = [];
  for (let i = 0; i + 1 < request.rawHeaders.length; i += 2) {
    const name = (request.rawHeaders[i] ?? '').toLowerCase();
    const value = request.rawHeaders[i + 1] ?? '';
    if (name === 'cookie') {
      cookies.push(
        ...value
          .split(';')
          .map((c) => c.trim())
          .filter(Boolean),
      );
      continue;
    }
    headers[name] = headers[name] === undefined ? value : `${headers[name]},${value}`;
  }

  const query: Record<string, string> = {};
  for (const [name, value] of new URLSearchParams(rawQueryString)) {
    query[name] = query[name] === undefined ? value : `${query[name]},${value}`;
  }

  const method = request.method.toUpperCase();
  const event: APIGatewayProxyEventV2 = {
    version: '2.0',
    routeKey: '$default',
    rawPath,
    rawQueryString,
    headers,
    requestContext: {
      accountId: '000000000000',
      apiId: 'local',
      domainName: headers.host ?? 'localhost',
      domainPrefix: (headers.host ?? 'localhost').split('.')[0] ?? 'localhost',
      http: {
        method,
        path: rawPath,
        protocol: 'HTTP/1.1',
        sourceIp: request.sourceIp ?? '127.0.0.1',
        userAgent: headers['user-agent'] ?? '',
      },
      requestId: randomUUID(),
      routeKey: '$default',
      stage: '$default',
      time: formatRequestTime(new Date(receivedAt)),
      timeEpoch: receivedAt,
    },
    isBase64Encoded: false,
  };
  if (cookies.length > 0) event.cookies = cookies;
  if (Object.keys(query).length > 0) event.queryStringParameters = query;
  if (request.body.length > 0) {
    // Bytes that are not valid UTF-8 cannot travel in a JSON string: API Gateway sends them base64-encoded.
    if (isValidUtf8(request.body)) {
      event.body = request.body.toString('utf8');
    } else {
      event.body = request.body.toString('base64');
      event.isBase64Encoded = true;
    }
  }
  return event;
}

export interface HttpAnswer {
  readonly statusCode: number;
  readonly headers: Record<string, string | string[]>;
  readonly body: Buffer;
}

/**
 * API Gateway's reading of a payload 2.0 result: a structured result with `statusCode` is taken as is; any
 * other value (a string, an object without `statusCode`) means 200 with that value as a JSON body.
 */
export function fromApiGatewayV2Result(result: APIGatewayProxyResultV2<unknown>): HttpAnswer {
  const structured =
    typeof result === 'object' && result !== null && 'statusCode' in result
      ? (result as Exclude<APIGatewayProxyResultV2, string>)
      : undefined;
  if (structured === undefined) {
    const body = typeof result === 'string' ? result : JSON.stringify(result ?? null);
    return { statusCode: 200, headers: { 'content-type': 'application/json' }, body: Buffer.from(body) };
  }
  const headers: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(structured.headers ?? {}))
    headers[name.toLowerCase()] = String(value);
  if (structured.cookies && structured.cookies.length > 0) headers['set-cookie'] = structured.cookies;
  const text = structured.body ?? '';
  return {
    statusCode: structured.statusCode ?? 200,
    headers,
    body: structured.isBase64Encoded ? Buffer.from(text, 'base64') : Buffer.from(text, 'utf8'),
  };
}

export function writeAnswer(response: ServerResponse, answer: HttpAnswer): void {
  response.writeHead(answer.statusCode, { ...answer.headers, 'content-length': answer.body.length });
  response.end(answer.body);
}

/** Reads the whole request body, refusing more than `limitBytes` (API Gateway's payload limit is 10 MB). */
export function readBody(request: IncomingMessage, limitBytes: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limitBytes) {
        reject(new PayloadTooLargeError(limitBytes));
        request.resume();
        return;
      }
      chunks.push(chunk);
    });
    request.on('end', () => resolve(Buffer.concat(chunks)));
    request.on('error', reject);
  });
}

export class PayloadTooLargeError extends Error {
  constructor(limitBytes: number) {
    super(`Request body larger than ${limitBytes} bytes.`);
    this.name = 'PayloadTooLargeError';
  }
}

function isValidUtf8(bytes: Buffer): boolean {
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    return true;
  } catch {
    return false;
  }
}

function formatRequestTime(date: Date): string {
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${pad(date.getUTCDate())}/${MONTHS[date.getUTCMonth()]}/${date.getUTCFullYear()}:${pad(date.getUTCHours())}:${pad(date.getUTCMinutes())}:${pad(date.getUTCSeconds())} +0000`;
}
