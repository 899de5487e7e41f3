/**
 * The local stack's HTTP front: `/webhook` through the real receiver handler (as API Gateway would call it),
 * the `/local/*` inspection endpoints of docs/design.md §6, the fault switch, and the dashboard.
 *
 * Everything but `/webhook` answers this machine's own clients only (docs/local.md, Endpoints): a `Host`
 * naming the loopback (or the host the stack was opened on) with the stack's port, else 403, so that a web
 * page the developer visits cannot read `/local/archive` through DNS rebinding; and a request that changes
 * something under `/local/` must say `content-type: application/json`, else 415, which a page cannot send to
 * another origin without a CORS preflight that this server never grants.
 */
import { createReadStream } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { isIP } from 'node:net';
import type { APIGatewayProxyEventV2, APIGatewayProxyResultV2, Context } from 'aws-lambda';
import { isLaneName } from 'whatsapp-webhook-dedup/contract/lanes';
import type { StatusLedgerView } from 'whatsapp-webhook-dedup/functions/ledger/status-ledger';
import { UsageError } from '../../ops/errors.ts';
import { CHART_JS_ROUTE, dashboardHtml } from '../dashboard/dashboard-page.ts';
import {
  fromApiGatewayV2Result,
  PayloadTooLargeError,
  readBody,
  toApiGatewayV2Event,
  writeAnswer,
} from '../http/api-gateway-v2.ts';
import { createLambdaContext } from '../lambda-context.ts';
import type { LocalInfo } from '../local-stack-api.ts';
import type { LocalStatsSnapshot } from '../observe/subscriber-stats.ts';
import type { ConsumerPoller } from './consumer-poller.ts';
import type { EffectEntry, EffectsView } from './effects-journal.ts';
import { type FaultSwitch, InvalidFaultsError } from './fault-switch.ts';
import type { ArchiveObjectListing } from './local-archive.ts';
import type { OperatorViews } from './operator-views.ts';

/**
 * `GET /local/ledger/<wamid>` without `?participant=`: the message's own entry (a one-to-one send, or the
 * statuses of a group send that name no participant, such as its `sent`) and, for a group send, `participants`:
 * each participant's entry (docs/design.md §3), in participant order. A group send whose statuses all name a
 * participant has no entry of its own: then only `wamid` and `participants`.
 */
export type LocalLedgerView =
  | StatusLedgerView
  | (StatusLedgerView & { readonly participants: readonly StatusLedgerView[] })
  | { readonly wamid: string; readonly participants: readonly StatusLedgerView[] };

/** One subscriber's effects, and the duplicates its consumer skipped and its message lane's queue absorbed. */
export interface SubscriberEffectsView extends EffectsView {
  /** Repeats a claim caught: the handler was not called. */
  readonly duplicatesSkipped: number;
  /** Repeats the message lane's FIFO queue absorbed within 5 minutes, before any claim saw them. */
  readonly duplicatesAbsorbedByQueue: number;
}

/** A key's effects over every subscriber: `count` in all, `bySubscriber` each one's (one each is no double effect). */
export interface SummedEffectEntry extends EffectEntry {
  readonly bySubscriber: Readonly<Record<string, number>>;
}

/**
 * `/local/effects`: `total` and `effects` summed over every subscriber (a key two subscribers effected counts
 * 2, with 1 for each in `bySubscriber`); `subscribers` holds each one's.
 */
export interface LocalEffectsView {
  readonly total: number;
  readonly effects: readonly SummedEffectEntry[];
  readonly subscribers: Readonly<Record<string, SubscriberEffectsView>>;
}

export type ReceiverHandler = (
  event: APIGatewayProxyEventV2,
  context: Context,
) => Promise<APIGatewayProxyResultV2<unknown>>;

export interface LocalServerDependencies {
  /** Undefined until the emulators and handlers are up: requests get 503 meanwhile. */
  readonly pipeline: () => LocalPipeline | undefined;
  readonly faults: FaultSwitch;
  readonly chartJsPath: string;
  readonly log: (line: string) => void;
  /**
   * The address the server listens on, whose name `Host` may give beside the loopback's. A wildcard
   * (`0.0.0.0`, `::`) admits the address each request arrived at. @default '127.0.0.1'
   */
  readonly host?: string;
}

