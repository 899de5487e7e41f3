/**
 * The unit of deduplication: one event inside a webhook body (docs/design.md §1), never the HTTP request.
 */
import type { LosslessNumber } from 'lossless-json';

/**
 * A JSON value as decoded by the lossless parser: numbers that do not round-trip through a JS number
 * (ids above 2^53, `1.50`, `1e3`) keep their lexeme in a `LosslessNumber`. `String()` gives either kind's
 * digits as Meta sent them; `JSON.stringify` would write a `LosslessNumber` as an object.
 *
 * @example
 * ```typescript
 * import { defineWebhookHandlers } from 'whatsapp-webhook-dedup/handlers';
 *
 * export const webhookHandlers = defineWebhookHandlers({
 *   async onError({ payload, logger }) {
 *     logger.error('WhatsApp error', { code: String(payload.code) });
 *   },
 * });
 * ```
 */
export type JsonValue = string | number | boolean | null | LosslessNumber | JsonObject | JsonValue[];
export interface JsonObject {
  [key: string]: JsonValue;
}

/** `messages` splits into three kinds; every other documented field is a management event. */
export type EventKind = 'message' | 'status' | 'error' | 'management';

/**
 * One event of a webhook body, as every handler context carries it in `event`.
 *
 * @example
 * ```typescript
 * import { defineWebhookHandlers, type WebhookEvent } from 'whatsapp-webhook-dedup/handlers';
 *
 * function describe(event: WebhookEvent): string {
 *   return `${event.kind} of ${event.field}, key ${event.key}`;
 * }
 * export const webhookHandlers = defineWebhookHandlers({
 *   onManagementEvent: ({ event, logger }) => logger.info(describe(event)),
 * });
 * ```
 */
export interface WebhookEvent {
  /** The dedup key of docs/design.md §1, e.g. `msg:wamid.HBg…` or `st:wamid.HBg…:read`. */
  readonly key: string;
  /** The webhook field the change arrived under (`messages`, `calls`, `account_update`, …). */
  readonly field: string;
  readonly kind: EventKind;
  /** The CloudWatch `Field` dimension (docs/design.md §5): `message`, `status`, `error`, or the field itself. */
  readonly metricField: string;
  /** `entry.id` (the WABA id) rendered as in keys: verbatim, `-` when missing. */
  readonly entryId: string;
  /** The WABA id (`entry.id`) when it is a non-empty string. */
  readonly wabaId: string | undefined;
  /** The business phone number's id (`value.metadata.phone_number_id`) when it is a non-empty string. */
  readonly phoneNumberId: string | undefined;
  /** The item the key was derived from: a message, a status, an error, a list item, or the change value. */
  readonly payload: JsonObject;
  /** The whole `change.value` the event came from (metadata, contacts, …) for handlers that need context. */
  readonly value: JsonObject;
  /** The whole `entry` the event came from (`id`, `time`, `changes`), as parsed. */
  readonly entry: JsonObject;
}

/** Where an item that is no event comes from, as `WebhookEvent` says it: what subscribers are routed on. */
interface ItemOrigin {
  readonly wabaId: string | undefined;
  readonly phoneNumberId: string | undefined;
}

export interface UnknownFieldChange extends ItemOrigin {
  readonly field: string;
  readonly entryId: string;
}

/** A part of an otherwise valid envelope that could not yield an event (an entry that is not an object, a
 * change without `value`, a list item that is not an object…). Reported so the caller can log and count it;
 * `problem` names the shape, never the content. */
export interface MalformedPart extends ItemOrigin {
  readonly entryId: string;
  /** The change's field, or `-` when the part sits above the change or the field is not a string. */
  readonly field: string;
  readonly problem: string;
}

/**
 * A message or status without a usable `id`: no identity, so no key (docs/design.md §1, "No identity, no key").
 * It is never run and never deduplicated against another one: the record holding it is quarantined.
 */
export interface UnkeyedEvent extends ItemOrigin {
  readonly entryId: string;
  readonly field: string;
  readonly kind: EventKind;
  readonly metricField: string;
  /** What is missing, never the content: `message without a usable id`. */
  readonly problem: string;
}

export type BodyRejection = 'invalid-json' | 'not-whatsapp-envelope';

export type EventExtraction =
  | {
      readonly ok: true;
      readonly events: WebhookEvent[];
      readonly unknownFields: UnknownFieldChange[];
      readonly malformed: MalformedPart[];
      readonly unkeyed: UnkeyedEvent[];
    }
  | { readonly ok: false; readonly reason: BodyRejection; readonly detail: string };
