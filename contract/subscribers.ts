/**
 * Subscribers (docs/design.md §7): several systems fed by one webhook, each with its own queue, DLQ, consumer
 * and claim namespace, so that one system's failure never re-runs or delays another's side effects.
 *
 * The CDK app (`bin/app.ts`) and the local stack (`npm start`) read the same definitions from
 * `bin/subscribers.ts`; `resolveSubscribers` checks them where every setting is known (synth, local start).
 * Plain TypeScript: no aws-cdk-lib, no AWS SDK.
 */
import { idListProblem, MAX_SELECTED_IDS, wantsField } from './event-origin.ts';
import {
  type ForwardDefinition,
  forwardInFlightProblem,
  forwardInFlightShare,
  forwardLaneInFlight,
  type ResolvedForward,
  resolveForward,
} from './forwarding.ts';
import {
  type LaneName,
  type MessageLaneDefinition,
  type ResolvedMessageLane,
  resolveMessageLane,
} from './lanes.ts';
import { isWhatsAppWebhookField } from './meta-webhook-fields.ts';
import {
  type PipelineSettings,
  type PipelineSettingsInput,
  resolveSettings,
  UnsafeSettingsError,
  withoutUndefined,
} from './settings.ts';
import type { StatusLedgerMode } from './status-ledger-mode.ts';

/** The one subscriber of a pipeline configured without `subscribers`: today's single handler set. */
export const DEFAULT_SUBSCRIBER_NAME = 'default';

/**
 * Names end up in construct ids, queue and function names, metric dimensions and claim keys (`<name>#…`):
 * lowercase letters, digits and `-`, starting with a letter, at most 32 characters.
 */
export const SUBSCRIBER_NAME_PATTERN = /^[a-z][a-z0-9-]{0,31}$/;

/** Webhook field names as Meta writes them (`messages`, `message_template_status_update`, …). */
export const WEBHOOK_FIELD_PATTERN = /^[a-z][a-z0-9_]{0,63}$/;

/** Settings of the whole pipeline that one subscriber cannot change: the receiver has one of each. */
export const PIPELINE_ONLY_SETTINGS = ['receiverTimeoutSeconds', 'maximumMessageSizeBytes'] as const;
export type PipelineOnlySetting = (typeof PIPELINE_ONLY_SETTINGS)[number];

/** The consumer settings a subscriber may set for itself; unset ones come from the pipeline's. */
export type SubscriberSettingsInput = Omit<PipelineSettingsInput, PipelineOnlySetting>;

