/**
 * A forward subscriber for the local stack's tests
 * (`LOCAL_SUBSCRIBERS=test/support/local-subscribers/forward-subscribers.ts`): `chatwoot` forwards every event
 * in Meta's shape to the URL the test's destination listens on (`E2E_FORWARD_URL`), signed with the local app
 * secret; `strict` forwards messages to a path where that destination refuses them; `batched` forwards each
 * delivery part's messages and statuses in one body (`batch`).
 */
import type { SubscriberDefinitions } from '../../../contract/subscribers.ts';

const url = process.env.E2E_FORWARD_URL;
if (url === undefined) throw new Error('E2E_FORWARD_URL names the destination the test listens on.');

export const subscribers: SubscriberDefinitions = {
  chatwoot: { forward: { url, timeoutSeconds: 5 } },
  // Its destination refuses every event; a short backoff lets it reach the DLQ within the test.
  strict: { forward: { url: `${url}/refuse` }, fields: ['messages'], settings: { retryBaseDelaySeconds: 1 } },
  // One POST per delivery part, for a destination that reads every event of a body.
  batched: { forward: { url: `${url}/batched`, batch: true }, fields: ['messages'] },
};
