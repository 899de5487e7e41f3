/**
 * The local server answers only this machine's clients (docs/local.md, Endpoints): it listens on 127.0.0.1
 * unless opened, every route but `/webhook` wants a `Host` naming the loopback (or the opened host) with its
 * port, and every change under `/local/` wants `content-type: application/json`, which no other web page can
 * send here without a CORS preflight. Requests go out through node:http, which sends the `Host` it is given.
 */
import { request as httpRequest } from 'node:http';
import { type AddressInfo, connect } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { LaneName } from '../../../../contract/lanes.ts';
import { FaultSwitch } from '../../../local/stack/fault-switch.ts';
import { DEFAULT_LOCAL_HOST, readLocalConfig } from '../../../local/stack/local-config.ts';
import {
  createLocalServer,
  exposureWarning,
  type LocalPipeline,
  type LocalServer,
  listenLocalServer,
} from '../../../local/stack/local-server.ts';

const ARCHIVE = [{ key: 'deliveries/2026/12/01/a.jsonl.gz', size: 120, deliveries: 1 }];

interface Running {
  readonly local: LocalServer;
  readonly port: number;
  readonly faults: FaultSwitch;
  readonly paused: LaneName[];
  readonly webhookCalls: number[];
}

const running: Running[] = [];

afterEach(async () => {
  for (const { local } of running.splice(0)) await local.close();
});

async function start(host?: string): Promise<Running> {
  const faults = new FaultSwitch();
  const paused: LaneName[] = [];
  const webhookCalls: number[] = [];
  const pipeline = {
    info: { subscribers: [{ name: 'default' }] },
    receiverTimeoutSeconds: 5,
    region: 'us-east-1',
    receiver: async () => {
      webhookCalls.push(Date.now());
      return { statusCode: 200, headers: { 'content-type': 'text/plain' }, body: 'ok' };
    },
    archive: async () => ARCHIVE,
    effects: () => ({ total: 0, effects: [], subscribers: {} }),
    consumer: (name: string) =>
      name === 'default'
        ? {
            has: () => true,
            pause: (lane: LaneName) => paused.push(lane),
            resume: () => undefined,
            state: () => 'Enabled',
          }
        : undefined,
  } as unknown as LocalPipeline;
  const local = createLocalServer({
    pipeline: () => pipeline,
    faults,
    chartJsPath: '/dev/null',
    log: () => undefined,
    host,
  });
  await listenLocalServer(local.server, 0, host ?? DEFAULT_LOCAL_HOST);
  const server = { local, port: (local.server.address() as AddressInfo).port, faults, paused, webhookCalls };
  running.push(server);
  return server;
}

interface Sent {
  readonly method?: string;
  readonly path: string;
  /** Where the connection goes. @default '127.0.0.1' */
  readonly connectTo?: string;
  readonly headers?: Readonly<Record<string, string>>;
  readonly body?: string;
}

function send(port: number, sent: Sent): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(
      {
        host: sent.connectTo ?? '127.0.0.1',
        port,
        method: sent.method ?? 'GET',
        path: sent.path,
        headers: { host: `localhost:${port}`, ...sent.headers },
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () =>
          resolve({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString() }),
        );
      },
    );
    request.on('error', reject);
    request.end(sent.body);
  });
}

const message = (text: string) => (JSON.parse(text) as { message: string }).message;

describe('where the local stack listens', () => {
  it('is 127.0.0.1 unless LOCAL_HOST (or --host) opens it', async () => {
    expect(readLocalConfig({}).host).toBe('127.0.0.1');
    expect(readLocalConfig({ LOCAL_HOST: '0.0.0.0' }).host).toBe('0.0.0.0');
    expect(readLocalConfig({ LOCAL_HOST: '[::]' }).host).toBe('::');
    expect(() => readLocalConfig({ LOCAL_HOST: 'a host' })).toThrow(/^LOCAL_HOST must be an address/);

    const { local } = await start();
    expect((local.server.address() as AddressInfo).address).toBe('127.0.0.1');
  });

  it('warns in one line when opened beyond the loopback, and only then', () => {
    expect(exposureWarning('127.0.0.1', 3000)).toBeUndefined();
    expect(exposureWarning('127.0.0.2', 3000)).toBeUndefined();
    expect(exposureWarning('::1', 3000)).toBeUndefined();
    expect(exposureWarning('localhost', 3000)).toBeUndefined();
    for (const host of ['0.0.0.0', '::', '192.168.1.5']) {
      const warning = exposureWarning(host, 3000) ?? '';
      expect(warning).toMatch(/^WARNING: the local stack listens on \S+:3000, not on 127\.0\.0\.1 alone/);
      expect(warning).toContain('/local/archive');
      expect(warning).not.toContain('\n');
    }
  });
});

