/**
 * The customer an event concerns, as handlers need it (docs/handlers.md, "Which id to reply to"). Since 2026
 * Meta names a customer by a business-scoped user id (BSUID) and sends the phone number only within 30 days of
 * the last exchange, so a handler must never read `from` alone. Pure.
 */
import { isJsonObject } from './key-parts.ts';
import type { JsonObject, JsonValue, WebhookEvent } from './types.ts';

/**
 * Where Meta's send API takes a customer: `to` for a phone number, `recipient` for a BSUID.
 *
 * @example
 * ```typescript
 * import type { SendAddress } from 'whatsapp-webhook-dedup/handlers';
 *
 * function textMessage(address: SendAddress, body: string) {
 *   return { messaging_product: 'whatsapp', ...address, type: 'text', text: { body } };
 * }
 * ```
 */
export type SendAddress = { readonly to: string } | { readonly recipient: string };

/**
 * A customer as the event names them. Either `phoneNumber` or `userId` is always there.
 *
 * @example
 * ```typescript
 * import { defineWebhookHandlers } from 'whatsapp-webhook-dedup/handlers';
 *
 * export const webhookHandlers = defineWebhookHandlers({
 *   async onMessage({ customer }) {
 *     if (customer === undefined) return;
 *     const message = { ...customer.address, type: 'text', text: { body: 'Hi' } };
 *     const body = JSON.stringify({ messaging_product: 'whatsapp', ...message });
 *     await fetch('https://graph.facebook.com/v26.0/PHONE_NUMBER_ID/messages', { method: 'POST', body });
 *   },
 * });
 * ```
 */
export interface Customer {
  /** The phone number (`wa_id`, `from`, `recipient_id`), when Meta sent it. */
  readonly phoneNumber: string | undefined;
  /** The business-scoped user id (`user_id`, `from_user_id`, `recipient_user_id`), e.g. `US.13491208655302741918`. */
  readonly userId: string | undefined;
  /** The parent BSUID (`parent_user_id`) of a business portfolio, when Meta sent one. */
  readonly parentUserId: string | undefined;
  /** `profile.username`, when the customer adopted one and Meta sent it. */
  readonly username: string | undefined;
  /** `profile.name`, when Meta sent it. */
  readonly name: string | undefined;
  /**
   * How to address a reply: `{ to }` with the phone number when the event has it, else `{ recipient }` with the
   * BSUID. Never put a BSUID in `to`: Meta answers 200 and drops the message.
   */
  readonly address: SendAddress;
}

interface CustomerIds {
  readonly phoneNumber: unknown;
  readonly userId: unknown;
  readonly parentUserId?: unknown;
  readonly profile?: unknown;
}

/** A customer from the ids an event carries, or `undefined` when it has neither a phone number nor a BSUID. */
export function customerFromIds({
  phoneNumber,
  userId,
  parentUserId,
  profile,
}: CustomerIds): Customer | undefined {
  const phone = idText(phoneNumber);
  const bsuid = idText(userId);
  if (phone === undefined && bsuid === undefined) return undefined;
  const profileObject = isJsonObject(profile) ? profile : {};
  return {
    phoneNumber: phone,
    userId: bsuid,
    parentUserId: idText(parentUserId),
    username: idText(profileObject.username),
    name: idText(profileObject.name),
    address: phone !== undefined ? { to: phone } : { recipient: bsuid as string },
  };
}

/**
 * The customer of an event: a message's sender (with their contact's profile), a status's recipient (a group
 * status's participant), a `user_preferences` item's user; `undefined` for events that concern no single
 * customer.
 */
export function customerOf(
  event: Pick<WebhookEvent, 'kind' | 'field' | 'payload' | 'value'>,
): Customer | undefined {
  const { payload } = event;
  switch (event.kind) {
    case 'message':
      return messageSender(payload, event.value);
    case 'status':
      return statusRecipient(payload);
    case 'management':
      if (event.field === 'user_preferences') {
        return customerFromIds({ phoneNumber: payload.wa_id, userId: payload.user_id });
      }
      return undefined;
    default:
      return undefined;
  }
}

function messageSender(message: JsonObject, value: JsonObject): Customer | undefined {
  const contacts = Array.isArray(value.contacts) ? value.contacts.filter(isJsonObject) : [];
  const from = idText(message.from);
  const fromUserId = idText(message.from_user_id);
  const contact =
    contacts.find((candidate) => fromUserId !== undefined && candidate.user_id === fromUserId) ??
    contacts.find((candidate) => from !== undefined && candidate.wa_id === from) ??
    (contacts.length === 1 && from === undefined && fromUserId === undefined ? contacts[0] : undefined);
  return customerFromIds({
    phoneNumber: from ?? contact?.wa_id,
    userId: fromUserId ?? contact?.user_id,
    parentUserId: contact?.parent_user_id,
    profile: contact?.profile,
  });
}

function statusRecipient(status: JsonObject): Customer | undefined {
  const participant = customerFromIds({
    phoneNumber: status.recipient_participant_id,
    userId: status.recipient_participant_user_id,
    parentUserId: status.recipient_participant_parent_user_id,
  });
  if (participant !== undefined) return participant;
  // A group send's status without a participant names the group, not a customer.
  if (status.recipient_type === 'group') return undefined;
  return customerFromIds({
    phoneNumber: status.recipient_id,
    userId: status.recipient_user_id,
    parentUserId: status.recipient_parent_user_id,
  });
}

function idText(value: JsonValue | unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}