export interface SubscriberDefinition {
  /**
   * Path of the subscriber's module, from the CDK app's directory (where `cdk synth` and `start` run) or
   * absolute. It exports `webhookHandlers` (from `defineWebhookHandlers`) and `handler` (the consumer Lambda
   * over them, `createConsumerFromEnv(webhookHandlers)`): the construct bundles it as the subscriber's Lambda
   * entry, the local stack imports its handlers. Required, unless `forward` is given instead.
   * @example
   * ```typescript
   * import { App, Stack } from 'aws-cdk-lib';
   * import { WhatsAppWebhookDedup } from 'whatsapp-webhook-dedup';
   *
   * const stack = new Stack(new App(), 'SupportWebhook');
   * new WhatsAppWebhookDedup(stack, 'Webhook', {
   *   subscribers: { crm: { entry: 'src/crm.ts' } },
   * });
   * ```
   */
  readonly entry?: string;
  /**
   * A destination to forward each fresh event to, instead of code of yours (`entry`): the construct deploys
   * this package's forwarding consumer for it. Claimed, retried and dead-lettered as any subscriber's effect;
   * see {@link ForwardDefinition}.
   * @default - none: the subscriber runs `entry`
   * @example
   * ```typescript
   * import { App, Stack } from 'aws-cdk-lib';
   * import { WhatsAppWebhookDedup } from 'whatsapp-webhook-dedup';
   *
   * const stack = new Stack(new App(), 'SupportWebhook');
   * new WhatsAppWebhookDedup(stack, 'Webhook', {
   *   subscribers: {
   *     bot: { entry: 'src/bot.ts', fields: ['messages'] },
   *     chatwoot: { forward: { url: 'https://chat.example.com/webhooks/whatsapp/+15550001111' } },
   *   },
   * });
   * ```
   */
  readonly forward?: ForwardDefinition;
  /**
   * The webhook fields this subscriber receives (e.g. `['messages']`), among those Meta documents
   * (contract/meta-webhook-fields.ts); a delivery with none of them never reaches its queue, and events of other
   * fields in a delivery it does receive are skipped without a claim.
   * @default - every field
   * @example
   * ```typescript
   * import { App, Stack } from 'aws-cdk-lib';
   * import { WhatsAppWebhookDedup } from 'whatsapp-webhook-dedup';
   *
   * const stack = new Stack(new App(), 'SupportWebhook');
   * new WhatsAppWebhookDedup(stack, 'Webhook', {
   *   subscribers: { bot: { entry: 'src/bot.ts', fields: ['messages'] } },
   * });
   * ```
   */
  readonly fields?: readonly string[];
  /**
   * The phone numbers this subscriber receives, by Meta's phone number id (`value.metadata.phone_number_id`,
   * the id in the Graph API's `/<id>/messages`, not the phone number). Deliveries of other numbers never reach
   * its queue, and their events in a delivery it does receive are skipped without a claim. Events that belong
   * to an account rather than a number (templates, account updates) come only through `wabas`.
   * @default - every number
   * @example
   * ```typescript
   * import { App, Stack } from 'aws-cdk-lib';
   * import { WhatsAppWebhookDedup } from 'whatsapp-webhook-dedup';
   *
   * const stack = new Stack(new App(), 'SupportWebhook');
   * new WhatsAppWebhookDedup(stack, 'Webhook', {
   *   subscribers: {
   *     brazil: { entry: 'src/brazil.ts', numbers: ['106540352242922'] },
   *     mexico: { entry: 'src/mexico.ts', numbers: ['107655329012345'] },
   *   },
   * });
   * ```
   */
  readonly numbers?: readonly string[];
  /**
   * The WhatsApp Business Accounts this subscriber receives, by WABA id (`entry.id`): every event of every
   * number of theirs, and their account-level events. With `numbers` too, it receives the events of either.
   * @default - every account
   * @example
   * ```typescript
   * import { App, Stack } from 'aws-cdk-lib';
   * import { WhatsAppWebhookDedup } from 'whatsapp-webhook-dedup';
   *
   * const stack = new Stack(new App(), 'SupportWebhook');
   * new WhatsAppWebhookDedup(stack, 'Webhook', {
   *   subscribers: { tenant: { entry: 'src/tenant.ts', wabas: ['102290129340398'] } },
   * });
   * ```
   */
  readonly wabas?: readonly string[];
  /**
   * Prefix of this subscriber's claim and ledger keys (`<ns>#<key>`). `''` keeps keys unprefixed, which only
   * one subscriber may do (the one that inherits the claims of a single-subscriber deployment).
   * @default - the subscriber's name
   * @example
   * ```typescript
   * import { App, Stack } from 'aws-cdk-lib';
   * import { WhatsAppWebhookDedup } from 'whatsapp-webhook-dedup';
   *
   * const stack = new Stack(new App(), 'SupportWebhook');
   * new WhatsAppWebhookDedup(stack, 'Webhook', {
   *   // `default` keeps the unprefixed claims of a stack deployed without subscribers.
   *   subscribers: { default: { entry: 'src/bot.ts', keyNamespace: '' }, crm: { entry: 'src/crm.ts' } },
   * });
   * ```
   */
  readonly keyNamespace?: string;
  /**
   * Consumer settings for this subscriber only (batch size, timeout, retries, …), over the pipeline's. The
   * receiver's own settings (`receiverTimeoutSeconds`, `maximumMessageSizeBytes`) are refused here.
   * @default - the pipeline's settings
   * @example
   * ```typescript
   * import { App, Stack } from 'aws-cdk-lib';
   * import { WhatsAppWebhookDedup } from 'whatsapp-webhook-dedup';
   *
   * const stack = new Stack(new App(), 'SupportWebhook');
   * new WhatsAppWebhookDedup(stack, 'Webhook', {
   *   subscribers: { crm: { entry: 'src/crm.ts', settings: { batchSize: 5, consumerTimeoutSeconds: 60 } } },
   * });
   * ```
   */
  readonly settings?: SubscriberSettingsInput;
  /**
   * When this subscriber's consumer records statuses in the status ledger: `'with-handler'` only when its
   * handlers include `onStatus`, `'always'` for every status.
   * @default - the pipeline's `statusLedger`, else 'with-handler'
   * @example
   * ```typescript
   * import { App, Stack } from 'aws-cdk-lib';
   * import { WhatsAppWebhookDedup } from 'whatsapp-webhook-dedup';
   *
   * const stack = new Stack(new App(), 'SupportWebhook');
   * new WhatsAppWebhookDedup(stack, 'Webhook', {
   *   subscribers: { crm: { entry: 'src/crm.ts', statusLedger: 'always' } },
   * });
   * ```
   */
  readonly statusLedger?: StatusLedgerMode;
  /**
   * Whether this subscriber's consumer claims events it has no handler for (one write each, so that their
   * duplicates are counted); `false` skips them.
   * @default - the pipeline's `claimUnhandledEvents`, else true
   * @example
   * ```typescript
   * import { App, Stack } from 'aws-cdk-lib';
   * import { WhatsAppWebhookDedup } from 'whatsapp-webhook-dedup';
   *
   * const stack = new Stack(new App(), 'SupportWebhook');
   * new WhatsAppWebhookDedup(stack, 'Webhook', {
   *   subscribers: { bot: { entry: 'src/bot.ts', claimUnhandledEvents: false } },
   * });
   * ```
   */
  readonly claimUnhandledEvents?: boolean;
  /**
   * Consumer memory in MB.
   * @default - the pipeline's `consumerMemorySize`, else 512
   * @example
   * ```typescript
   * import { App, Stack } from 'aws-cdk-lib';
   * import { WhatsAppWebhookDedup } from 'whatsapp-webhook-dedup';
   *
   * const stack = new Stack(new App(), 'SupportWebhook');
   * new WhatsAppWebhookDedup(stack, 'Webhook', {
   *   subscribers: { bot: { entry: 'src/bot.ts', memorySize: 1024 } },
   * });
   * ```
   */
  readonly memorySize?: number;
  /**
   * Its message lane (contract/lanes.ts): inbound messages apart from statuses and other fields, ordered per
   * conversation by default. Only for a subscriber that wants `messages`.
   * @default - the pipeline's `messageLane`, else an ordered lane with the lane defaults
   * @example
   * ```typescript
   * import { App, Stack } from 'aws-cdk-lib';
   * import { WhatsAppWebhookDedup } from 'whatsapp-webhook-dedup';
   *
   * const stack = new Stack(new App(), 'SupportWebhook');
   * new WhatsAppWebhookDedup(stack, 'Webhook', {
   *   subscribers: { crm: { entry: 'src/crm.ts', messageLane: { ordered: false } } },
   * });
   * ```
   */
  readonly messageLane?: MessageLaneDefinition;
}

