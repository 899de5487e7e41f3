import { describe, expect, it } from 'vitest';
import { isWhatsAppWebhookField, WHATSAPP_WEBHOOK_FIELDS } from '../../../contract/meta-webhook-fields.ts';
import { isKnownField, KNOWN_FIELDS } from '../../../functions/events/field-rules.ts';

describe('the webhook fields Meta documents (contract/meta-webhook-fields.ts)', () => {
  it('every listed field has a key rule', () => {
    const withoutRule = WHATSAPP_WEBHOOK_FIELDS.filter((field) => !isKnownField(field));
    expect(withoutRule, 'listed fields without a key rule in functions/events/field-rules.ts').toEqual([]);
  });

  it('every field with a key rule is listed', () => {
    const unlisted = KNOWN_FIELDS.filter((field) => !isWhatsAppWebhookField(field));
    expect(unlisted, 'keyed fields missing from WHATSAPP_WEBHOOK_FIELDS').toEqual([]);
  });

  it('is sorted and holds each field once', () => {
    expect([...WHATSAPP_WEBHOOK_FIELDS]).toEqual([...new Set(WHATSAPP_WEBHOOK_FIELDS)].sort());
  });

  it('holds the Groups API fields and every other field Meta lists for webhook overrides', () => {
    for (const field of [
      'group_lifecycle_update',
      'group_participants_update',
      'group_settings_update',
      'group_status_update',
      'message_echoes',
      'messaging_handovers',
      'standby',
      'consumer_profile',
      'account_settings_update',
    ]) {
      expect(isWhatsAppWebhookField(field), field).toBe(true);
    }
    for (const field of [
      'marketing_mirror_update',
      'group_participant_update',
      'toString',
      '__proto__',
      '',
    ]) {
      expect(isWhatsAppWebhookField(field), field).toBe(false);
    }
  });
});
