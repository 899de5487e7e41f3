/**
 * The local stack's HTTP endpoints that ops uses: `/local/info` (its table, queues, subscribers and
 * emulator endpoints) and each lane poller's switch, which answers with the words of Lambda's event source
 * mapping states (`Enabled`, `Disabling`, `Disabled`).
 */
import type { LocalInfo } from '../../local/local-stack-api.ts';
import { OpsError } from '../errors.ts';
import type { ConsumerState, ConsumerSwitch, SwitchedLane } from './consumer-switch.ts';

/** `/local/info` as the stack serves it: the fields of `LocalInfo` and the effective settings beside them. */
export type LocalStackInfo = LocalInfo & {
  readonly region?: string;
  readonly settings?: { readonly maximumMessageSizeBytes?: number };
  /** The local delivery archive, on the emulator's S3 (its SQS endpoint unless `s3Endpoint` says otherwise). */
  readonly archive?: {
    readonly bucketName: string;
    readonly s3Endpoint?: string;
    readonly retentionDays?: number;
  };
};

const REQUEST_TIMEOUT_MS = 10_000;

export class LocalStackApi implements ConsumerSwitch {
  readonly url: string;

  constructor(url: string) {
    this.url = url;
  }

  info(): Promise<LocalStackInfo> {
    return this.#json('GET', '/local/info');
  }

  async setEnabled(subscriber: string, lane: SwitchedLane, enabled: boolean): Promise<ConsumerState> {
    const path = `${lanePath(subscriber, lane)}/${enabled ? 'resume' : 'pause'}`;
    return (await this.#json<{ state: ConsumerState }>('POST', path)).state;
  }

  async state(subscriber: string, lane: SwitchedLane): Promise<ConsumerState> {
    return (await this.#json<{ state: ConsumerState }>('GET', `${lanePath(subscriber, lane)}/consumer`))
      .state;
  }

  async #json<T>(method: string, path: string): Promise<T> {
    let response: Response;
    try {
      response = await fetch(`${this.url}${path}`, {
        method,
        // The stack takes a change only as JSON (docs/local.md, Endpoints); the switch itself has no body.
        ...(method === 'GET' ? {} : { headers: { 'content-type': 'application/json' } }),
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      });
    } catch {
      throw new OpsError(
        `no local stack answers at ${this.url}: start it with npm start, or name a deployed stack with --stack NAME`,
      );
    }
    const text = await response.text();
    if (!response.ok) {
      throw new OpsError(
        `the local stack answered ${method} ${path} with ${response.status}: ${text.slice(0, 200)}`,
      );
    }
    return JSON.parse(text) as T;
  }
}

function lanePath(subscriber: string, lane: SwitchedLane): string {
  return `/local/subscribers/${encodeURIComponent(subscriber)}/lanes/${lane.lane}`;
}