/** Subscriber name → definition. */
export type SubscriberDefinitions = Readonly<Record<string, SubscriberDefinition>>;

export interface ResolvedSubscriber {
  readonly name: string;
  /** The module of a code subscriber; `undefined` for a forward subscriber. */
  readonly entry: string | undefined;
  /** A forward subscriber's destination; `undefined` for a code subscriber. */
  readonly forward: ResolvedForward | undefined;
  /** `undefined`: every field. Never empty. */
  readonly fields: readonly string[] | undefined;
  /** Phone number ids; `undefined`: every number (unless `wabas` limits it). Never empty. */
  readonly numbers: readonly string[] | undefined;
  /** WABA ids; `undefined`: every account (unless `numbers` limits it). Never empty. */
  readonly wabas: readonly string[] | undefined;
  /** `undefined`: unprefixed keys. */
  readonly keyNamespace: string | undefined;
  /** The pipeline's settings with this subscriber's own on top, checked together. */
  readonly settings: PipelineSettings;
  readonly statusLedger: StatusLedgerMode | undefined;
  readonly claimUnhandledEvents: boolean | undefined;
  readonly memorySize: number | undefined;
  /** `undefined`: the subscriber does not want `messages`, so it has no message lane. */
  readonly messageLane: ResolvedMessageLane | undefined;
}

