/**
 * Subscribers for the smoke test's e2e run with numbers and wabas
 * (`LOCAL_SUBSCRIBERS=test/support/local-subscribers/smoke-selection-subscribers.ts`): `crm` (every event),
 * `tenant` (one phone number) and `brand` (one WABA), which a smoke body of the smoke test's own ids would
 * never reach.
 */
import type { SubscriberDefinitions } from '../../../contract/subscribers.ts';

const EVERY_EVENT = 'test/support/local-subscribers/every-event.ts';

/** The number and WABA of the project's webhook fixtures (cli/meta-traffic/webhook-bodies.ts). */
export const TENANT_NUMBER = '106540352242922';
export const BRAND_WABA = '102290129340398';

export const subscribers: SubscriberDefinitions = {
  crm: { entry: EVERY_EVENT, messageLane: { ordered: false } },
  tenant: { entry: EVERY_EVENT, numbers: [TENANT_NUMBER] },
  brand: { entry: EVERY_EVENT, wabas: [BRAND_WABA], messageLane: { ordered: false } },
};
