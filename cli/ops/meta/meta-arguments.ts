/**
 * The options of `meta subscribe` and `meta status`, checked before anything is read: which app and WABAs,
 * which fields, where the access token comes from (never its value) and which Graph API to call.
 */
import {
  GRAPH_API_BASE_URL,
  GRAPH_API_VERSION,
  GRAPH_API_VERSION_PATTERN,
  META_ENV,
} from 'whatsapp-webhook-dedup/contract/meta-graph-api';
import { WHATSAPP_WEBHOOK_FIELDS } from 'whatsapp-webhook-dedup/contract/meta-webhook-fields';
import { WEBHOOK_FIELD_PATTERN } from 'whatsapp-webhook-dedup/contract/subscribers';
import { UsageError } from '../errors.ts';

/** Where the app access token is read at run time: an environment variable or a Secrets Manager secret. */
export type AccessTokenSource =
  | { readonly kind: 'environment'; readonly variable: string }
  | { readonly kind: 'secret'; readonly secretName: string };

export interface GraphApiLocation {
  /** `https://graph.facebook.com`, or `META_GRAPH_URL`. */
  readonly baseUrl: string;
  /** `v26.0` (pinned), `--graph-version` or `META_GRAPH_VERSION`. */
  readonly version: string;
}

export interface MetaOptions {
  readonly stackName: string;
  readonly appId: string;
  readonly wabaIds: readonly string[];
  /** `--fields`: instead of the union of what the subscribers want. */
  readonly fields: readonly string[] | undefined;
  /** `--override`: set the stack's URL as each WABA's override callback (`override_callback_uri`). */
  readonly override: boolean;
  readonly token: AccessTokenSource;
  readonly graph: GraphApiLocation;
}

interface MetaValues {
  readonly 'app-id'?: string;
  readonly waba?: string[];
  readonly fields?: string;
  readonly override?: boolean;
  readonly 'token-secret'?: string;
  readonly 'graph-version'?: string;
}

/** Graph object ids (apps, WABAs) are decimal numbers; anything else would change the request's path. */
const GRAPH_ID_PATTERN = /^\d{1,30}$/;

/** `stackName`: the `--stack` given, if any. */
export function metaOptions(
  values: MetaValues,
  stackName: string | undefined,
  env: NodeJS.ProcessEnv,
): MetaOptions {
  if (stackName === undefined) {
    throw new UsageError(
      'meta needs --stack NAME: Meta calls the deployed webhook, and it cannot reach a local stack',
    );
  }
  const appId = values['app-id'];
  if (appId === undefined) throw new UsageError('meta needs --app-id ID (the Meta app, from its dashboard)');
  graphId('--app-id', appId);
  const wabaIds = [...new Set(values.waba ?? [])];
  for (const waba of wabaIds) graphId('--waba', waba);
  return {
    stackName,
    appId,
    wabaIds,
    fields: values.fields === undefined ? undefined : fieldList(values.fields),
    override: values.override === true,
    token: tokenSource(values['token-secret'], env),
    graph: graphLocation(values['graph-version'], env),
  };
}

function graphId(option: string, value: string): void {
  if (!GRAPH_ID_PATTERN.test(value)) throw new UsageError(`${option} needs a numeric id, got "${value}"`);
}

function fieldList(raw: string): string[] {
  const fields = [...new Set(raw.split(',').map((field) => field.trim()))].filter((field) => field !== '');
  if (fields.length === 0) throw new UsageError('--fields needs at least one field name');
  const offered: readonly string[] = WHATSAPP_WEBHOOK_FIELDS;
  const unknown = fields.filter((field) => !WEBHOOK_FIELD_PATTERN.test(field) || !offered.includes(field));
  if (unknown.length > 0) {
    throw new UsageError(
      `--fields: ${unknown.join(', ')} is not a whatsapp_business_account webhook field (contract/meta-webhook-fields.ts)`,
    );
  }
  return fields.sort();
}

function tokenSource(secretName: string | undefined, env: NodeJS.ProcessEnv): AccessTokenSource {
  if (secretName !== undefined) {
    if (secretName.trim() === '') throw new UsageError('--token-secret needs a secret name');
    return { kind: 'secret', secretName };
  }
  if ((env[META_ENV.accessToken] ?? '').trim() === '') {
    throw new UsageError(
      `meta needs an app access token: set ${META_ENV.accessToken} (APP_ID|APP_SECRET, or a system user token) or name a Secrets Manager secret with --token-secret NAME`,
    );
  }
  return { kind: 'environment', variable: META_ENV.accessToken };
}

function graphLocation(versionOption: string | undefined, env: NodeJS.ProcessEnv): GraphApiLocation {
  const version = versionOption ?? (env[META_ENV.graphVersion] || GRAPH_API_VERSION);
  if (!GRAPH_API_VERSION_PATTERN.test(version)) {
    throw new UsageError(`the Graph API version looks like ${GRAPH_API_VERSION}, got "${version}"`);
  }
  const raw = env[META_ENV.graphUrl] || GRAPH_API_BASE_URL;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UsageError(`${META_ENV.graphUrl} needs a URL, got "${raw}"`);
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && isLoopback(url.hostname))) {
    throw new UsageError(
      `${META_ENV.graphUrl} needs an https URL (http only to this machine: localhost, 127.0.0.0/8, [::1]), since the access token goes with every request; got "${raw}"`,
    );
  }
  return { baseUrl: url.origin, version };
}

/** A host whose traffic never leaves this machine, as the WHATWG URL parser writes it (`[::1]`, `127.0.0.1`). */
function isLoopback(hostname: string): boolean {
  return (
    hostname === 'localhost' || hostname === '[::1]' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(hostname)
  );
}
