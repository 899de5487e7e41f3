/**
 * An item of `value.groups[]`, the one event of the Groups API fields (docs/design.md §1): which customers it
 * names, for its key and for `onGroupEvent`. Meta sends one item per notification, and one item may name
 * several customers (a bulk approval, a removal of several participants, some of which failed). Pure.
 */
import { type Customer, customerFromIds } from './customer.ts';
import { isJsonObject, renderKeyPart } from './key-parts.ts';
import type { JsonObject, JsonValue } from './types.ts';

/** The webhook fields of the Groups API: one event per item of `value.groups[]`, handled by `onGroupEvent`. */
export const GROUP_FIELDS = [
  'group_lifecycle_update',
  'group_participants_update',
  'group_settings_update',
  'group_status_update',
] as const;

export type GroupField = (typeof GROUP_FIELDS)[number];

const GROUP_FIELD_SET: ReadonlySet<string> = new Set(GROUP_FIELDS);

export function isGroupField(field: string): field is GroupField {
  return GROUP_FIELD_SET.has(field);
}

/**
 * Where an item names a customer: `added` (`added_participants`), `removed` (`removed_participants`),
 * `failed` (`failed_participants`: a removal that did not happen), or `requester` (a join request's customer,
 * on the item itself).
 */
export type GroupCustomerList = 'added' | 'removed' | 'failed' | 'requester';

const PARTICIPANT_LISTS: readonly (readonly [member: string, list: GroupCustomerList])[] = [
  ['added_participants', 'added'],
  ['removed_participants', 'removed'],
  ['failed_participants', 'failed'],
];

/** One customer as the item names them, before any choice of id. */
export interface NamedGroupCustomer {
  readonly list: GroupCustomerList;
  /** The participant object, or the item itself for a join request's requester. */
  readonly source: JsonValue;
}

/**
 * Every customer the item names, list by list (`added`, `removed`, `failed`), then the requester on the item
 * itself when it has a `wa_id` or a `user_id`. A list member that is not an object (no documented shape) is
 * still named, so that it still tells two items apart.
 */
export function customersNamedBy(item: JsonObject): NamedGroupCustomer[] {
  const named: NamedGroupCustomer[] = [];
  for (const [member, list] of PARTICIPANT_LISTS) {
    const participants = item[member];
    if (participants === undefined || participants === null) continue;
    for (const source of Array.isArray(participants) ? participants : [participants]) {
      named.push({ list, source });
    }
  }
  if (!isAbsent(item.wa_id) || !isAbsent(item.user_id)) named.push({ list: 'requester', source: item });
  return named;
}

/**
 * The id a key names the customer by: `wa_id` (the phone number) else `user_id` (the BSUID) else `input` (what
 * the business sent in its request: either of the two), each read when the one before is missing, null or
 * empty, as docs/design.md §1 reads every customer.
 */
function keyId(source: JsonValue): unknown {
  if (!isJsonObject(source)) return source;
  for (const member of ['wa_id', 'user_id', 'input']) {
    if (!isAbsent(source[member])) return source[member];
  }
  return source.wa_id;
}

/**
 * The customers part of a `group_participants_update` key: each customer as `<list>=<id>`, sorted and joined
 * with `,`, so that the key does not depend on the order in which Meta lists them; `-` when the item names
 * nobody. Each id is rendered as every key part is (`:` and `%` percent-encoded, `-` for missing) and its `,`
 * is encoded as `%2C`, so that no id can pass for two.
 *
 * @example
 * groupCustomersKeyPart({ removed_participants: [{ input: '16505552345' }], failed_participants: [{ input: 'US.7' }] })
 * // 'failed=US.7,removed=16505552345'
 */
export function groupCustomersKeyPart(item: JsonObject): string {
  const customers = customersNamedBy(item).map(
    ({ list, source }) => `${list}=${renderKeyPart(keyId(source)).replaceAll(',', '%2C')}`,
  );
  return customers.length === 0 ? '-' : customers.sort().join(',');
}

/**
 * A customer a group item names, with where it names them.
 *
 * @example
 * ```typescript
 * import { defineWebhookHandlers } from 'whatsapp-webhook-dedup/handlers';
 *
 * export const webhookHandlers = defineWebhookHandlers({
 *   async onGroupEvent({ groupId, customers, logger }) {
 *     const removed = customers.filter(({ list }) => list === 'removed');
 *     logger.info('Group members removed', { groupId: groupId ?? '-', count: removed.length });
 *   },
 * });
 * ```
 */
export interface GroupCustomer extends Customer {
  readonly list: GroupCustomerList;
  /** `input`: the phone number or BSUID the business's request named the customer by, when Meta echoes it. */
  readonly input: string | undefined;
}

/**
 * A business-scoped user id: a two-letter country code, a period, an alphanumeric string
 * (`US.13491208655302741918`). Only used to tell what a bare `input` is; ids Meta labels are taken as labelled.
 */
const BSUID_PATTERN = /^[A-Z]{2}\.[A-Za-z0-9]+$/;

/**
 * The customers of a group item as handlers need them, in the item's order (lists, then the requester). A
 * participant known only by `input` (a business removal) is named by it: as a BSUID when it has a BSUID's
 * shape, else as a phone number. A participant with no id at all is left out (its item is in `payload`).
 */
export function groupCustomersOf(item: JsonObject): GroupCustomer[] {
  const customers: GroupCustomer[] = [];
  for (const { list, source } of customersNamedBy(item)) {
    if (!isJsonObject(source)) continue;
    const input = typeof source.input === 'string' && source.input !== '' ? source.input : undefined;
    const labelled = !isAbsent(source.wa_id) || !isAbsent(source.user_id);
    const inputIsBsuid = input !== undefined && BSUID_PATTERN.test(input);
    const customer = customerFromIds({
      phoneNumber: labelled ? source.wa_id : inputIsBsuid ? undefined : input,
      userId: labelled ? source.user_id : inputIsBsuid ? input : undefined,
      parentUserId: source.parent_user_id,
      profile: { username: source.username },
    });
    if (customer !== undefined) customers.push({ ...customer, list, input });
  }
  return customers;
}

function isAbsent(value: unknown): boolean {
  return value === undefined || value === null || value === '';
}

/** What `onGroupEvent` receives of an item beside the usual context (functions/consumer/handler-api.ts). */
export interface GroupEventDetails {
  readonly groupId: string | undefined;
  readonly type: string | undefined;
  readonly requestId: string | undefined;
  readonly joinRequestId: string | undefined;
  readonly customers: readonly GroupCustomer[];
}

/** The group, type, request ids and customers of an item of `value.groups[]`. */
export function groupEventDetails(item: JsonObject): GroupEventDetails {
  return {
    groupId: text(item.group_id),
    type: text(item.type),
    requestId: text(item.request_id),
    joinRequestId: text(item.join_request_id),
    customers: groupCustomersOf(item),
  };
}

function text(value: JsonValue | undefined): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}
