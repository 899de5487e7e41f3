/** What `defineWebhookHandlers` refuses at import, before any event reaches a handler. */
import { describe, expect, it } from 'vitest';
import {
  defineWebhookHandlers,
  handlerFor,
  hasHandler,
  InvalidHandlersError,
  MAX_BURST_WINDOW_MS,
} from '../../../functions/consumer/handler-api.ts';

describe('defineWebhookHandlers', () => {
  it('refuses onMessage beside onConversationTurn: both would handle the same messages', () => {
    expect(() => defineWebhookHandlers({ onMessage: () => {}, onConversationTurn: () => {} })).toThrow(
      InvalidHandlersError,
    );
  });

  it('refuses a burst window without a turn handler, and one out of range', () => {
    expect(() => defineWebhookHandlers({ burstWindowMs: 1000, onMessage: () => {} })).toThrow(
      /only applies with onConversationTurn/,
    );
    for (const burstWindowMs of [-1, 1.5, MAX_BURST_WINDOW_MS + 1, Number.NaN]) {
      expect(() => defineWebhookHandlers({ burstWindowMs, onConversationTurn: () => {} })).toThrow(
        /burstWindowMs is/,
      );
    }
  });

  it('takes a turn handler with a window, and counts it as the messages’ side effect', () => {
    const handlers = defineWebhookHandlers({ burstWindowMs: 1500, onConversationTurn: () => {} });
    expect(hasHandler(handlers, { kind: 'message', field: 'messages' })).toBe(true);
    expect(hasHandler(handlers, { kind: 'status', field: 'messages' })).toBe(false);
    expect(
      hasHandler(defineWebhookHandlers({ onStatus: () => {} }), { kind: 'message', field: 'messages' }),
    ).toBe(false);
  });
});

describe('handlerFor: the Groups API fields', () => {
  const group = { kind: 'management', field: 'group_participants_update' } as const;
  const template = { kind: 'management', field: 'message_template_status_update' } as const;
  const onGroupEvent = () => {};
  const onManagementEvent = () => {};

  it('go to onGroupEvent, else to onManagementEvent, else nowhere', () => {
    expect(handlerFor({ onGroupEvent, onManagementEvent }, group)).toBe(onGroupEvent);
    expect(handlerFor({ onManagementEvent }, group)).toBe(onManagementEvent);
    expect(handlerFor({ onStatus: () => {} }, group)).toBeUndefined();
    expect(hasHandler({ onGroupEvent }, group)).toBe(true);
    expect(hasHandler({ onStatus: () => {} }, group)).toBe(false);
  });

  it('the other management fields never go to onGroupEvent', () => {
    expect(handlerFor({ onGroupEvent, onManagementEvent }, template)).toBe(onManagementEvent);
    expect(handlerFor({ onGroupEvent }, template)).toBeUndefined();
    expect(hasHandler({ onGroupEvent }, { kind: 'management', field: 'standby' })).toBe(false);
  });
});
