/**
 * A local HTTP server that answers the Graph API calls of `npm run ops -- meta` as Meta's documentation shows
 * them, and records every request (method, path, query, form fields, Authorization header):
 * - `GET|POST /{version}/{app-id}/subscriptions`: https://developers.facebook.com/docs/graph-api/reference/app/subscriptions/
 *   and https://developers.facebook.com/docs/graph-api/webhooks/subscriptions-edge (POST `object`,
 *   `callback_url`, `verify_token`, `fields` → `{"success": true}`; GET → `{"data": [{"object",
 *   "callback_url", "active", "fields": [{"name", "version"}]}]}`). A POST first sends the verification GET
 *   to `callback_url` (`hub.mode=subscribe`, `hub.verify_token`, `hub.challenge`), as Meta does
 *   (https://developers.facebook.com/docs/graph-api/webhooks/getting-started), and answers error 2200
 *   "Callback verification failed with the following errors: HTTP Status Code = …" unless the challenge
 *   comes back with 200.
 * - `GET|POST /{version}/{waba-id}/subscribed_apps`:
 *   https://developers.facebook.com/docs/graph-api/reference/whats-app-business-account/subscribed_apps/,
 *   https://developers.facebook.com/documentation/business-messaging/whatsapp/solution-providers/manage-webhooks
 *   and, for `override_callback_uri` + `verify_token` (verified the same way),
 *   https://developers.facebook.com/documentation/business-messaging/whatsapp/webhooks/override/ (GET →
 *   `{"data": [{"whatsapp_business_api_data": {"id", "link", "name"}, "override_callback_uri"?}]}`).
 * - Errors, `{"error": {"message", "type", "code", "error_subcode", "fbtrace_id"}}` with the codes of
 *   https://developers.facebook.com/docs/graph-api/guides/error-handling: 190 for a token it does not know,
 *   200 for a token without the WABA permission, 100/33 for an id it does not know.
 */
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface GraphRequest {
  readonly method: string;
  readonly path: string;
  readonly query: Record<string, string>;
  readonly form: Record<string, string>;
  readonly authorization: string | undefined;
}

export interface AppSubscriptionState {
  object: string;
  callback_url: string;
  active: boolean;
  fields: { name: string; version: string }[];
}

export interface SubscribedAppState {
  whatsapp_business_api_data: { id: string; link: string; name: string };
  override_callback_uri?: string;
}

export interface FakeGraphOptions {
  /** The token that has every permission. */
  readonly token: string;
  /** A token that Meta knows but that lacks whatsapp_business_management. */
  readonly tokenWithoutWabaPermission?: string;
  readonly appIds: readonly string[];
  readonly wabaIds: readonly string[];
}

export class FakeGraphApi {
  readonly requests: GraphRequest[] = [];
  /** App id → its subscriptions. */
  readonly appSubscriptions = new Map<string, AppSubscriptionState[]>();
  /** WABA id → the apps subscribed to it. */
  readonly subscribedApps = new Map<string, SubscribedAppState[]>();
  readonly #options: FakeGraphOptions;
  readonly #server: Server;

