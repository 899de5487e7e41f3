/**
 * The two Graph API edges that connect Meta to the webhook, with the shapes of Meta's reference pages:
 * - `/{app-id}/subscriptions` (https://developers.facebook.com/docs/graph-api/reference/app/subscriptions/,
 *   https://developers.facebook.com/docs/graph-api/webhooks/subscriptions-edge): POST `object`,
 *   `callback_url`, `verify_token`, `fields`; GET `{"data": [{"object", "callback_url", "active",
 *   "fields": [{"name", "version"}]}]}`.
 * - `/{waba-id}/subscribed_apps`
 *   (https://developers.facebook.com/docs/graph-api/reference/whats-app-business-account/subscribed_apps/,
 *   https://developers.facebook.com/documentation/business-messaging/whatsapp/solution-providers/manage-webhooks,
 *   overrides: https://developers.facebook.com/documentation/business-messaging/whatsapp/webhooks/override/):
 *   POST, with `override_callback_uri` and `verify_token` to override the app's callback for that WABA; GET
 *   `{"data": [{"whatsapp_business_api_data": {"id", "link", "name"}, "override_callback_uri"?}]}`.
 * Both POSTs answer `{"success": true}`.
 */
import { WHATSAPP_BUSINESS_ACCOUNT_OBJECT } from 'whatsapp-webhook-dedup/contract/meta-graph-api';
import type { GraphClient } from './graph-client.ts';

export interface AppSubscription {
  readonly object: string;
  readonly callbackUrl: string | undefined;
  readonly active: boolean;
  readonly fields: readonly string[];
}

export interface SubscribedApp {
  readonly appId: string;
  readonly name: string | undefined;
  readonly overrideCallbackUri: string | undefined;
}

export class MetaSubscriptions {
  readonly #graph: GraphClient;

  constructor(graph: GraphClient) {
    this.#graph = graph;
  }

  /** The app's webhook subscription for WhatsApp Business Accounts; `undefined` when there is none. */
  async appSubscription(appId: string): Promise<AppSubscription | undefined> {
    const answer = await this.#graph.get<{ data?: unknown[] }>(`app ${appId}`, `/${appId}/subscriptions`);
    const found = (answer.data ?? [])
      .map(readAppSubscription)
      .find((subscription) => subscription?.object === WHATSAPP_BUSINESS_ACCOUNT_OBJECT);
    return found ?? undefined;
  }

  async subscribeApp(
    appId: string,
    subscription: {
      readonly callbackUrl: string;
      readonly verifyToken: string;
      readonly fields: readonly string[];
    },
  ): Promise<void> {
    await this.#graph.post(`app ${appId}`, `/${appId}/subscriptions`, {
      object: WHATSAPP_BUSINESS_ACCOUNT_OBJECT,
      callback_url: subscription.callbackUrl,
      verify_token: subscription.verifyToken,
      fields: subscription.fields.join(','),
    });
  }

  async subscribedApps(wabaId: string): Promise<SubscribedApp[]> {
    const answer = await this.#graph.get<{ data?: unknown[] }>(
      `WABA ${wabaId}`,
      `/${wabaId}/subscribed_apps`,
    );
    return (answer.data ?? []).flatMap((item) => {
      const entry = item as {
        whatsapp_business_api_data?: { id?: unknown; name?: unknown };
        override_callback_uri?: unknown;
      };
      const id = entry.whatsapp_business_api_data?.id;
      if (typeof id !== 'string' && typeof id !== 'number') return [];
      const name = entry.whatsapp_business_api_data?.name;
      return [
        {
          appId: String(id),
          name: typeof name === 'string' ? name : undefined,
          overrideCallbackUri:
            typeof entry.override_callback_uri === 'string' ? entry.override_callback_uri : undefined,
        },
      ];
    });
  }

  /** Subscribes the token's app to the WABA; with `override`, also sets its callback for that WABA. */
  async subscribeWaba(
    wabaId: string,
    override: { readonly callbackUrl: string; readonly verifyToken: string } | undefined,
  ): Promise<void> {
    await this.#graph.post(
      `WABA ${wabaId}`,
      `/${wabaId}/subscribed_apps`,
      override === undefined
        ? {}
        : { override_callback_uri: override.callbackUrl, verify_token: override.verifyToken },
    );
  }
}

function readAppSubscription(item: unknown): AppSubscription | undefined {
  const entry = item as { object?: unknown; callback_url?: unknown; active?: unknown; fields?: unknown };
  if (typeof entry?.object !== 'string') return undefined;
  const fields = Array.isArray(entry.fields)
    ? entry.fields.flatMap((field: unknown) => {
        const name = typeof field === 'string' ? field : (field as { name?: unknown } | null)?.name;
        return typeof name === 'string' ? [name] : [];
      })
    : [];
  return {
    object: entry.object,
    callbackUrl: typeof entry.callback_url === 'string' ? entry.callback_url : undefined,
    active: entry.active === true,
    fields: fields.sort(),
  };
}
