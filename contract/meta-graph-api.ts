/**
 * Where `npm run ops -- meta …` calls Meta's Graph API (docs/operations.md, "Connect to Meta"). The version is
 * pinned so that a new Graph release never changes what ops sends or reads unseen; `--graph-version` or
 * `META_GRAPH_VERSION` overrides it. Plain TypeScript: no AWS SDK.
 */

/**
 * The latest Graph API version when this was written: v26.0, introduced July 29, 2026, "available until: TBD"
 * (https://developers.facebook.com/docs/graph-api/changelog/versions/).
 */
export const GRAPH_API_VERSION = 'v26.0';

/** Graph API versions look like `v26.0`. */
export const GRAPH_API_VERSION_PATTERN = /^v\d{1,3}\.\d{1,2}$/;

export const GRAPH_API_BASE_URL = 'https://graph.facebook.com';

/** The environment variables `meta` reads; never printed. */
export const META_ENV = {
  /** An app access token (`APP_ID|APP_SECRET`) or a system user token, unless `--token-secret` names one. */
  accessToken: 'META_ACCESS_TOKEN',
  /** Overrides {@link GRAPH_API_VERSION}. */
  graphVersion: 'META_GRAPH_VERSION',
  /** Overrides {@link GRAPH_API_BASE_URL} (the tests' local Graph server). */
  graphUrl: 'META_GRAPH_URL',
} as const;

/** The `object` of an app subscription to WhatsApp Business Account webhooks. */
export const WHATSAPP_BUSINESS_ACCOUNT_OBJECT = 'whatsapp_business_account';
