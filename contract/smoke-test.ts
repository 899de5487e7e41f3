/**
 * The smoke test's synthetic events (`npm run ops -- smoke`, docs/operations.md): how they are marked, so that
 * the consumer can tell handlers (`context.smokeTest`) and a handler never replies to a customer that does not
 * exist. Plain TypeScript: no AWS SDK, no functions/ code.
 */

/**
 * Every smoke-test wamid starts with this. Meta's wamids are `wamid.` followed by base64 (standard or URL-safe
 * alphabet), which has no `.`: `wamid.SMOKE_TEST.` can never begin a real one.
 */
export const SMOKE_TEST_WAMID_PREFIX = 'wamid.SMOKE_TEST.';

/**
 * The customer of a smoke test. +1 555-0100 to 555-0199 are reserved for fictional use in the North American
 * Numbering Plan (NANPA, "555 NXX line numbers"): no WhatsApp user has this number, so nothing sent to it can
 * reach a person.
 */
export const SMOKE_TEST_CUSTOMER_WA_ID = '15555550100';

/** The business number a smoke test is addressed to: another fictional number of the same range. */
export const SMOKE_TEST_DISPLAY_PHONE_NUMBER = '15555550199';

/**
 * The business phone number id of a smoke test: not digits, so no Graph API call can be made with it. A
 * subscriber limited to `numbers` never receives it: `ops smoke` addresses it a body of its own first number
 * instead (cli/ops/smoke/smoke-body.ts), the wamids still marking the events as a test.
 */
export const SMOKE_TEST_PHONE_NUMBER_ID = 'smoke-test-phone-number';

/** The `entry.id` (WABA id) of a smoke-test body; for a subscriber of `wabas` alone, its own first WABA. */
export const SMOKE_TEST_WABA_ID = 'smoke-test-waba';

/** Whether a wamid (a message's or a status's `id`) is a smoke test's. */
export function isSmokeTestWamid(id: unknown): boolean {
  return typeof id === 'string' && id.startsWith(SMOKE_TEST_WAMID_PREFIX);
}

/** A fresh smoke-test wamid; `runId` makes each run's keys new, so that no earlier claim absorbs them. */
export function smokeTestWamid(runId: string): string {
  return `${SMOKE_TEST_WAMID_PREFIX}${runId}`;
}