/** Where the receiver sends a delivery for one subscriber (the receiver's `SUBSCRIBER_QUEUES` variable). */
export interface SubscriberQueue {
  readonly name: string;
  /**
   * The status lane: statuses, errors and every field but inbound messages; also the inbound messages when
   * the subscriber has no `messageQueueUrl`.
   */
  readonly queueUrl: string;
  /** `undefined`: every field. */
  readonly fields?: readonly string[];
  /** `undefined`: every number, unless `wabas` is given (contract/event-origin.ts, `wantsOrigin`). */
  readonly numbers?: readonly string[];
  /** `undefined`: every account, unless `numbers` is given. */
  readonly wabas?: readonly string[];
  /** The message lane: inbound messages, one queue message per conversation and delivery. */
  readonly messageQueueUrl?: string;
  /**
   * The message lane is a FIFO queue: each message carries the conversation as `MessageGroupId` and a
   * deduplication id derived from its event keys.
   */
  readonly messageLaneOrdered?: boolean;
}

/**
 * Checks the definitions and resolves each subscriber's settings over the pipeline's. Throws
 * `UnsafeSettingsError` naming the subscriber and what to change.
 */
export function resolveSubscribers(
  definitions: SubscriberDefinitions,
  pipelineSettings: PipelineSettingsInput = {},
  pipelineMessageLane?: MessageLaneDefinition,
  /** `forwardLoopbackHttp`: forward URLs may be http to a loopback address (the local stack). */
  options: { readonly forwardLoopbackHttp?: boolean } = {},
): ResolvedSubscriber[] {
  const names = Object.keys(definitions);
  if (names.length === 0) {
    throw new UnsafeSettingsError(
      'subscribers is empty: define at least one, or leave it out for the single default subscriber.',
    );
  }
  const resolved = names.map((name) =>
    resolveOne(name, definitions[name] as SubscriberDefinition, pipelineSettings, pipelineMessageLane, {
      loopbackHttp: options.forwardLoopbackHttp === true,
    }),
  );
  const owners = new Map<string, string>();
  for (const subscriber of resolved) {
    const namespace = subscriber.keyNamespace ?? '';
    const other = owners.get(namespace);
    if (other !== undefined) {
      throw new UnsafeSettingsError(
        `Subscribers ${other} and ${subscriber.name} share the key namespace "${namespace}": each subscriber needs its own, or one would skip the other's events as duplicates.`,
      );
    }
    owners.set(namespace, subscriber.name);
  }
  const selectedIds = resolved.reduce(
    (sum, { numbers, wabas }) => sum + (numbers?.length ?? 0) + (wabas?.length ?? 0),
    0,
  );
  if (selectedIds > MAX_SELECTED_IDS) {
    throw new UnsafeSettingsError(
      `The subscribers list ${selectedIds} numbers and wabas together, more than ${MAX_SELECTED_IDS}: they all travel in the receiver's environment, which Lambda holds to 4 KB. Select by wabas rather than by each number, or split the numbers over several pipelines.`,
    );
  }
  return resolved;
}

