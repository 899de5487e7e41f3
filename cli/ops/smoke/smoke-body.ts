/**
 * The smoke test's webhook body: a valid WhatsApp Cloud API envelope (the `messages` field as Meta's webhook
 * reference shows it) with one inbound text message, which goes to each subscriber's message lane, and one
 * status of an outbound message, which goes to its status lane, so that one run checks both lanes. Every id
 * is marked as a test (contract/smoke-test.ts); the customer's number is a fictional one.
 */
import {
  SMOKE_TEST_CUSTOMER_WA_ID,
  SMOKE_TEST_DISPLAY_PHONE_NUMBER,
  SMOKE_TEST_PHONE_NUMBER_ID,
  SMOKE_TEST_WABA_ID,
  smokeTestWamid,
} from 'whatsapp-webhook-dedup/contract/smoke-test';

export interface SmokeBody {
  /** The exact bytes to sign and send. */
  readonly body: string;
  /** `msg:<wamid>`: the inbound message, handled in the message lane. */
  readonly messageKey: string;
  /** `st:<wamid>:delivered`: the status, handled in the status lane. */
  readonly statusKey: string;
}

/** `runId` (letters, digits, `-`) makes the keys new on every run; `nowMs` gives the events their timestamps. */
export function smokeBody(runId: string, nowMs: number): SmokeBody {
  const inbound = smokeTestWamid(runId);
  const outbound = smokeTestWamid(`${runId}.reply`);
  const timestamp = String(Math.floor(nowMs / 1000));
  const value = (items: Record<string, unknown>) => ({
    messaging_product: 'whatsapp',
    metadata: {
      display_phone_number: SMOKE_TEST_DISPLAY_PHONE_NUMBER,
      phone_number_id: SMOKE_TEST_PHONE_NUMBER_ID,
    },
    ...items,
  });
  const envelope = {
    object: 'whatsapp_business_account',
    entry: [
      {
        id: SMOKE_TEST_WABA_ID,
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
  };
}
