/**
 * The smoke test's POST against either front door: a 200 is timed, a 429 (the HTTP API's route throttle, or a
 * function URL's reserved concurrency full) is named as the throttle, not as a refused signature or a failure.
 */
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OpsError } from '../../../ops/errors.ts';
import { postSignedBody } from '../../../ops/smoke/post-webhook.ts';

let server: Server;
let base: string;
const paths: string[] = [];

beforeAll(async () => {
  server = createServer((request, response) => {
    paths.push(request.url ?? '');
    request.resume();
    request.on('end', () => response.writeHead(request.url === '/throttled/webhook' ? 429 : 200).end());
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.close();
  await once(server, 'close');
});

describe('postSignedBody', () => {
  it('posts to the URL as the stack outputs it, path included', async () => {
    const ack = await postSignedBody(`${base}/webhook`, '{}', 'secret');
    expect(ack.status).toBe(200);
    expect(paths.at(-1)).toBe('/webhook');
  });

  it('names a 429 as the front door’s throttle', async () => {
    const posting = postSignedBody(`${base}/throttled/webhook`, '{}', 'secret');
    await expect(posting).rejects.toThrow(OpsError);
    await expect(postSignedBody(`${base}/throttled/webhook`, '{}', 'secret')).rejects.toThrow(
      /answered 429: its throttle is full .*reserved concurrency/,
    );
  });
});