describe('Host: only this machine, on the stack port', () => {
  it.each(['localhost', '127.0.0.1', '[::1]'])('answers /local/archive as %s:<port>', async (name) => {
    const { port } = await start();
    const answer = await send(port, { path: '/local/archive', headers: { host: `${name}:${port}` } });
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.text)).toEqual(ARCHIVE);
  });

  it.each([
    ['another name (DNS rebinding)', (port: number) => `attacker.example:${port}`],
    ['a name ending in localhost', (port: number) => `localhost.attacker.example:${port}`],
    ['another port', (port: number) => `localhost:${port + 1}`],
    ['no port', () => 'localhost'],
    ['userinfo', (port: number) => `localhost:${port}@attacker.example`],
  ])('refuses %s with 403 and one line, reading nothing', async (_, host) => {
    const { port } = await start();
    for (const path of ['/local/archive', '/local/info', '/local/faults', '/']) {
      const answer = await send(port, { path, headers: { host: host(port) } });
      expect(answer.status, path).toBe(403);
      expect(message(answer.text)).toMatch(
        /^Host ".+" refused: the local stack answers \/\S* as localhost:\d+/,
      );
      expect(message(answer.text)).not.toContain('\n');
      expect(answer.text).not.toContain('deliveries/');
    }
  });

  it('refuses a request without Host (HTTP/1.0)', async () => {
    const { port } = await start();
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    await new Promise((resolve) => socket.on('connect', resolve));
    socket.end('GET /local/archive HTTP/1.0\r\n\r\n');
    await new Promise((resolve) => socket.on('close', resolve));
    const answer = Buffer.concat(chunks).toString();
    expect(answer).toMatch(/^HTTP\/1\.1 403 /);
    expect(answer).toContain('A request without Host refused');
    expect(answer).not.toContain('deliveries/');
  });

  it('refuses a change from another Host too: the pause never happens', async () => {
    const { port, paused } = await start();
    const answer = await send(port, {
      method: 'POST',
      path: '/local/subscribers/default/lanes/message/pause',
      headers: { host: `attacker.example:${port}`, 'content-type': 'application/json' },
    });
    expect(answer.status).toBe(403);
    expect(paused).toEqual([]);
  });

  it('leaves /webhook to any Host, as a tunnel forwards it', async () => {
    const { port, webhookCalls } = await start();
    const answer = await send(port, {
      path: '/webhook?hub.mode=subscribe',
      headers: { host: 'abc123.ngrok-free.app' },
    });
    expect(answer.status).toBe(200);
    expect(webhookCalls).toHaveLength(1);
  });

  it('opened on a host, answers that name too', async () => {
    const { port } = await start('127.0.0.2');
    const own = await send(port, {
      connectTo: '127.0.0.2',
      path: '/local/archive',
      headers: { host: `127.0.0.2:${port}` },
    });
    expect(own.status).toBe(200);
    const other = await send(port, {
      connectTo: '127.0.0.2',
      path: '/local/archive',
      headers: { host: `127.0.0.3:${port}` },
    });
    expect(other.status).toBe(403);
    expect(message(other.text)).toContain(`127.0.0.2:${port}`);
  });

  it('opened on every interface, answers the address a request arrived at, never a name', async () => {
    const { port } = await start('0.0.0.0');
    const arrivedAt = (host: string) =>
      send(port, { connectTo: '127.0.0.2', path: '/local/archive', headers: { host } });
    expect((await arrivedAt(`127.0.0.2:${port}`)).status).toBe(200);
    expect((await arrivedAt(`127.0.0.3:${port}`)).status).toBe(403);
    expect((await arrivedAt(`rebound.attacker.example:${port}`)).status).toBe(403);
  });
});

describe('changes under /local/ want content-type: application/json', () => {
  it.each([
    ['none', undefined],
    ['text/plain (a simple cross-origin POST)', 'text/plain'],
    ['a form', 'application/x-www-form-urlencoded'],
    ['multipart', 'multipart/form-data; boundary=x'],
  ])('POST /local/faults with %s: 415, the faults unchanged', async (_, contentType) => {
    const { port, faults } = await start();
    const answer = await send(port, {
      method: 'POST',
      path: '/local/faults',
      headers: contentType === undefined ? {} : { 'content-type': contentType },
      body: '{"webhook":{"mode":"error"}}',
    });
    expect(answer.status).toBe(415);
    expect(message(answer.text)).toBe(
      'POST /local/faults needs content-type: application/json, which no other web page can send here (a form or a simple cross-origin request cannot)',
    );
    expect(faults.current.webhook.mode).toBe('up');
  });

  it('POST /local/faults as JSON switches the faults', async () => {
    const { port, faults } = await start();
    const answer = await send(port, {
      method: 'POST',
      path: '/local/faults',
      headers: { 'content-type': 'application/json; charset=utf-8' },
      body: '{"webhook":{"mode":"error"}}',
    });
    expect(answer.status).toBe(200);
    expect(faults.current.webhook.mode).toBe('error');
  });

  it.each(['pause', 'resume'])(
    'POST …/lanes/message/%s without JSON: 415, nothing switched',
    async (action) => {
      const { port, paused } = await start();
      const path = `/local/subscribers/default/lanes/message/${action}`;
      expect((await send(port, { method: 'POST', path })).status).toBe(415);
      expect(paused).toEqual([]);
      const json = await send(port, {
        method: 'POST',
        path,
        headers: { 'content-type': 'application/json' },
      });
      expect(json.status).toBe(200);
    },
  );

  it.each(['PUT', 'DELETE', 'PATCH'])('%s under /local/ without JSON: 415', async (method) => {
    const { port } = await start();
    expect((await send(port, { method, path: '/local/faults' })).status).toBe(415);
    expect((await send(port, { method, path: '/local/anything' })).status).toBe(415);
  });

  it('reads need no content type', async () => {
    const { port } = await start();
    expect((await send(port, { path: '/local/faults' })).status).toBe(200);
    expect((await send(port, { path: '/local/effects' })).status).toBe(200);
  });
});
