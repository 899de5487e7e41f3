/** The message lane's settings and the conversation id (contract/lanes.ts, docs/design.md §8). */
import { describe, expect, it } from 'vitest';
import {
  conversationId,
  FIFO_MAX_BATCH_SIZE,
  MIN_ORDERED_LANE_OUTAGE_RIDDEN_OUT_SECONDS,
  ORDERED_LANE_REDRIVE_MARGIN,
  ORDERED_MESSAGE_LANE_RETRY,
  redriveMaxReceiveCount,
  resolveMessageLane,
} from '../../../contract/lanes.ts';
import { outageRiddenOutSeconds } from '../../../contract/retry-budget.ts';
import { resolveSettings, UnsafeSettingsError } from '../../../contract/settings.ts';
import { decodeSubscriberQueues, encodeSubscriberQueues } from '../../../contract/subscribers.ts';

describe('conversationId', () => {
  it('is the phone number id and the customer, with - for what cannot be read', () => {
    expect(conversationId('106540352242922', '16505551234')).toBe('106540352242922:16505551234');
    expect(conversationId('106540352242922', undefined)).toBe('106540352242922:-');
    expect(conversationId(undefined, '')).toBe('-:-');
    expect(conversationId(106540352242922, { id: 1 })).toBe('-:-');
  });
});

describe('resolveMessageLane', () => {
  it('gives a subscriber of every field an ordered lane without window, with a chat’s retry budget', () => {
    const lane = resolveMessageLane({ maxBatchingWindowSeconds: 5, maxReceiveCount: 80 }, {}, undefined);
    expect(lane?.ordered).toBe(true);
    expect(lane?.settings).toEqual(
      resolveSettings(
        { maxBatchingWindowSeconds: 0, ...ORDERED_MESSAGE_LANE_RETRY },
        {
          outageToRideOutSeconds: MIN_ORDERED_LANE_OUTAGE_RIDDEN_OUT_SECONDS,
        },
      ),
    );
    expect(outageRiddenOutSeconds(lane?.settings ?? resolveSettings())).toBeGreaterThanOrEqual(
      MIN_ORDERED_LANE_OUTAGE_RIDDEN_OUT_SECONDS,
    );
  });

  it('has no lane for a subscriber that does not want messages', () => {
    expect(resolveMessageLane({}, {}, ['message_template_status_update'])).toBeUndefined();
    expect(resolveMessageLane({}, {}, ['messages', 'calls'])).toBeDefined();
  });

  it('caps a subscriber-wide batch size at the FIFO maximum, and refuses one set on the lane', () => {
    expect(resolveMessageLane({ batchSize: 100 }, {}, undefined)?.settings.batchSize).toBe(
      FIFO_MAX_BATCH_SIZE,
    );
    expect(() => resolveMessageLane({}, { settings: { batchSize: 11 } }, undefined)).toThrow(
      /messageLane: batchSize is 11.*at most 10 records per batch from a FIFO queue/,
    );
  });

  it('refuses a batching window on an ordered lane, and takes one on an unordered lane', () => {
    expect(() => resolveMessageLane({}, { settings: { maxBatchingWindowSeconds: 2 } }, undefined)).toThrow(
      UnsafeSettingsError,
    );
    const unordered = resolveMessageLane(
      { maxReceiveCount: 80 },
      { ordered: false, settings: { maxBatchingWindowSeconds: 2 } },
      undefined,
    );
    expect(unordered?.settings.maxBatchingWindowSeconds).toBe(2);
    // An unordered lane blocks nothing: it keeps the subscriber's day-long budget.
    expect(unordered?.settings.maxReceiveCount).toBe(80);
  });

  it('refuses an ordered lane whose budget would not ride out a short hiccup', () => {
    expect(() => resolveMessageLane({}, { settings: { maxReceiveCount: 5 } }, undefined)).toThrow(
      /messageLane: maxReceiveCount 5/,
    );
  });

  it('leaves SQS redrive a margin behind the consumer’s own move on an ordered lane only', () => {
    const ordered = resolveMessageLane({}, {}, undefined);
    const unordered = resolveMessageLane({}, { ordered: false }, undefined);
    if (ordered === undefined || unordered === undefined) throw new Error('lanes expected');
    expect(redriveMaxReceiveCount(ordered)).toBe(
      ordered.settings.maxReceiveCount + ORDERED_LANE_REDRIVE_MARGIN,
    );
    expect(redriveMaxReceiveCount(unordered)).toBe(unordered.settings.maxReceiveCount);
  });
});

describe('SUBSCRIBER_QUEUES with lanes', () => {
  it('carries each subscriber’s message lane and reads it back', () => {
    const queues = [
      { name: 'bot', queueUrl: 'q/bot', messageQueueUrl: 'q/bot-messages.fifo', messageLaneOrdered: true },
      {
        name: 'crm',
        queueUrl: 'q/crm',
        fields: ['messages'],
        messageQueueUrl: 'q/crm-messages',
        messageLaneOrdered: false,
      },
      { name: 'templates', queueUrl: 'q/templates', fields: ['message_template_status_update'] },
    ];
    expect(decodeSubscriberQueues(encodeSubscriberQueues(queues))).toEqual(queues);
  });

  it('refuses a message lane URL that is not a non-empty string', () => {
    expect(() =>
      decodeSubscriberQueues(JSON.stringify([{ name: 'bot', queueUrl: 'q', messageQueueUrl: '' }])),
    ).toThrow('SUBSCRIBER_QUEUES[0]');
  });
});
