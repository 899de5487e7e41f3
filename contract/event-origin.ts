/**
 * Where an event comes from, and which subscribers want it (docs/design.md §7): a subscriber may be limited to
 * webhook `fields`, to phone `numbers` and to WhatsApp Business Accounts (`wabas`), and the receiver and the
 * consumer apply the same rule. Plain TypeScript: no aws-cdk-lib, no AWS SDK.
 */

/** What an event (or an id-less item, an unknown field's change, a malformed part) is routed on. */
export interface EventOrigin {
  /** The webhook field of its change, `-` above a change. */
  readonly field: string;
  /** Its change's business phone number id ({@link phoneNumberIdOf}). */
  readonly phoneNumberId: string | undefined;
  /** Its entry's `id` (the WABA id) when that is a non-empty string. */
  readonly wabaId: string | undefined;
}

/** A subscriber's selection: each list absent means no limit on that axis. */
export interface EventSelection {
  readonly fields?: readonly string[] | undefined;
  /** Phone number ids: the events of these numbers. */
  readonly numbers?: readonly string[] | undefined;
  /** WABA ids: every event of these accounts, numbers and account-level fields alike. */
  readonly wabas?: readonly string[] | undefined;
}

/**
 * Phone number ids and WABA ids are Meta's numeric ids, written as strings of digits; the bound keeps the
 * receiver's environment within Lambda's 4 KB (see {@link MAX_SELECTED_IDS}).
 */
export const META_ID_PATTERN = /^[0-9]{1,32}$/;

/**
 * The most `numbers` and `wabas` all subscribers may declare together: every id travels in the receiver's
 * `SUBSCRIBER_QUEUES` variable, and Lambda holds a function's whole environment to 4 KB. 100 ids of Meta's
 * 15 to 16 digits take about 2 KB, leaving the rest to the queue URLs and settings.
 */
export const MAX_SELECTED_IDS = 100;

/**
 * Whether a subscriber limited to `numbers` and `wabas` wants an event of `origin`. Without either list, every
 * origin. With them, an event of a listed number, or of a listed WABA; an event without a phone number (an
 * account-level field such as `message_template_status_update`) only through its WABA, so that a subscriber
 * limited to one number never sees another tenant's account events.
 */
export function wantsOrigin(selection: EventSelection, origin: Omit<EventOrigin, 'field'>): boolean {
  const { numbers, wabas } = selection;
  if (numbers === undefined && wabas === undefined) return true;
  if (origin.phoneNumberId !== undefined && numbers?.includes(origin.phoneNumberId) === true) return true;
  return origin.wabaId !== undefined && wabas?.includes(origin.wabaId) === true;
}

/** Whether a subscriber with `selection` receives an event of `field` (its fields, every field without). */
export function wantsField(fields: readonly string[] | undefined, field: string): boolean {
  return fields === undefined || fields.includes(field);
}

/** Both rules together: the event's field, and its number or account. */
export function wantsEvent(selection: EventSelection, origin: EventOrigin): boolean {
  return wantsField(selection.fields, origin.field) && wantsOrigin(selection, origin);
}

/** Whether a selection limits numbers or accounts at all. */
export function limitsOrigin(selection: EventSelection): boolean {
  return selection.numbers !== undefined || selection.wabas !== undefined;
}

/**
 * Checks one list of `numbers` or `wabas` as given in a subscriber's definition: the problem, or `undefined`.
 * An empty list would receive nothing, so it is refused rather than read as "all".
 */
export function idListProblem(name: 'numbers' | 'wabas', ids: readonly unknown[]): string | undefined {
  if (ids.length === 0) {
    return `${name} is empty, so it would receive nothing: list its ids, or leave ${name} out for all.`;
  }
  const bad = ids.filter((id) => typeof id !== 'string' || !META_ID_PATTERN.test(id));
  if (bad.length > 0) {
    return `${name} holds ${bad
      .slice(0, 3)
      .map((id) => JSON.stringify(id))
      .join(', ')}: give Meta's ids as strings of digits (a phone number id, not the phone number).`;
  }
  return undefined;
}

/** The origin of a change: its number from `value.metadata.phone_number_id`, its account from `entry.id`. */
export function originOf(field: string, entry: unknown, value: unknown): EventOrigin {
  return { field, phoneNumberId: phoneNumberIdOf(value), wabaId: idOf(memberOf(entry, 'id')) };
}

/**
 * The business phone number a change is about, when it names one by id (a non-empty string, as Meta sends
 * it): `value.metadata.phone_number_id` for `messages` and the fields shaped like it, `value.recipient` for
 * `messaging_handovers`, `value.phone_number_settings` for `account_settings_update`. Fields that name a
 * number only by its display number (`phone_number_name_update`, `phone_number_quality_update`) have none:
 * they reach a subscriber through its `wabas`.
 */
export function phoneNumberIdOf(value: unknown): string | undefined {
  for (const holder of NUMBER_HOLDERS) {
    const id = idOf(memberOf(memberOf(value, holder), 'phone_number_id'));
    if (id !== undefined) return id;
  }
  return undefined;
}

const NUMBER_HOLDERS = ['metadata', 'recipient', 'phone_number_settings'] as const;

function memberOf(object: unknown, name: string): unknown {
  return typeof object === 'object' && object !== null && !Array.isArray(object)
    ? (object as Record<string, unknown>)[name]
    : undefined;
}

function idOf(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}
