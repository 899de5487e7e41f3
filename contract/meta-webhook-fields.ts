/**
 * The webhook fields Meta offers for the `whatsapp_business_account` object: what a subscriber without a
 * `fields` filter wants, so what `npm run ops -- meta subscribe` subscribes the app to for it. Source: the
 * field table of Meta's webhooks overview
 * (https://developers.facebook.com/documentation/business-messaging/whatsapp/webhooks/overview) and the
 * fields of each reference page (https://developers.facebook.com/documentation/business-messaging/whatsapp/webhooks/reference/),
 * the same fields as docs/design.md §1 derives keys for (test/unit/ops/meta-fields-and-arguments.test.ts keeps them equal).
 * Plain TypeScript: no AWS SDK.
 */
export const WHATSAPP_WEBHOOK_FIELDS = [
  'account_alerts',
  'account_review_update',
  'account_update',
  'automatic_events',
  'business_capability_update',
  'calls',
  'flows',
  'history',
  'message_template_components_update',
  'message_template_quality_update',
  'message_template_status_update',
  'messages',
  'partner_solutions',
  'payment_configuration_update',
  'phone_number_name_update',
  'phone_number_quality_update',
  'security',
  'smb_app_state_sync',
  'smb_message_echoes',
  'template_category_update',
  'user_preferences',
] as const;

/**
 * The fields the app must be subscribed to so that every subscriber gets what it wants: the union of their
 * `fields`, every field for a subscriber without a filter. Sorted, for stable requests and output.
 */
export function wantedWebhookFields(subscriberFields: readonly (readonly string[] | undefined)[]): string[] {
  const union = new Set<string>();
  for (const fields of subscriberFields) {
    for (const field of fields ?? WHATSAPP_WEBHOOK_FIELDS) union.add(field);
  }
  return [...union].sort();
}