export interface LocalPipeline {
  readonly receiver: ReceiverHandler;
  readonly receiverTimeoutSeconds: number;
  readonly region: string;
  /** `/local/info`, with the effective settings and faults alongside the docs/design.md §6 fields. */
  readonly info: LocalInfo & Record<string, unknown>;
  effects(): LocalEffectsView;
  /**
   * A subscriber's ledger view (the first subscriber's when `subscriber` is undefined): one participant's entry,
   * or without a participant the message's entry and its participants' ({@link LocalLedgerView}).
   */
  ledger(
    wamid: string,
    recipientParticipantId: string | undefined,
    subscriber: string | undefined,
  ): Promise<LocalLedgerView | undefined>;
  stats(sinceSeconds?: number): LocalStatsSnapshot;
  /** Resolves true once every subscriber queue is empty and no consumer invocation runs, false after `timeoutMs`. */
  waitUntilDrained(timeoutMs: number): Promise<boolean>;
  /** A subscriber's pollers (`npm run ops -- pause|resume`), or undefined for an unknown name. */
  consumer(subscriber: string): ConsumerPoller | undefined;
  /** `/local/key` and `/local/dead-letters`: what `npm run ops -- key | dlq | quarantine` show. */
  readonly operator: OperatorViews;
  /** `/local/archive`: the delivery archive's objects (key, size, deliveries), in key order. */
  archive(): Promise<readonly ArchiveObjectListing[]>;
}

/** API Gateway HTTP APIs refuse bodies above 10 MB. */
const API_GATEWAY_PAYLOAD_LIMIT_BYTES = 10 * 1024 * 1024;
/** A `lost-ack` or `timeout` request is held at most this long, then its connection is dropped. */
const HELD_REQUEST_MAX_MS = 60_000;

export interface LocalServer {
  readonly server: Server;
  /** Drops held (`timeout`/`lost-ack`) connections and stops accepting new ones. */
  close(): Promise<void>;
}