function resolveOne(
  name: string,
  definition: SubscriberDefinition,
  pipelineSettings: PipelineSettingsInput,
  pipelineMessageLane: MessageLaneDefinition | undefined,
  forwardOptions: { readonly loopbackHttp: boolean },
): ResolvedSubscriber {
  const problem = (text: string) => new UnsafeSettingsError(`Subscriber ${name}: ${text}`);
  if (!SUBSCRIBER_NAME_PATTERN.test(name)) {
    throw problem(
      `the name must be lowercase letters, digits and "-", start with a letter and have at most 32 characters.`,
    );
  }
  const hasEntry = typeof definition.entry === 'string' && definition.entry !== '';
  if (hasEntry === (definition.forward !== undefined)) {
    throw problem(
      hasEntry
        ? 'give entry (your handlers) or forward (a destination URL), not both.'
        : 'entry is required: the path of the module exporting webhookHandlers and handler (or forward, a destination URL).',
    );
  }
  const forward =
    definition.forward === undefined ? undefined : resolveForward(definition.forward, forwardOptions);
  if (typeof forward === 'string') throw problem(forward);
  const fields = definition.fields;
  if (fields !== undefined) {
    if (fields.length === 0) {
      throw problem(
        'fields is empty, so it would receive nothing: list its fields, or leave fields out for all.',
      );
    }
    // A misspelt field would leave the subscriber silently without its events; a field Meta does not document
    // has no key, so it could only ever be counted as UnknownField.
    const bad = fields.filter((field) => !isWhatsAppWebhookField(field));
    if (bad.length > 0) {
      throw problem(
        `${bad.map((field) => JSON.stringify(field)).join(', ')} is not a webhook field Meta documents for whatsapp_business_account (contract/meta-webhook-fields.ts).`,
      );
    }
  }
  const numbers = selectedIds(definition.numbers, 'numbers', problem);
  const wabas = selectedIds(definition.wabas, 'wabas', problem);
  const keyNamespace = definition.keyNamespace ?? name;
  if (keyNamespace !== '' && !/^[A-Za-z0-9_.-]+$/.test(keyNamespace)) {
    throw problem(`keyNamespace "${keyNamespace}" may hold letters, digits, "_", "." and "-" only.`);
  }
  const own = withoutUndefined(definition.settings ?? {}) as Record<string, unknown>;
  const pipelineOnly = PIPELINE_ONLY_SETTINGS.filter((setting) => setting in own);
  if (pipelineOnly.length > 0) {
    throw problem(
      `${pipelineOnly.join(', ')} belong to the whole pipeline (the receiver), not to one subscriber.`,
    );
  }
  const settingsInput = { ...withoutUndefined(pipelineSettings), ...own };
  let settings: PipelineSettings;
  let messageLane: ResolvedMessageLane | undefined;
  try {
    settings = resolveSettings(settingsInput);
    messageLane = resolveMessageLane(
      settingsInput,
      definition.messageLane ?? pipelineMessageLane,
      fields === undefined ? undefined : [...fields],
    );
  } catch (error) {
    throw error instanceof UnsafeSettingsError ? problem(error.message) : error;
  }
  if (forward?.maxInFlight !== undefined) {
    const capped = capForMaxInFlight(forward.maxInFlight, settings, messageLane);
    if (typeof capped === 'string') throw problem(capped);
    settings = capped.settings;
    messageLane = capped.messageLane;
  }
  return {
    name,
    entry: hasEntry ? definition.entry : undefined,
    forward,
    fields: fields === undefined ? undefined : [...new Set(fields)],
    numbers,
    wabas,
    keyNamespace: keyNamespace === '' ? undefined : keyNamespace,
    settings,
    statusLedger: definition.statusLedger,
    claimUnhandledEvents: definition.claimUnhandledEvents,
    memorySize: definition.memorySize,
    messageLane,
  };
}

/**
 * A forward subscriber's lanes with `maxConcurrency` capped at their share of `maxInFlight`
 * (contract/forwarding.ts); the problem as text when the bound cannot be honoured.
 */
