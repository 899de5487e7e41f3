/**
 * Answers the receiver's SQS requests in memory at the SDK's HTTP request handler, the last step before the
 * socket: everything the receiver pays in Lambda up to the network (building the SendMessageBatch command,
 * serialising up to 1 MiB of entries to JSON, SigV4 signing with the body's SHA-256, then parsing the answer
 * and checking each entry's MD5, as @aws-sdk/middleware-sdk-sqs does) runs and is timed.
 *
 * The receiver builds its own SQSClient, so the stub replaces `handle` on the prototype of the SDK's Node HTTP
 * handler, for every client in this process. The answer must carry each body's MD5, which SQS computes on its
 * side: the stub computes it once per distinct request size and reuses it (the bench sends the same bodies
 * again and again), so that its own hashing stays out of the measured time after the warm-up.
 *
 * Two modes for the archive bench's acknowledgement latency: a fixed modelled round trip (the answer comes that
 * many milliseconds after the request, on a timer: the wait overlaps whatever else the handler does, as a
 * network round trip does), and pass-through (every request goes to the SDK's own handler: a real connection).
 */
import { createHash, randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { SQSClient } from '@aws-sdk/client-sqs';

interface HttpRequestLike {
  readonly headers: Record<string, string>;
  readonly body?: unknown;
}
type Handle = (request: HttpRequestLike, options?: unknown) => Promise<{ response: unknown }>;

export interface SqsInMemory {
  /** SendMessageBatch entries answered so far. */
  entries(): number;
  /** Answer each request this many milliseconds after it was sent (0: at once). */
  setRoundTripMs(ms: number): void;
  /** Hand every request to the SDK's own HTTP handler (a real connection) instead of answering it. */
  setPassThrough(on: boolean): void;
  restore(): void;
}

/**
 * `cache: false` answers every request anew: the cache, keyed by the request's size, is for a benchmark that
 * sends the same body again and again; bodies of one size but other bytes would get another body's MD5.
 */
export function answerSqsInMemory(options: { readonly cache?: boolean } = {}): SqsInMemory {
  const cache = options.cache ?? true;
  const probe = new SQSClient({ region: 'us-east-1' });
  const prototype = Object.getPrototypeOf(probe.config.requestHandler) as { handle: Handle };
  probe.destroy();
  const original = prototype.handle;
  const answers = new Map<number, { body: string; entries: number }>();
  let entries = 0;
  let roundTripMs = 0;
  let passThrough = false;
  prototype.handle = async function (this: unknown, request, options) {
    if (passThrough) return original.call(this, request, options);
    const target = request.headers['x-amz-target'];
    if (target !== 'AmazonSQS.SendMessageBatch') {
      throw new Error(`The receiver benchmark answers SendMessageBatch only, not ${target}.`);
    }
    // The SDK's JSON codec hands over the serialised body as UTF-8 bytes.
    const body = request.body as Uint8Array | string;
    const bytes = body instanceof Uint8Array ? body.byteLength : Buffer.byteLength(body);
    let answer = cache ? answers.get(bytes) : undefined;
    if (answer === undefined) {
      answer = answerTo(
        body instanceof Uint8Array
          ? Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8')
          : body,
      );
      answers.set(bytes, answer);
    }
    entries += answer.entries;
    if (roundTripMs > 0) await sleep(roundTripMs);
    return {
      response: {
        statusCode: 200,
        headers: { 'content-type': 'application/x-amz-json-1.0', 'x-amzn-requestid': randomUUID() },
        body: Readable.from([Buffer.from(answer.body)]),
      },
    };
  };
  return {
    entries: () => entries,
    setRoundTripMs: (ms) => {
      roundTripMs = ms;
    },
    setPassThrough: (on) => {
      passThrough = on;
    },
    restore: () => {
      prototype.handle = original;
    },
  };
}

function answerTo(requestBody: string): { body: string; entries: number } {
  const { Entries } = JSON.parse(requestBody) as { Entries: { Id: string; MessageBody: string }[] };
  const successful = Entries.map((entry) => ({
    Id: entry.Id,
    MessageId: randomUUID(),
    MD5OfMessageBody: createHash('md5').update(entry.MessageBody).digest('hex'),
  }));
  return { body: JSON.stringify({ Successful: successful, Failed: [] }), entries: Entries.length };
}