export function createLocalServer(dependencies: LocalServerDependencies): LocalServer {
  const held = new Set<ServerResponse>();

  async function route(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const url = new URL(request.url ?? '/', 'http://localhost');
    const method = request.method ?? 'GET';
    // `/webhook` is called as Meta calls it, through whatever tunnel forwards to it: any Host.
    if (url.pathname !== '/webhook') {
      const refusal = refuseForeignRequest(request, method, url.pathname, dependencies.host ?? '127.0.0.1');
      if (refusal !== undefined) return sendJson(response, refusal.status, { message: refusal.message });
    }
    if (method === 'GET' && url.pathname === '/') {
      return send(response, 200, dashboardHtml(), 'text/html; charset=utf-8');
    }
    if (method === 'GET' && url.pathname === CHART_JS_ROUTE) {
      response.writeHead(200, {
        'content-type': 'text/javascript; charset=utf-8',
        'cache-control': 'max-age=3600',
      });
      createReadStream(dependencies.chartJsPath).pipe(response);
      return;
    }
    if (url.pathname === '/local/faults') {
      if (method === 'POST') {
        try {
          const faults = dependencies.faults.update(
            JSON.parse((await readBody(request, 64 * 1024)).toString()),
          );
          dependencies.log(`faults: ${JSON.stringify(faults)}`);
          return sendJson(response, 200, faults);
        } catch (error) {
          if (error instanceof InvalidFaultsError || error instanceof SyntaxError) {
            return sendJson(response, 400, { message: error.message });
          }
          throw error;
        }
      }
      if (method === 'GET') return sendJson(response, 200, dependencies.faults.current);
      return sendJson(response, 405, { message: 'Method Not Allowed' });
    }

    const pipeline = dependencies.pipeline();
    if (pipeline === undefined) return sendJson(response, 503, { message: 'The local stack is starting.' });

    if (url.pathname === '/webhook') return webhook(request, response, pipeline);
    const switched = /^\/local\/subscribers\/([^/]+)\/lanes\/([^/]+)\/(pause|resume|consumer)$/.exec(
      url.pathname,
    );
    if (switched !== null) return consumerSwitch(response, pipeline, method, switched);
    if (method !== 'GET') return sendJson(response, 404, { message: 'Not Found' });
    if (url.pathname === '/local/info') return sendJson(response, 200, pipeline.info);
    if (url.pathname === '/local/effects') return sendJson(response, 200, pipeline.effects());
    if (url.pathname === '/local/archive') return sendJson(response, 200, await pipeline.archive());
    if (url.pathname === '/local/stats') {
      const since = Number(url.searchParams.get('since') ?? Number.NaN);
      return sendJson(response, 200, pipeline.stats(Number.isFinite(since) ? since : undefined));
    }
    if (url.pathname === '/local/drained') {
      const timeoutMs = Math.min(Number(url.searchParams.get('timeoutMs') ?? 10_000) || 10_000, 120_000);
      const drained = await pipeline.waitUntilDrained(timeoutMs);
      return sendJson(response, drained ? 200 : 504, { drained });
    }
    if (url.pathname === '/local/key') return keyLookup(response, pipeline, url.searchParams);
    if (url.pathname === '/local/dead-letters') {
      return sendJson(response, 200, await pipeline.operator.deadLetters());
    }
    if (url.pathname.startsWith('/local/ledger/')) {
      const wamid = decodeURIComponent(url.pathname.slice('/local/ledger/'.length));
      const participant = url.searchParams.get('participant') ?? undefined;
      const subscriber = url.searchParams.get('subscriber') ?? undefined;
      if (wamid === '') return sendJson(response, 400, { message: 'Usage: /local/ledger/<wamid>' });
      if (subscriber !== undefined && !pipeline.info.subscribers.some((s) => s.name === subscriber)) {
        return sendJson(response, 404, { message: `No subscriber ${subscriber}.` });
      }
      const view = await pipeline.ledger(wamid, participant, subscriber);
      if (view === undefined) return sendJson(response, 404, { message: `No status seen for ${wamid}.` });
      return sendJson(response, 200, view);
    }
    return sendJson(response, 404, { message: 'Not Found' });
  }

  /** `GET /local/key?key=<event key>[&subscriber=<name>]`: the view of `npm run ops -- key --json` per subscriber. */
  async function keyLookup(
    response: ServerResponse,
    pipeline: LocalPipeline,
    params: URLSearchParams,
  ): Promise<void> {
    const key = params.get('key') ?? '';
    const subscriber = params.get('subscriber') || undefined;
    if (key === '') {
      return sendJson(response, 400, { message: 'Usage: /local/key?key=<event key>[&subscriber=<name>]' });
    }
    if (subscriber !== undefined && !pipeline.info.subscribers.some((s) => s.name === subscriber)) {
      return sendJson(response, 404, { message: `No subscriber ${subscriber}.` });
    }
    try {
      return sendJson(response, 200, await pipeline.operator.keyLookup(key, subscriber));
    } catch (error) {
      if (error instanceof UsageError) return sendJson(response, 400, { message: error.message });
      throw error;
    }
  }

  /**
   * `POST …/lanes/LANE/pause`, `POST …/lanes/LANE/resume`, `GET …/lanes/LANE/consumer`: the lane poller's state
   * after the call.
   */
  function consumerSwitch(
    response: ServerResponse,
    pipeline: LocalPipeline,
    method: string,
    [, encodedName = '', encodedLane = '', action]: RegExpExecArray,
  ): void {
    const subscriber = decodeURIComponent(encodedName);
    const lane = decodeURIComponent(encodedLane);
    const poller = pipeline.consumer(subscriber);
    if (poller === undefined) {
      sendJson(response, 404, { message: `No subscriber ${subscriber}.` });
    } else if (!isLaneName(lane) || !poller.has(lane)) {
      sendJson(response, 404, { message: `Subscriber ${subscriber} has no ${lane} lane.` });
    } else if ((action === 'consumer') !== (method === 'GET') || (method !== 'GET' && method !== 'POST')) {
      sendJson(response, 405, { message: 'Method Not Allowed' });
    } else {
      if (action === 'pause') poller.pause(lane);
      if (action === 'resume') poller.resume(lane);
      if (action !== 'consumer') {
        dependencies.log(`consumer of ${subscriber}, ${lane} lane: ${action}d (${poller.state(lane)})`);
      }
      sendJson(response, 200, { subscriber, lane, state: poller.state(lane) });
    }
  }

  async function webhook(request: IncomingMessage, response: ServerResponse, pipeline: LocalPipeline) {
    const receivedAt = Date.now();
    const body = await readBody(request, API_GATEWAY_PAYLOAD_LIMIT_BYTES);
    const behaviour = request.method === 'POST' ? dependencies.faults.nextWebhookBehaviour() : 'up';
    if (behaviour === 'error') {
      return sendJson(response, dependencies.faults.current.webhook.errorStatus, {
        message: 'Service Unavailable',
      });
    }
    if (behaviour === 'timeout') return hold(response);
    const event = toApiGatewayV2Event({
      method: request.method ?? 'GET',
      url: request.url ?? '/',
      rawHeaders: request.rawHeaders,
      body,
      receivedAt,
      sourceIp: request.socket.remoteAddress,
    });
    const timeoutMs = pipeline.receiverTimeoutSeconds * 1000;
    const context = createLambdaContext({
      functionName: 'receiver',
      region: pipeline.region,
      deadlineMs: receivedAt + timeoutMs,
    });
    let timer: NodeJS.Timeout | undefined;
    const result = await Promise.race([
      pipeline.receiver(event, context),
      new Promise<'timeout'>((resolve) => {
        timer = setTimeout(() => resolve('timeout'), timeoutMs);
      }),
    ]).finally(() => clearTimeout(timer));
    if (behaviour === 'lost-ack') return hold(response);
    // A Lambda timeout or error reaches the caller as API Gateway's 500.
    if (result === 'timeout') return sendJson(response, 500, { message: 'Internal Server Error' });
    writeAnswer(response, fromApiGatewayV2Result(result));
  }

  function hold(response: ServerResponse): void {
    held.add(response);
    const timer = setTimeout(() => response.destroy(), HELD_REQUEST_MAX_MS);
    response.on('close', () => {
      clearTimeout(timer);
      held.delete(response);
    });
  }

  const server = createServer((request, response) => {
    route(request, response).catch((error: unknown) => {
      if (error instanceof PayloadTooLargeError) {
        sendJson(response, 413, { message: 'Request Entity Too Large' });
        return;
      }
      dependencies.log(`local server: ${request.method} ${request.url} failed: ${describe(error)}`);
      if (!response.headersSent) sendJson(response, 500, { message: 'Internal Server Error' });
      else response.destroy();
    });
  });

  return {
    server,
    close() {
      for (const response of held) response.destroy();
      return new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}

export class PortInUseError extends Error {
  constructor(port: number) {
    super(
      `Port ${port} is already in use: stop what runs there, or start on another port with PORT=<port> npm start.`,
    );
    this.name = 'PortInUseError';
  }
}

/** `LOCAL_HOST` / `--host` names no address this machine can listen on. */
export class LocalHostError extends Error {
  constructor(host: string, code: string | undefined) {
    super(
      `Cannot listen on ${host} (${code}): LOCAL_HOST or --host must be an address of this machine, such as 127.0.0.1 (the default) or 0.0.0.0 (every interface).`,
    );
    this.name = 'LocalHostError';
  }
}

/** Listens on `host` (`127.0.0.1` unless the stack was opened) and `port` (0: any free one). */
export function listenLocalServer(server: Server, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const onError = (error: NodeJS.ErrnoException) => {
      if (error.code === 'EADDRINUSE') reject(new PortInUseError(port));
      else if (error.code === 'EADDRNOTAVAIL' || error.code === 'ENOTFOUND') {
        reject(new LocalHostError(host, error.code));
      } else reject(error);
    };
    server.once('error', onError);
    server.listen(port, host, () => {
      server.off('error', onError);
      resolve();
    });
  });
}