function capForMaxInFlight(
  maxInFlight: number,
  settings: PipelineSettings,
  messageLane: ResolvedMessageLane | undefined,
): { settings: PipelineSettings; messageLane: ResolvedMessageLane | undefined } | string {
  const hasMessageLane = messageLane !== undefined;
  const problem = forwardInFlightProblem(maxInFlight, hasMessageLane ? 2 : 1);
  if (problem !== undefined) return problem;
  const cap = (lane: LaneName, laneSettings: PipelineSettings): PipelineSettings => ({
    ...laneSettings,
    maxConcurrency: forwardLaneInFlight(
      forwardInFlightShare(maxInFlight, lane, hasMessageLane),
      laneSettings.maxConcurrency,
    ).maxConcurrency,
  });
  return {
    settings: cap('status', settings),
    messageLane:
      messageLane === undefined
        ? undefined
        : { ...messageLane, settings: cap('message', messageLane.settings) },
  };
}

/** The ids of `numbers` or `wabas`, each once, in the order given; `undefined` when not given. */
function selectedIds(
  ids: readonly string[] | undefined,
  name: 'numbers' | 'wabas',
  problem: (text: string) => Error,
): readonly string[] | undefined {
  if (ids === undefined) return undefined;
  const found = Array.isArray(ids) ? idListProblem(name, ids) : `${name} must be a list of ids.`;
  if (found !== undefined) throw problem(found);
  return [...new Set(ids)];
}

export { wantsField };

/** The receiver's `SUBSCRIBER_QUEUES` value (CDK tokens in the URLs stay tokens inside the string). */
export function encodeSubscriberQueues(queues: readonly SubscriberQueue[]): string {
  return JSON.stringify(
    queues.map(({ name, queueUrl, fields, numbers, wabas, messageQueueUrl, messageLaneOrdered }) => ({
      name,
      queueUrl,
      fields,
      numbers,
      wabas,
      ...(messageQueueUrl === undefined
        ? {}
        : { messageQueueUrl, messageLaneOrdered: messageLaneOrdered === true }),
    })),
  );
}

/** Reads `SUBSCRIBER_QUEUES` back; a malformed value fails fast at the receiver's start. */
export function decodeSubscriberQueues(raw: string): SubscriberQueue[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw new Error('SUBSCRIBER_QUEUES must be a JSON array of {name, queueUrl, fields?}.');
  }
  if (!Array.isArray(parsed) || parsed.length === 0) {
    throw new Error('SUBSCRIBER_QUEUES must be a non-empty JSON array of {name, queueUrl, fields?}.');
  }
  return parsed.map((item: unknown, index) => {
    const entry = item as Partial<SubscriberQueue> | null;
    const listOk = (list: unknown) =>
      list === undefined || (Array.isArray(list) && list.every((item) => typeof item === 'string'));
    const fieldsOk = listOk(entry?.fields) && listOk(entry?.numbers) && listOk(entry?.wabas);
    const laneOk =
      entry?.messageQueueUrl === undefined ||
      (typeof entry.messageQueueUrl === 'string' &&
        entry.messageQueueUrl !== '' &&
        (entry.messageLaneOrdered === undefined || typeof entry.messageLaneOrdered === 'boolean'));
    if (
      typeof entry?.name !== 'string' ||
      typeof entry.queueUrl !== 'string' ||
      entry.queueUrl === '' ||
      !fieldsOk ||
      !laneOk
    ) {
      throw new Error(
        `SUBSCRIBER_QUEUES[${index}] must be {name, queueUrl, fields?, numbers?, wabas?, messageQueueUrl?, messageLaneOrdered?}.`,
      );
    }
    return {
      name: entry.name,
      queueUrl: entry.queueUrl,
      fields: entry.fields,
      ...(entry.numbers === undefined ? {} : { numbers: entry.numbers }),
      ...(entry.wabas === undefined ? {} : { wabas: entry.wabas }),
      ...(entry.messageQueueUrl === undefined
        ? {}
        : { messageQueueUrl: entry.messageQueueUrl, messageLaneOrdered: entry.messageLaneOrdered === true }),
    };
  });
}
