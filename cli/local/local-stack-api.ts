/**
 * The local stack's HTTP API as its clients know it (the ops CLI, the bench, the tests): the port it listens
 * on by default and what `/local/info` answers. The local server serves it; nothing here imports the stack.
 */
import type { PipelineSettings } from 'whatsapp-webhook-dedup/contract/settings';

export const DEFAULT_PORT = 3000;

/**
 * Development defaults of the local stack's secrets when `WHATSAPP_APP_SECRETS` / `WHATSAPP_VERIFY_TOKEN` are
 * unset; never use them for a real Meta app. `npm run send` and `ops smoke` sign with the same secret.
 */
export const DEV_APP_SECRET = 'local-dev-app-secret';
export const DEV_VERIFY_TOKEN = 'local-dev-verify-token';

/** One subscriber as `/local/info` lists it (the ops CLI reads these). */
export interface LocalSubscriberInfo {
  readonly name: string;
  /** The module its handlers come from, relative to the project root. */
  readonly entry: string;
  /** The webhook fields it receives; null: every field. */
  readonly fields: readonly string[] | null;
  /** The phone number ids it receives; null: no limit (contract/event-origin.ts). */
  readonly numbers: readonly string[] | null;
  /** The WABA ids it receives; null: no limit. */
  readonly wabas: readonly string[] | null;
  /** The prefix of its claim and ledger keys; null: unprefixed. */
  readonly keyNamespace: string | null;
  /** The handlers its module defines (`onMessage`, `onStatus`, `onError`, `onManagementEvent`, `onRecord`, …). */
  readonly handlers: readonly string[];
  /** Its status lane (every field but inbound messages; those too without a message lane). */
  readonly queueUrl: string;
  readonly dlqUrl: string;
  /** Its message lane (contract/lanes.ts), when it wants `messages`: inbound messages only. */
  readonly messageQueueUrl?: string;
  readonly messageDlqUrl?: string;
  /** The message lane is a FIFO queue run in conversation order. */
  readonly messageLaneOrdered?: boolean;
  /** The message lane consumer's settings (no batching window; a chat's retry budget when ordered). */
  readonly messageLaneSettings?: PipelineSettings;
  /** Its status lane consumer's settings: the pipeline's with its own on top. */
  readonly settings: PipelineSettings;
}

export interface LocalInfo {
  readonly dynamodbEndpoint: string;
  readonly sqsEndpoint: string;
  readonly tableName: string;
  /** The first subscriber's queue and DLQ (the only ones without `subscribers` configured). */
  readonly queueUrl: string;
  readonly dlqUrl: string;
  readonly quarantineQueueUrl: string;
  /** The run's log digest key: what `ops key` digests a key with, as the consumers' logs do. */
  readonly logDigestKey: string;
  /** The run's provenance key: what `ops` checks a quarantined or archived body's proof with. */
  readonly provenanceKey: string;
  /** Where the subscribers were configured: `bin/subscribers.ts`, or the `LOCAL_SUBSCRIBERS` module. */
  readonly subscribersSource: string;
  readonly subscribers: readonly LocalSubscriberInfo[];
}
