/**
 * The smoke test's webhook bodies: a valid WhatsApp Cloud API envelope (the `messages` field as Meta's webhook
 * reference shows it) with one inbound text message, which goes to each subscriber's message lane, and one
 * status of an outbound message, which goes to its status lane, so that one run checks both lanes. Its wamids
 * are marked as a test (contract/smoke-test.ts); the customer's number is a fictional one.
 *
 * A body goes to the smoke test's own phone number and WABA, which only subscribers without `numbers` or
 * `wabas` receive; a subscriber limited to them is reached through the receiver's routing by a body addressed
 * to one of its own (`smokeAddresses`).
 */
import { limitsOrigin, wantsOrigin } from 'whatsapp-webhook-dedup/contract/event-origin';
import {
  SMOKE_TEST_CUSTOMER_WA_ID,
  SMOKE_TEST_DISPLAY_PHONE_NUMBER,
  SMOKE_TEST_PHONE_NUMBER_ID,
  SMOKE_TEST_WABA_ID,
  smokeTestWamid,
} from 'whatsapp-webhook-dedup/contract/smoke-test';
import type { SubscriberTarget } from '../target/ops-target.ts';

/** Where a smoke body is addressed: its `metadata.phone_number_id` and its `entry.id`. */
export interface SmokeAddress {
  readonly phoneNumberId: string;
  readonly wabaId: string;
  /**
   * The subscriber limited to numbers or wabas the address was chosen for (its first number, else its first
   * WABA); `undefined`: the smoke test's own ids.
   */
  readonly chosenFor: string | undefined;
}

/** The smoke test's own ids: every subscriber without `numbers` and `wabas` receives a body of any address. */
export const DEFAULT_SMOKE_ADDRESS: SmokeAddress = {
  phoneNumberId: SMOKE_TEST_PHONE_NUMBER_ID,
  wabaId: SMOKE_TEST_WABA_ID,
  chosenFor: undefined,
};

/**
 * The addresses whose bodies reach every one of `receiving` through the receiver's routing, as few as this
 * greedy pass finds: for each subscriber limited to numbers or wabas that no address so far reaches, its first
 * number (under the smoke test's WABA, so that no subscriber of a real WABA gets it), or with wabas only its
 * first WABA (with the smoke test's number). A body of any address reaches the subscribers without a limit
 * too, so the smoke test's own address is used only when no subscriber is limited.
 */
export function smokeAddresses(
  receiving: readonly Pick<SubscriberTarget, 'name' | 'numbers' | 'wabas'>[],
): SmokeAddress[] {
  const addresses: SmokeAddress[] = [];
  for (const subscriber of receiving) {
    if (!limitsOrigin(subscriber) || addresses.some((address) => wantsOrigin(subscriber, address))) continue;
    const number = subscriber.numbers?.[0];
    const waba = subscriber.wabas?.[0];
    if (number !== undefined) {
      addresses.push({ phoneNumberId: number, wabaId: SMOKE_TEST_WABA_ID, chosenFor: subscriber.name });
    } else if (waba !== undefined) {
      addresses.push({ phoneNumberId: SMOKE_TEST_PHONE_NUMBER_ID, wabaId: waba, chosenFor: subscriber.name });
    }
  }
  return addresses.length === 0 ? [DEFAULT_SMOKE_ADDRESS] : addresses;
}

export interface SmokeBody {
  /** The exact bytes to sign and send. */
  readonly body: string;
  /** `msg:<wamid>`: the inbound message, handled in the message lane. */
  readonly messageKey: string;
  /** `st:<wamid>:delivered`: the status, handled in the status lane. */
  readonly statusKey: string;
  readonly address: SmokeAddress;
}

/**
 * `runId` (letters, digits, `-`) makes the keys new on every run; `nowMs` gives the events their timestamps;
 * `address` the business phone number and WABA they belong to.
 */
export function smokeBody(
  runId: string,
  nowMs: number,
  address: SmokeAddress = DEFAULT_SMOKE_ADDRESS,
): SmokeBody {
  const inbound = smokeTestWamid(runId);
  const outbound = smokeTestWamid(`${runId}.reply`);
  const timestamp = String(Math.floor(nowMs / 1000));
  const value = (items: Record<string, unknown>) => ({
    messaging_product: 'whatsapp',
    metadata: {
      display_phone_number: SMOKE_TEST_DISPLAY_PHONE_NUMBER,
      phone_number_id: address.phoneNumberId,
    },
    ...items,
  });
  const envelope = {
    object: 'whatsapp_business_account',
    entry: [
      {
        id: address.wabaId,
        changes: [
          {
            field: 'messages',
            value: value({
              contacts: [{ profile: { name: 'Smoke test' }, wa_id: SMOKE_TEST_CUSTOMER_WA_ID }],
              messages: [
                {
                  from: SMOKE_TEST_CUSTOMER_WA_ID,
                  id: inbound,
                  timestamp,
                  type: 'text',
                  text: { body: 'smoke test' },
                },
              ],
            }),
          },
          {
            field: 'messages',
            value: value({
              statuses: [
                {
                  id: outbound,
                  status: 'delivered',
                  timestamp,
                  recipient_id: SMOKE_TEST_CUSTOMER_WA_ID,
                },
              ],
            }),
          },
        ],
      },
    ],
  };
  return {
    body: JSON.stringify(envelope),
    messageKey: `msg:${inbound}`,
    statusKey: `st:${outbound}:delivered`,
    address,
  };
}
