import { PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { inboundMessages, messagesBody } from '../../../cli/meta-traffic/webhook-bodies.ts';
import { smokeBody } from '../../../cli/ops/smoke/smoke-body.ts';
import { isSmokeTestWamid, SMOKE_TEST_WAMID_PREFIX } from '../../../contract/smoke-test.ts';
import type { WebhookEventContext } from '../../../functions/consumer/handler-api.ts';
import { extractEvents } from '../../../functions/events/extract-events.ts';
import { captureOutput, createHarness, sqsEvent } from '../../support/consumer-harness.ts';

function seen() {
  const contexts: Pick<WebhookEventContext, 'key' | 'kind' | 'smokeTest'>[] = [];
  const handle = ({ key, kind, smokeTest }: WebhookEventContext) => {
    contexts.push({ key, kind, smokeTest });
  };
  return { contexts, handlers: { onMessage: handle, onStatus: handle } };
}

describe('smoke-test events', () => {
  it('marks only wamids that start with the prefix', () => {
    expect(isSmokeTestWamid(`${SMOKE_TEST_WAMID_PREFIX}run-1`)).toBe(true);
    expect(isSmokeTestWamid('wamid.HBgLMTY1MDM4Nzk0MzkVAgASGBQzQTRBNjU5OUFFRTAzODEwMTQ0RgA=')).toBe(false);
    expect(isSmokeTestWamid('wamid.SMOKE_TEST')).toBe(false);
    expect(isSmokeTestWamid(42)).toBe(false);
  });

  it('the smoke body yields exactly its message and status keys', () => {
    const smoke = smokeBody('run-1', 1_780_000_000_000);
    const extraction = extractEvents(smoke.body);
    expect(extraction.ok).toBe(true);
    if (!extraction.ok) return;
    expect(extraction.events.map((event) => [event.key, event.kind])).toEqual([
      [smoke.messageKey, 'message'],
      [smoke.statusKey, 'status'],
    ]);
  });

  it('tells the handlers of both kinds that the events are a smoke test', async () => {
    const { contexts, handlers } = seen();
    const { dynamodb, invoke } = createHarness(handlers);
    dynamodb.on(PutCommand).resolves({});
    const smoke = smokeBody('run-2', Date.now());
    dynamodb.on(UpdateCommand).resolves({});
    // The status ledger's write answers with the merged item.
    dynamodb.on(UpdateCommand, { ReturnValues: 'ALL_NEW' }).resolves({
      Attributes: {
        wamid: 'wamid.SMOKE_TEST.run-2.reply',
        currentStatus: 'delivered',
        at_delivered: 1_780_000_000,
        change_delivered: 'advanced',
      },
    });

    await captureOutput(() => invoke(sqsEvent(['rec-1', smoke.body])));

    expect(contexts).toEqual([
      { key: smoke.messageKey, kind: 'message', smokeTest: true },
      { key: smoke.statusKey, kind: 'status', smokeTest: true },
    ]);
  });

  it('leaves smokeTest false for a real message', async () => {
    const { contexts, handlers } = seen();
    const { dynamodb, invoke } = createHarness(handlers);
    dynamodb.on(PutCommand).resolves({});
    dynamodb.on(UpdateCommand).resolves({});
    const [message] = inboundMessages(1);

    await captureOutput(() => invoke(sqsEvent(['rec-1', messagesBody([message as never])])));

    expect(contexts).toHaveLength(1);
    expect(contexts[0]?.smokeTest).toBe(false);
  });
});
