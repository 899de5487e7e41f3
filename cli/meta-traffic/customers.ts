/**
 * Customers as Meta names them since 2026 (docs/design.md §1, "Customers"): by a business-scoped user id
 * (BSUID), the phone number only within 30 days of the last exchange. The traffic of the outage drill, the
 * protocol checker and the capacity simulation mixes three kinds, so that conversation ids
 * (`<phone_number_id>:<BSUID else phone number>`, §8) come out as they will:
 *
 * - `phone`: the phone number alone, as before BSUIDs (`from`, the contact's `wa_id`, `recipient_id`);
 * - `username`: the BSUID alone (`from_user_id`, the contact's `user_id` and `profile.username`,
 *   `recipient_user_id`), never the phone number;
 * - `phone-comes-and-goes`: the BSUID in every event, the phone number in some and not in others.
 *
 * Ids are derived from a customer's serial, never drawn, so that a generator that names its customers this way
 * keeps every draw of its seed.
 */

export const CUSTOMER_KINDS = ['phone', 'username', 'phone-comes-and-goes'] as const;
export type CustomerKind = (typeof CUSTOMER_KINDS)[number];

/** Of every ten serials, two are `username` customers, two `phone-comes-and-goes`, six `phone`. */
export function customerKindOf(serial: number): CustomerKind {
  const tenth = serial % 10;
  if (tenth < 2) return 'username';
  return tenth < 4 ? 'phone-comes-and-goes' : 'phone';
}

/** What one event names a customer by: a phone number, a BSUID, or both. */
export interface CustomerIds {
  readonly phone?: string;
  readonly bsuid?: string;
  /** `profile.username`, with the BSUID. */
  readonly username?: string;
}

/** A BSUID shaped like Meta's (`US.13491208655302741918`), one per serial. */
export function bsuidOf(serial: number): string {
  return `US.1349120865${String(serial).padStart(10, '0')}`;
}

/**
 * The ids an event of this customer carries. `phoneCame` says, for a customer whose phone number comes and goes,
 * whether it came with this event; the other kinds ignore it.
 */
export function customerIds(
  kind: CustomerKind,
  customer: { readonly serial: number; readonly phone: string },
  phoneCame: boolean,
): CustomerIds {
  if (kind === 'phone') return { phone: customer.phone };
  const named = { bsuid: bsuidOf(customer.serial), username: `customer${customer.serial}` };
  return kind === 'phone-comes-and-goes' && phoneCame ? { phone: customer.phone, ...named } : named;
}

/** The message's contact, as Meta lists it: `wa_id` only when the phone number came. */
export function contactOf(ids: CustomerIds, name: string): Record<string, unknown> {
  return {
    profile: { name, ...(ids.username !== undefined && { username: ids.username }) },
    ...(ids.phone !== undefined && { wa_id: ids.phone }),
    ...(ids.bsuid !== undefined && { user_id: ids.bsuid }),
  };
}
