/**
 * A minimal Graph API client over Node's fetch: GET and form-encoded POST on a pinned version, the access
 * token in the `Authorization: Bearer` header. Meta's samples also show an `access_token` parameter, but a
 * query string ends up in proxy and server access logs, shell history and any error that quotes the URL;
 * a header does not. The token never leaves this module: every error text has it redacted.
 */
import { explainGraphError, GraphApiError, type GraphCall, type GraphErrorBody } from './graph-errors.ts';

export interface GraphClientOptions {
  readonly baseUrl: string;
  readonly version: string;
  readonly accessToken: string;
  /** @default 30 s */
  readonly timeoutMs?: number;
}

export class GraphClient {
  readonly #options: GraphClientOptions;

  constructor(options: GraphClientOptions) {
    if (options.accessToken === '') throw new Error('GraphClient needs an access token.');
    this.#options = options;
  }

  get<T>(object: string, path: string, query: Record<string, string> = {}): Promise<T> {
    const search = new URLSearchParams(query).toString();
    return this.#send<T>({ method: 'GET', path: this.#versioned(path), object }, search, undefined);
  }

  post<T>(object: string, path: string, form: Record<string, string>): Promise<T> {
    return this.#send<T>(
      { method: 'POST', path: this.#versioned(path), object },
      '',
      new URLSearchParams(form),
    );
  }

  #versioned(path: string): string {
    return `/${this.#options.version}${path}`;
  }

  async #send<T>(call: GraphCall, search: string, form: URLSearchParams | undefined): Promise<T> {
    const url = `${this.#options.baseUrl}${call.path}${search === '' ? '' : `?${search}`}`;
    let response: Response;
    let text: string;
    try {
      response = await fetch(url, {
        method: call.method,
        headers: {
          authorization: `Bearer ${this.#options.accessToken}`,
          accept: 'application/json',
          ...(form === undefined ? {} : { 'content-type': 'application/x-www-form-urlencoded' }),
        },
        ...(form === undefined ? {} : { body: form.toString() }),
        signal: AbortSignal.timeout(this.#options.timeoutMs ?? 30_000),
      });
      text = await response.text();
    } catch (error) {
      const cause =
        error instanceof Error && error.cause instanceof Error ? error.cause.message : String(error);
      throw new GraphApiError(
        this.#redact(`${call.method} ${call.path}: no answer from ${this.#options.baseUrl} (${cause})`),
        0,
        undefined,
      );
    }
    let parsed: unknown;
    try {
      parsed = text === '' ? {} : JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    const errorBody = (parsed as { error?: GraphErrorBody } | undefined)?.error;
    if (!response.ok || errorBody !== undefined) {
      const body = errorBody === undefined ? undefined : this.#redactBody(errorBody);
      throw new GraphApiError(
        this.#redact(explainGraphError(call, response.status, body)),
        response.status,
        body,
      );
    }
    if (parsed === undefined) {
      throw new GraphApiError(
        `${call.method} ${call.path}: Meta answered ${response.status} with a body that is not JSON`,
        response.status,
        undefined,
      );
    }
    return parsed as T;
  }

  #redact(text: string): string {
    return text.split(this.#options.accessToken).join('[token]');
  }

  #redactBody(body: GraphErrorBody): GraphErrorBody {
    return body.message === undefined ? body : { ...body, message: this.#redact(body.message) };
  }
}
