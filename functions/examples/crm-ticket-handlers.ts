/**
 * The example of docs/handlers.md, "Write your handler": open a CRM ticket for each inbound message, and
 * close the loop when the customer has read the reply. Compiled by `npm run typecheck`, never deployed.
 */
import { defineWebhookHandlers, RetryLater } from 'whatsapp-webhook-dedup/handlers';

const CRM_URL = process.env.CRM_URL ?? 'https://crm.example.com/api';

export const webhookHandlers = defineWebhookHandlers({
  async onMessage({ key, event, payload, customer, logger }) {
    const response = await fetch(`${CRM_URL}/tickets`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        // The event key is stable across Meta's retries: the CRM drops a second POST with the same key,
        // which also covers the rare case where a crashed worker's effect is run again (docs/consumer.md).
        'idempotency-key': key,
      },
      body: JSON.stringify({
        messageId: payload.id,
        // A customer with a username may come without a phone number: the CRM keeps both ids it gets.
        customerPhone: customer?.phoneNumber,
        customerUserId: customer?.userId,
        type: payload.type,
        wabaId: event.entryId,
      }),
    });
    if (response.status === 429 || response.status === 503) {
      // The CRM says when to come back (Retry-After, in seconds): the message returns then, counted as
      // RetriesDeferred rather than as a handler error.
      const afterSeconds = Math.max(1, Number(response.headers.get('retry-after')) || 60);
      throw new RetryLater({ afterSeconds, reason: `crm-${response.status}` });
    }
    // Throwing releases the claim; the message comes back after a backoff that grows with each attempt.
    if (!response.ok) throw new Error(`CRM answered ${response.status}`);
    logger.info('Ticket opened', { status: response.status });
  },

  async onStatus({ ledger, ledgerChange, payload }) {
    // A late `delivered` after `read` is merged into the ledger; act when THIS status moved it forward (every
    // attempt of this event sees the same ledgerChange, even if a later status became current meanwhile).
    if (ledgerChange !== 'advanced' || payload.status !== 'read') return;
    const response = await fetch(`${CRM_URL}/messages/${encodeURIComponent(String(payload.id))}/read`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ readAt: ledger.times.read }),
    });
    if (!response.ok) throw new Error(`CRM answered ${response.status}`);
  },

  // No onError / onManagementEvent: those events are acknowledged and counted, with no side effect.
});
