/**
 * What a subscriber receives, as ops says it: its `fields`, `numbers` and `wabas` (contract/event-origin.ts,
 * the receiver's and the consumer's own rule), and why an event is not among them. Pure.
 */
import {
  type EventOrigin,
  limitsOrigin,
  wantsField,
  wantsOrigin,
} from 'whatsapp-webhook-dedup/contract/event-origin';
import type { SubscriberTarget } from './ops-target.ts';

type Selection = Pick<SubscriberTarget, 'fields' | 'numbers' | 'wabas'>;

/** `numbers 1065…, 1077… and wabas 1022…`: the ids a subscriber is limited to; `undefined` without a limit. */
export function originLimits(subscriber: Selection): string | undefined {
  if (!limitsOrigin(subscriber)) return undefined;
  const parts: string[] = [];
  if (subscriber.numbers !== undefined) parts.push(`numbers ${subscriber.numbers.join(', ')}`);
  if (subscriber.wabas !== undefined) parts.push(`wabas ${subscriber.wabas.join(', ')}`);
  return parts.join(' and ');
}

/**
 * `phone number 1065… (WABA 1022…)`, `WABA 1022… (no phone number)`: where an event comes from. `exact: false`
 * (the ids a key names): an id not given is unknown rather than absent.
 */
export function originText(origin: Omit<EventOrigin, 'field'> & { readonly exact?: boolean }): string {
  const { phoneNumberId, wabaId } = origin;
  if (phoneNumberId !== undefined) {
    return `phone number ${phoneNumberId}${wabaId === undefined ? '' : ` (WABA ${wabaId})`}`;
  }
  if (origin.exact === false) return wabaId === undefined ? 'an unnamed origin' : `WABA ${wabaId}`;
  return wabaId === undefined ? 'no phone number and no WABA' : `WABA ${wabaId} (no phone number)`;
}

/**
 * Why the subscriber never receives an event of `origin`, as a clause (`field calls is not among its fields
 * (messages)`, `phone number 1077… (WABA 1022…) is outside its numbers 1065…`); `undefined` when it does.
 */
export function notReceivedBecause(subscriber: Selection, origin: EventOrigin): string | undefined {
  if (!wantsField(subscriber.fields, origin.field)) {
    return `field ${origin.field} is not among its fields (${subscriber.fields?.join(', ')})`;
  }
  if (!wantsOrigin(subscriber, origin)) {
    return `${originText(origin)} is outside its ${originLimits(subscriber)}`;
  }
  return undefined;
}
