/** What `defineWebhookHandlers` refuses at import, before any event reaches a handler. */
import { describe, expect, it } from 'vitest';
import {
  defineWebhookHandlers,
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
    expect(hasHandler(handlers, 'message')).toBe(true);
    expect(hasHandler(handlers, 'status')).toBe(false);
    expect(hasHandler(defineWebhookHandlers({ onStatus: () => {} }), 'message')).toBe(false);
  });
});
