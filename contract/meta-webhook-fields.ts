/**
 * Every webhook field Meta documents for the `whatsapp_business_account` object: what a subscriber without a
 * `fields` filter wants, so what `npm run ops -- meta subscribe` subscribes the app to for it, and the only names
 * `--fields` and a subscriber's `fields` accept. Sources: the field table of Meta's webhooks overview
 * (https://developers.facebook.com/documentation/business-messaging/whatsapp/webhooks/overview), each reference
 * page (https://developers.facebook.com/documentation/business-messaging/whatsapp/webhooks/reference/), the
 * Groups API's webhooks page (https://developers.facebook.com/documentation/business-messaging/whatsapp/groups/webhooks),
 * the webhook overrides page (https://developers.facebook.com/documentation/business-messaging/whatsapp/webhooks/override)
 * and the call settings page (`account_settings_update`). Every one of them has a key rule in docs/design.md §1
 * and no other field has (test/unit/contract/meta-webhook-fields.test.ts keeps them equal). Plain TypeScript: no
 * AWS SDK.
 */
export const WHATSAPP_WEBHOOK_FIELDS = [
  'account_alerts',
  'account_review_update',
  'account_settings_update',
  'account_update',
  'automatic_events',
  'business_capability_update',
  'calls',
  'consumer_profile',
  'flows',
  'group_lifecycle_update',
  'group_participants_update',
  'group_settings_update',
  'group_status_update',
  'history',
  'message_echoes',
  'message_template_components_update',
  'message_template_quality_update',
  'message_template_status_update',
  'messages',
  'messaging_handovers',
  'partner_solutions',
  'payment_configuration_update',
  'phone_number_name_update',
  'phone_number_quality_update',
  'security',
  'smb_app_state_sync',
  'smb_message_echoes',
  'standby',
  'template_category_update',
  'user_preferences',
] as const;

export type WhatsAppWebhookField = (typeof WHATSAPP_WEBHOOK_FIELDS)[number];

const FIELD_SET: ReadonlySet<string> = new Set(WHATSAPP_WEBHOOK_FIELDS);

/** Whether Meta documents `field` for `whatsapp_business_account` webhooks. */
export function isWhatsAppWebhookField(field: string): field is WhatsAppWebhookField {
  return FIELD_SET.has(field);
}

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