/** The line `npm start` prints when the stack listens beyond the loopback; undefined when it does not. */
export function exposureWarning(host: string, port: number): string | undefined {
  if (isLoopbackHost(host)) return undefined;
  return `WARNING: the local stack listens on ${hostName(host) ?? host}:${port}, not on 127.0.0.1 alone: whoever reaches this machine can read /local/archive (message texts, phone numbers) and switch /local/faults and the consumers. A tunnel to /webhook needs no opening; unset LOCAL_HOST (or drop --host) to close it.`;
}

function isLoopbackHost(host: string): boolean {
  const name = hostName(host);
  return name !== undefined && (LOOPBACK_NAMES.has(name) || /^127\.\d+\.\d+\.\d+$/.test(name));
}

/** Names that always mean this machine; the stack's own clients use them. */
const LOOPBACK_NAMES: ReadonlySet<string> = new Set(['localhost', '127.0.0.1', '[::1]']);
/** Methods that only read; any other under `/local/` changes something. */
const READ_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'OPTIONS']);

/** 403 for a `Host` that is not this stack's, 415 for a change under `/local/` that is not JSON. */
export function refuseForeignRequest(
  request: IncomingMessage,
  method: string,
  pathname: string,
  host: string,
): { readonly status: 403 | 415; readonly message: string } | undefined {
  const port = request.socket.localPort ?? 0;
  const given = request.headers.host ?? '';
  if (!isOwnHost(given, port, host, request.socket.localAddress)) {
    return {
      status: 403,
      message: `${given === '' ? 'A request without Host' : `Host ${JSON.stringify(given)}`} refused: the local stack answers ${pathname} as ${acceptedHosts(host, port)} only, so that no web page can read it through another name (DNS rebinding)`,
    };
  }
  const contentType = (request.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase();
  if (pathname.startsWith('/local/') && !READ_METHODS.has(method) && contentType !== 'application/json') {
    return {
      status: 415,
      message: `${method} ${pathname} needs content-type: application/json, which no other web page can send here (a form or a simple cross-origin request cannot)`,
    };
  }
  return undefined;
}

/**
 * `Host` names the stack's port and the loopback, the host it was opened on, or, opened on a wildcard, the
 * address the request arrived at (an address, never a name: a rebound name still arrives at an address).
 */
function isOwnHost(given: string, port: number, host: string, arrivedAt: string | undefined): boolean {
  let url: URL;
  try {
    url = new URL(`http://${given}`);
  } catch {
    return false;
  }
  if (`${url.username}${url.password}${url.search}${url.hash}` !== '' || url.pathname !== '/') return false;
  if ((url.port || '80') !== String(port)) return false;
  if (LOOPBACK_NAMES.has(url.hostname) || url.hostname === hostName(host)) return true;
  return isWildcard(host) && arrivedAt !== undefined && url.hostname === hostName(unmapped(arrivedAt));
}

/** The names `isOwnHost` accepts, for the refusal. */
function acceptedHosts(host: string, port: number): string {
  const opened = isWildcard(host) ? "this machine's address" : hostName(host);
  const names = [...LOOPBACK_NAMES, ...(opened === undefined || LOOPBACK_NAMES.has(opened) ? [] : [opened])];
  return names.map((name) => `${name}:${port}`).join(', ');
}

function isWildcard(host: string): boolean {
  return host === '0.0.0.0' || host === '::';
}

/** An address or name as `URL.hostname` spells it (`[::1]`, lower case), or undefined when it is none. */
function hostName(address: string): string | undefined {
  try {
    return new URL(`http://${isIP(address) === 6 ? `[${address}]` : address}`).hostname;
  } catch {
    return undefined;
  }
}

/** `::ffff:192.168.1.5`, as a dual-stack socket reports an IPv4 peer, is `192.168.1.5`. */
function unmapped(address: string): string {
  return address.startsWith('::ffff:') && isIP(address.slice(7)) === 4 ? address.slice(7) : address;
}

function send(response: ServerResponse, status: number, body: string, contentType: string): void {
  response.writeHead(status, { 'content-type': contentType, 'content-length': Buffer.byteLength(body) });
  response.end(body);
}

function sendJson(response: ServerResponse, status: number, value: unknown): void {
  send(response, status, JSON.stringify(value), 'application/json');
}

function describe(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}
