/**
 * Graph API errors as one line each for the operator. Meta answers a failed call with
 * `{"error": {"message", "type", "code", "error_subcode", "fbtrace_id"}}`; the codes and what to do about them
 * are those of "Handling Errors" (https://developers.facebook.com/docs/graph-api/guides/error-handling).
 */

export interface GraphErrorBody {
  readonly message?: string;
  readonly type?: string;
  readonly code?: number;
  readonly error_subcode?: number;
  readonly fbtrace_id?: string;
}

export interface GraphCall {
  readonly method: string;
  /** `/v26.0/123/subscriptions`, without the query. */
  readonly path: string;
  /** What the path's id is, for "unknown object" errors: `app 123`, `WABA 456`. */
  readonly object: string;
}

/** Meta's "Callback verification failed" (code 2200): its verification GET to the callback did not succeed. */
export const CALLBACK_VERIFICATION_FAILED = 2200;

export class GraphApiError extends Error {
  readonly status: number;
  readonly body: GraphErrorBody | undefined;

  constructor(message: string, status: number, body: GraphErrorBody | undefined) {
    super(message);
    this.name = 'GraphApiError';
    this.status = status;
    this.body = body;
  }

  get callbackVerificationFailed(): boolean {
    return (
      this.body?.code === CALLBACK_VERIFICATION_FAILED ||
      /callback verification failed/i.test(this.body?.message ?? '')
    );
  }
}

/** One line: what the error means and what to do, then Meta's own words and trace id. */
export function explainGraphError(call: GraphCall, status: number, body: GraphErrorBody | undefined): string {
  const where = `${call.method} ${call.path}`;
  const meta =
    body === undefined
      ? `HTTP ${status}`
      : `${body.type ?? 'error'} ${body.code ?? '?'}${body.error_subcode === undefined ? '' : `/${body.error_subcode}`}: ${body.message ?? ''}${body.fbtrace_id === undefined ? '' : ` (fbtrace_id ${body.fbtrace_id})`}`;
  return `${where}: ${meaning(call, status, body)} [${meta.trim()}]`;
}

function meaning(call: GraphCall, status: number, body: GraphErrorBody | undefined): string {
  const code = body?.code;
  if (code === 190 || (code === undefined && status === 401)) {
    return 'the access token is invalid or expired (OAuthException 190): make a new one (the app token APP_ID|APP_SECRET, or a system user token) and give it again';
  }
  if (code === 102) return 'the token belongs to a session that ended: make a new access token';
  if (code === 10 || (code !== undefined && code >= 200 && code <= 299) || code === 3) {
    return `a permission is missing (code ${code}): the token cannot do this; an app's subscriptions need the app's own token (APP_ID|APP_SECRET), a WABA's subscribed_apps a token with whatsapp_business_management on that WABA`;
  }
  if (code === 100 && body?.error_subcode === 33) {
    return `unknown ${call.object}: no such id, or the token cannot see it (check the id, and that the token's business owns or shares it)`;
  }
  if (code === 803) return `unknown ${call.object}: no such id`;
  if (code === CALLBACK_VERIFICATION_FAILED || /callback verification failed/i.test(body?.message ?? '')) {
    return "Meta's verification GET to the callback URL failed";
  }
  if (code === 4 || code === 17 || code === 32 || code === 613 || code === 80007) {
    return 'rate limited by Meta: wait a few minutes and run it again';
  }
  if (code === 1 || code === 2 || status >= 500) return 'a temporary error at Meta: run it again';
  if (code === 100) return 'Meta refused a parameter of the request';
  return `Meta answered ${status}`;
}
