/**
 * An HTTP proxy in front of the SQS emulator that makes `SendMessageBatch` fail on demand, at the wire: a
 * client pointed at a proxied queue URL (`proxy.queueUrl(realUrl)`) gets real HTTP 500s, throttling answers,
 * reset connections, or batch answers in which some entries failed, exactly as the SDK would receive them
 * from SQS. Everything else (and every batch while `fault` is `none`) is passed through unchanged, the
 * QueueUrl in the request rewritten to the emulator's.
 *
 * It lets a test break the REAL receiver handler's own SQS client, which it builds from the environment,
 * without patching SDK classes.
 */
import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type SqsBatchFault =
  /** Pass through. */
  | 'none'
  /** HTTP 500 `InternalError` for the whole call. */
  | 'server-error'
  /** HTTP 400 `ThrottlingException` for the whole call. */
  | 'throttled'
  /** The connection is dropped without an answer. */
  | 'connection-reset'
  /**
   * SQS failing midway through a delivery: the first `partialStoreLimit` entries sent since the fault was set
   * are stored, every later one is answered as failed (`InternalError`, not the sender's fault) inside a
   * 200 batch answer.
   */
  | 'partial';

export interface SqsFaultProxy {
  /** The URL a client should use for `realQueueUrl` to go through the proxy. */
  queueUrl(realQueueUrl: string): string;
  /** The fault applied to every `SendMessageBatch` from now on. */
  fault: SqsBatchFault;
  /** How many more calls get `fault`; the proxy passes everything through after that. @default Infinity */
  faultedCallsLeft: number;
  /** Entries `partial` still lets through. @default 2 */
  partialStoreLimit: number;
  /** `SendMessageBatch` calls seen, and how many of them were faulted, and entries stored through the proxy. */
  readonly stats: { batchCalls: number; faultedCalls: number; entriesStored: number; entriesFailed: number };
  stop(): Promise<void>;
}

const JSON_CONTENT_TYPE = 'application/x-amz-json-1.0';

export async function startSqsFaultProxy(): Promise<SqsFaultProxy> {
  let origin = '';
  /** Proxy path → the emulator's queue URL. */
  const realUrlByPath = new Map<string, string>();
  const stats = { batchCalls: 0, faultedCalls: 0, entriesStored: 0, entriesFailed: 0 };
  const proxy: SqsFaultProxy = {
    fault: 'none',
    faultedCallsLeft: Number.POSITIVE_INFINITY,
    partialStoreLimit: 2,
    stats,
    queueUrl: (realQueueUrl) => {
      const path = new URL(realQueueUrl).pathname;
      realUrlByPath.set(path, realQueueUrl);
      return `${origin}${path}`;
    },
    stop: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };

  const server = createServer((req, res) => {
    void handle(req, res).catch((error: unknown) => {
      res.writeHead(502, { 'content-type': 'text/plain' });
      res.end(`sqs fault proxy: ${error instanceof Error ? error.message : String(error)}`);
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const raw = await readBody(req);
    const body = raw.length > 0 ? (JSON.parse(raw.toString('utf8')) as Record<string, unknown>) : {};
    const realUrl =
      typeof body.QueueUrl === 'string' ? realUrlByPath.get(new URL(body.QueueUrl).pathname) : undefined;
    if (realUrl === undefined) throw new Error('request for a queue the proxy does not know');
    body.QueueUrl = realUrl;
    const isBatch = String(req.headers['x-amz-target']).endsWith('.SendMessageBatch');
    const fault = isBatch && proxy.faultedCallsLeft > 0 ? proxy.fault : 'none';
    if (isBatch) stats.batchCalls++;
    if (fault !== 'none') {
      stats.faultedCalls++;
      proxy.faultedCallsLeft--;
    }

    switch (fault) {
      case 'connection-reset':
        req.socket.destroy();
        return;
      case 'server-error':
        return answer(res, 500, { __type: 'com.amazonaws.sqs#InternalError', message: 'Injected fault' });
      case 'throttled':
        return answer(res, 400, {
          __type: 'com.amazonaws.sqs#ThrottlingException',
          message: 'Injected fault',
        });
      case 'partial': {
        const entries = (body.Entries ?? []) as { Id: string }[];
        const kept = entries.slice(0, Math.max(0, proxy.partialStoreLimit));
        const dropped = entries.slice(kept.length);
        proxy.partialStoreLimit -= kept.length;
        const forwarded =
          kept.length === 0 ? undefined : await forward(req, realUrl, { ...body, Entries: kept });
        const output = (forwarded === undefined ? {} : JSON.parse(forwarded.body)) as {
          Successful?: unknown[];
          Failed?: unknown[];
        };
        const failed = dropped.map((entry) => ({
          Id: entry.Id,
          SenderFault: false,
          Code: 'InternalError',
          Message: 'Injected fault',
        }));
        stats.entriesStored += output.Successful?.length ?? 0;
        stats.entriesFailed += failed.length;
        return answer(res, forwarded?.status ?? 200, {
          Successful: output.Successful ?? [],
          Failed: [...(output.Failed ?? []), ...failed],
        });
      }
      case 'none': {
        const forwarded = await forward(req, realUrl, body);
        if (isBatch && forwarded.status === 200) {
          stats.entriesStored +=
            (JSON.parse(forwarded.body) as { Successful?: unknown[] }).Successful?.length ?? 0;
        }
        res.writeHead(forwarded.status, { 'content-type': forwarded.contentType });
        res.end(forwarded.body);
        return;
      }
    }
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return proxy;
}

function answer(res: ServerResponse, status: number, payload: unknown): void {
  const text = JSON.stringify(payload);
  res.writeHead(status, { 'content-type': JSON_CONTENT_TYPE, 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

/** Sends the (rewritten) request to the emulator that owns `realUrl`; the emulator checks no signature. */
function forward(
  req: IncomingMessage,
  realUrl: string,
  body: unknown,
): Promise<{ status: number; contentType: string; body: string }> {
  const target = new URL(realUrl);
  const text = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const outgoing = httpRequest(
      {
        // fauxqs URLs name `sqs.<region>.localhost`: connect to loopback, keep the Host it expects.
        host: '127.0.0.1',
        port: target.port,
        method: req.method,
        path: req.url,
        headers: {
          ...req.headers,
          host: target.host,
          'content-length': Buffer.byteLength(text),
        },
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () =>
          resolve({
            status: response.statusCode ?? 502,
            contentType: String(response.headers['content-type'] ?? JSON_CONTENT_TYPE),
            body: Buffer.concat(chunks).toString('utf8'),
          }),
        );
        response.on('error', reject);
      },
    );
    outgoing.on('error', reject);
    outgoing.end(text);
  });
}
