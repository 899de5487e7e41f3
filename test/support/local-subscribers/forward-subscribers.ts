/**
 * A forward subscriber for the local stack's tests
 * (`LOCAL_SUBSCRIBERS=test/support/local-subscribers/forward-subscribers.ts`): `chatwoot` forwards every event
 * in Meta's shape to the URL the test's destination listens on (`E2E_FORWARD_URL`), signed with the local app
 * secret.
 */
import type { SubscriberDefinitions } from '../../../contract/subscribers.ts';

const url = process.env.E2E_FORWARD_URL;
if (url === undefined) throw new Error('E2E_FORWARD_URL names the destination the test listens on.');

export const subscribers: SubscriberDefinitions = {
  chatwoot: { forward: { url, timeoutSeconds: 5 } },
};