  private constructor(options: FakeGraphOptions) {
    this.#options = options;
    for (const appId of options.appIds) this.appSubscriptions.set(appId, []);
    for (const wabaId of options.wabaIds) this.subscribedApps.set(wabaId, []);
    this.#server = createServer((request, response) => {
      this.#handle(request, response).catch((error: unknown) => {
        response.writeHead(500).end(String(error));
      });
    });
  }

  static async start(options: FakeGraphOptions): Promise<FakeGraphApi> {
    const fake = new FakeGraphApi(options);
    fake.#server.listen(0, '127.0.0.1');
    await once(fake.#server, 'listening');
    return fake;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    this.#server.close();
    await once(this.#server, 'close');
  }

  async #handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const url = new URL(request.url ?? '/', this.url);
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const form = Object.fromEntries(new URLSearchParams(Buffer.concat(chunks).toString()));
    const recorded: GraphRequest = {
      method: request.method ?? 'GET',
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      form,
      authorization: request.headers.authorization,
    };
    this.requests.push(recorded);
    const send = (status: number, body: unknown) => {
      response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    };
    const token = /^Bearer (.+)$/.exec(recorded.authorization ?? '')?.[1];
    if (token !== this.#options.token && token !== this.#options.tokenWithoutWabaPermission) {
      return send(
        400,
        graphError('Invalid OAuth access token - Cannot parse access token', 'OAuthException', 190),
      );
    }
    const [, , id, edge] = url.pathname.split('/');
    if (edge === 'subscriptions') {
      const subscriptions = this.appSubscriptions.get(id ?? '');
      if (subscriptions === undefined) return send(400, unknownObject(id, recorded.method));
      if (recorded.method === 'GET') return send(200, { data: subscriptions });
      const failure = await verifyCallback(form.callback_url, form.verify_token);
      if (failure !== undefined) return send(400, failure);
      const fields = (form.fields ?? '').split(',').filter((field) => field !== '');
      const existing = subscriptions.find((subscription) => subscription.object === form.object);
      // Meta adds the posted fields to the subscription's fields and sets the callback URL.
      const names = new Set([...(existing?.fields.map((field) => field.name) ?? []), ...fields]);
      const updated: AppSubscriptionState = {
        object: form.object ?? '',
        callback_url: form.callback_url ?? '',
        active: true,
        fields: [...names].map((name) => ({ name, version: 'v26.0' })),
      };
      this.appSubscriptions.set(id ?? '', [
        ...subscriptions.filter((subscription) => subscription !== existing),
        updated,
      ]);
      return send(200, { success: true });
    }
    if (edge === 'subscribed_apps') {
      const apps = this.subscribedApps.get(id ?? '');
      if (apps === undefined) return send(400, unknownObject(id, recorded.method));
      if (token === this.#options.tokenWithoutWabaPermission) {
        return send(
          403,
          graphError(
            '(#200) Requires whatsapp_business_management permission to manage the object',
            'OAuthException',
            200,
          ),
        );
      }
      if (recorded.method === 'GET') return send(200, { data: apps });
      if (form.override_callback_uri !== undefined) {
        const failure = await verifyCallback(form.override_callback_uri, form.verify_token);
        if (failure !== undefined) return send(400, failure);
      }
      const appId = this.#options.appIds[0] ?? '';
      const entry: SubscribedAppState = {
        whatsapp_business_api_data: {
          id: appId,
          link: `https://www.facebook.com/games/?app_id=${appId}`,
          name: 'Test app',
        },
        override_callback_uri: form.override_callback_uri,
      };
      this.subscribedApps.set(id ?? '', [
        ...apps.filter((app) => app.whatsapp_business_api_data.id !== appId),
        entry,
      ]);
      return send(200, { success: true });
    }
    return send(400, graphError('Unknown path components', 'OAuthException', 2500));
  }
}

function graphError(message: string, type: string, code: number, subcode?: number) {
  return {
    error: {
      message,
      type,
      code,
      error_subcode: subcode,
      fbtrace_id: 'AbCdEfGh123',
    },
  };
}

function unknownObject(id: string | undefined, method: string) {
  return graphError(
    `Unsupported ${method.toLowerCase()} request. Object with ID '${id}' does not exist, cannot be loaded due to missing permissions, or does not support this operation. Please read the Graph API documentation at https://developers.facebook.com/docs/graph-api`,
    'GraphMethodException',
    100,
    33,
  );
}

/** Meta's verification request to a callback; an error body when it does not answer the challenge. */
async function verifyCallback(callbackUrl: string | undefined, verifyToken: string | undefined) {
  const challenge = String(Math.floor(Math.random() * 1e9));
  const url = new URL(callbackUrl ?? 'http://invalid.invalid/');
  url.searchParams.set('hub.mode', 'subscribe');
  url.searchParams.set('hub.verify_token', verifyToken ?? '');
  url.searchParams.set('hub.challenge', challenge);
  let status = 0;
  let statusText = 'No answer';
  let body = '';
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(5000) });
    status = response.status;
    statusText = response.statusText;
    body = await response.text();
  } catch {
    // Meta reports an unreachable callback the same way.
  }
  if (status === 200 && body === challenge) return undefined;
  return graphError(
    `(#2200) Callback verification failed with the following errors: HTTP Status Code = ${status}; HTTP Message = ${statusText}`,
    'OAuthException',
    2200,
  );
}
