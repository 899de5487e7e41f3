import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { DeleteCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import {
  DISPLAY_PHONE_NUMBER,
  envelope,
  inboundMessages,
  messagesBody,
  messagesChange,
  statusesBody,
  statusesChange,
} from '../../../cli/meta-traffic/webhook-bodies.ts';
import { METRICS_NAMESPACE, SERVICE_NAME } from '../../../contract/metric-names.ts';
import { keyedDigest, useLogDigestKey } from '../../../functions/commons/log-digest.ts';
import { MAX_LISTED_OUTCOMES } from '../../../functions/consumer/consumer-batch.ts';
import { defineWebhookHandlers, type LogDetails } from '../../../functions/consumer/handler-api.ts';
import { loggableKey } from '../../../functions/consumer/loggable-key.ts';
import { webhookHandlers as defaultHandlers } from '../../../functions/webhook-handlers.ts';
import {
  captureOutput,
  createHarness,
  emfDocuments,
  metricValue,
  sqsEvent,
} from '../../support/consumer-harness.ts';

const fixture = (name: string) =>
  readFileSync(new URL(`../../fixtures/webhooks/${name}`, import.meta.url), 'utf8');

function mockLedgerAndClaims(dynamodb: ReturnType<typeof createHarness>['dynamodb']) {
  dynamodb.on(PutCommand).resolves({});
  dynamodb.on(DeleteCommand).resolves({});
  dynamodb
    .on(UpdateCommand)
    .callsFake(
      (input: {
        Key: { pk: string };
        ExpressionAttributeNames?: Record<string, string>;
        ExpressionAttributeValues?: Record<string, unknown>;
      }) => {
        if (!input.Key.pk.startsWith('ledger:')) return {};
        const values = input.ExpressionAttributeValues ?? {};
        return {
          Attributes: {
            wamid: input.Key.pk.split(':')[1],
            currentStatus: values[':status'] ?? 'read',
            currentRank: values[':rank'] ?? 3,
            [input.ExpressionAttributeNames?.['#change'] ?? 'change']:
              values[':advanced'] ?? values[':merged'],
          },
        };
      },
    );
}

describe('consumer metrics', () => {
  it('emits one EMF document per Field value and one for the undimensioned metrics, whatever the event count, each with the Subscriber dimension', async () => {
    const { dynamodb, invoke } = createHarness(
      {
        onError: () => {
          throw new Error('error handler down');
        },
      },
      { subscriberName: 'crm' },
    );
    mockLedgerAndClaims(dynamodb);
    const messages = inboundMessages(25);
    const event = sqsEvent(
      ['rec-messages', messagesBody(messages.slice(0, 20))],
      ['rec-more', messagesBody(messages.slice(15, 25))],
      [
        'rec-statuses',
        statusesBody([
          { id: 'wamid.out1', status: 'read', recipientId: '16505550001', timestamp: '1749416400' },
          { id: 'wamid.out2', status: 'sent', recipientId: '16505550002', timestamp: '1749416401' },
        ]),
      ],
      ['rec-errors', fixture('value-errors.json')],
      ['rec-account', fixture('account_update.json')],
      ['rec-unknown', envelope([{ field: 'some_future_field', value: { x: 1 } }])],
      ['rec-garbage', 'this is not json'],
    );

    const { result, lines } = await captureOutput(() => invoke(event));

    expect(result).toEqual({ batchItemFailures: [{ itemIdentifier: 'rec-errors' }] });
    const documents = emfDocuments(lines);
    const fields = documents.map(
      (document) =>
        document.values.Field ??
        (document.values.Lane === undefined ? '(none)' : `lane:${document.values.Lane}`),
    );
    expect(fields.sort()).toEqual([
      '(none)',
      'account_update',
      'error',
      'lane:status',
      'message',
      'some_future_field',
      'status',
    ]);
    for (const document of documents) {
      const metadata = (document.values._aws as { CloudWatchMetrics: { Namespace: string }[] })
        .CloudWatchMetrics[0];
      expect(metadata?.Namespace).toBe(METRICS_NAMESPACE);
      expect(document.values.service).toBe(SERVICE_NAME);
      expect(document.values.Subscriber).toBe('crm');
      expect(document.dimensions).toEqual([
        document.values.Field !== undefined
          ? ['service', 'Subscriber', 'Field']
          : document.values.Lane !== undefined
            ? ['service', 'Subscriber', 'Lane']
            : ['service', 'Subscriber'],
      ]);
    }
    expect(metricValue(documents, 'EventsFresh', 'message')).toBe(25);
    expect(metricValue(documents, 'EventsDuplicate', 'message')).toBe(5);
    expect(metricValue(documents, 'EventsFresh', 'status')).toBe(2);
    expect(metricValue(documents, 'EventsFresh', 'error')).toBe(2);
    expect(metricValue(documents, 'HandlerErrors', 'error')).toBe(2);
    expect(metricValue(documents, 'ClaimReleases', 'error')).toBe(2);
    expect(metricValue(documents, 'EventsFresh', 'account_update')).toBe(2);
    expect(metricValue(documents, 'UnknownField', 'some_future_field')).toBe(1);
    expect(metricValue(documents, 'Quarantined')).toBe(1);
  });

  it('counts the events its field filter skips per Field, without claiming them', async () => {
    const keys: string[] = [];
    const handle = ({ key }: { key: string }) => void keys.push(key);
    const { dynamodb, invoke } = createHarness(
      { onMessage: handle, onStatus: handle, onManagementEvent: handle },
      { subscriberName: 'bot', keyNamespace: 'bot', fields: ['messages'] },
    );
    mockLedgerAndClaims(dynamodb);
    const messages = inboundMessages(2, 'filter');
    const event = sqsEvent(
      [
        'rec-mixed',
        envelope([
          messagesChange(messages),
          ...((JSON.parse(fixture('account_update.json')) as { entry: { changes: object[] }[] }).entry[0]
            ?.changes ?? []),
        ]),
      ],
      ['rec-account', fixture('account_update.json')],
    );

    const { result, lines } = await captureOutput(() => invoke(event));

    expect(result).toEqual({ batchItemFailures: [] });
    expect(keys).toEqual(messages.map((m) => `msg:${m.id}`));
    const claimed = dynamodb.commandCalls(PutCommand).map((call) => String(call.args[0].input.Item?.pk));
    expect(claimed.sort()).toEqual(messages.map((m) => `bot#msg:${m.id}`).sort());
    const documents = emfDocuments(lines);
    expect(metricValue(documents, 'EventsFilteredOut', 'account_update')).toBe(4);
    expect(metricValue(documents, 'EventsFresh', 'message')).toBe(2);
    expect(documents.every((document) => document.values.Subscriber === 'bot')).toBe(true);
  });

  it('counts a status that arrives after a higher one as a merged regression', async () => {
    const { dynamodb, invoke } = createHarness({ onStatus: () => undefined });
    dynamodb.on(PutCommand).resolves({});
    dynamodb.on(UpdateCommand).resolves({});
    dynamodb
      .on(UpdateCommand, { Key: { pk: 'ledger:wamid.out1' } })
      .rejectsOnce(
        Object.assign(new Error('The conditional request failed'), {
          name: 'ConditionalCheckFailedException',
        }),
      )
      .resolves({
        Attributes: {
          wamid: 'wamid.out1',
          currentStatus: 'read',
          currentRank: 3,
          at_read: 2,
          at_sent: 1,
          change_read: 'advanced',
          change_sent: 'merged',
        },
      });

    const { lines } = await captureOutput(() =>
      invoke(
        sqsEvent([
          'r',
          statusesBody([{ id: 'wamid.out1', status: 'sent', recipientId: '1', timestamp: '1' }]),
        ]),
      ),
    );

    expect(metricValue(emfDocuments(lines), 'StatusRegressionsMerged')).toBe(1);
  });
});

describe('consumer logs', () => {
  it('never logs or emits message texts, names, phone numbers or wamids', async () => {
    const messages = inboundMessages(3);
    const secrets = [
      ...messages.flatMap((m) => [m.text, m.name, m.from, m.id]),
      'wamid.out1',
      DISPLAY_PHONE_NUMBER,
      '4915112345678', // user_preferences wa_id, and a group participant in status-group.json
      '5511912345678',
      'Kerry Fisher',
      'User requested to stop marketing messages',
      '16505550001',
      'my order number',
    ];
    const handlers = defineWebhookHandlers({
      onMessage: (context) => {
        defaultHandlers.onMessage(context);
        // A JavaScript caller bypassing the scalar-only type must not get objects into the logs either.
        context.logger.info('Message seen', { contact: context.value.contacts } as unknown as LogDetails);
        if (context.payload.id === messages[1]?.id) {
          throw new Error(`Invalid recipient ${messages[1]?.from}: ${messages[1]?.text}`);
        }
      },
      onStatus: defaultHandlers.onStatus,
      onManagementEvent: (context) => {
        defaultHandlers.onManagementEvent(context);
        throw new Error(`phone ${DISPLAY_PHONE_NUMBER} refused`);
      },
    });
    const { dynamodb, invoke } = createHarness(handlers);
    mockLedgerAndClaims(dynamodb);
    const event = sqsEvent(
      ['rec-1', messagesBody(messages)],
      [
        'rec-2',
        envelope([
          statusesChange([
            { id: 'wamid.out1', status: 'read', recipientId: '16505550001', timestamp: '1749416400' },
          ]),
        ]),
      ],
      ['rec-3', fixture('user_preferences.json')],
      ['rec-4', fixture('status-group.json')],
      [
        'rec-5',
        envelope([{ field: 'some_future_field', value: { wa_id: '16505550001', text: 'my order number' } }]),
      ],
      [
        'rec-6',
        `{"object":"whatsapp_business_account","entry":[{"id":"1","changes":[{"text":"${messages[0]?.text}"`,
      ],
    );

    const { result, lines } = await captureOutput(() => invoke(event));

    // The run did exercise every path: failures, quarantine, duplicates, statuses, unknown fields.
    expect(result.batchItemFailures.map((f) => f.itemIdentifier).sort()).toEqual(['rec-1', 'rec-3']);
    expect(lines.some((line) => line.includes('Webhook event handled'))).toBe(true);
    expect(lines.some((line) => line.includes('"errorName":"Error"'))).toBe(true);
    expect(lines.some((line) => line.includes('Unusable record quarantined'))).toBe(true);
    expect(emfDocuments(lines).length).toBeGreaterThan(0);
    // Every log line names the subscriber (the default one here).
    const logLines = lines.filter((line) => line.includes('"level"'));
    expect(logLines.length).toBeGreaterThan(0);
    for (const line of logLines) expect(JSON.parse(line).subscriber).toBe('default');
    const output = lines.join('\n');
    for (const secret of secrets) expect(output, `"${secret}" leaked`).not.toContain(secret);
  });

  it("follows each event at INFO by its key's digest, field and outcome; per-event lines and counts only at DEBUG", async () => {
    const [message] = inboundMessages(1);
    const status = { id: 'wamid.out1', status: 'read', recipientId: '16505550001', timestamp: '1749416400' };
    const batch = () =>
      sqsEvent(
        ['rec-1', messagesBody(message === undefined ? [] : [message])],
        ['rec-2', envelope([statusesChange([status])])],
      );
    const run = async (logLevel: 'INFO' | 'DEBUG') => {
      const { dynamodb, invoke } = createHarness(
        defineWebhookHandlers({ onMessage: () => {} }),
        {},
        { logLevel },
      );
      mockLedgerAndClaims(dynamodb);
      const { lines } = await captureOutput(() => invoke(batch()));
      return lines.filter((line) => line.includes('"level"')).map((line) => JSON.parse(line));
    };

    const info = await run('INFO');
    const summary = info.find((line) => line.message === 'Batch processed');
    // By outcome, then field: the digests of the keys.
    expect(summary?.events).toEqual({
      handled: { messages: [loggableKey({ key: `msg:${message?.id}` })] },
      recorded: { messages: [loggableKey({ key: 'st:wamid.out1:read' })] },
    });
    expect(summary).not.toHaveProperty('counts');
    expect(info.map((line) => line.message)).toEqual(['Batch processed']);

    const debug = (await run('DEBUG')).map((line) => line.message);
    for (const moved of ['Event handled', 'Event without handler recorded as done', 'Batch counts']) {
      expect(debug).toContain(moved);
    }
  });

  it('lists at most MAX_LISTED_OUTCOMES digests in the summary line and counts the rest', async () => {
    const statuses = Array.from({ length: MAX_LISTED_OUTCOMES + 5 }, (_, index) => ({
      id: `wamid.many${index}`,
      status: 'delivered',
      recipientId: '16505550001',
      timestamp: '1749416400',
    }));
    const { dynamodb, invoke } = createHarness(defineWebhookHandlers({ onMessage: () => {} }));
    mockLedgerAndClaims(dynamodb);
    const { lines } = await captureOutput(() =>
      invoke(sqsEvent(['rec-1', envelope([statusesChange(statuses)])])),
    );
    const summary = lines
      .filter((line) => line.includes('"Batch processed"'))
      .map((line) => JSON.parse(line))
      .at(0);
    const listed = Object.values(summary?.events ?? {}).flatMap((byField) =>
      Object.values(byField as Record<string, string[]>).flat(),
    );
    expect(listed).toHaveLength(MAX_LISTED_OUTCOMES);
    expect(summary?.eventsUnlisted).toBe(5);
  });

  it('logs a keyed digest of every key: stable, distinct per key, and not an unkeyed hash anyone can recompute', () => {
    const key = 'user_preferences:184735920115467:1751307000:4915112345678:marketing_messages:stop';
    const digest = loggableKey({ key });
    expect(digest).toMatch(/^hmac~[A-Za-z0-9_-]{16}$/);
    expect(loggableKey({ key })).toBe(digest);
    expect(loggableKey({ key: 'msg:wamid.X' })).not.toBe(loggableKey({ key: 'msg:wamid.Y' }));
    expect(digest).not.toContain('4915112345678');
    const unkeyed = createHash('sha256').update(key).digest();
    expect(digest).not.toContain(unkeyed.toString('base64url').slice(0, 16));
    expect(digest).not.toContain(unkeyed.toString('hex').slice(0, 12));
  });

  it('digests under the deployment key: the same key gives what ops computes with it', () => {
    useLogDigestKey('deployment-key-1');
    const first = loggableKey({ key: 'msg:wamid.X' });
    expect(first).toBe(keyedDigest('deployment-key-1', 'msg:wamid.X'));
    useLogDigestKey('deployment-key-2');
    expect(loggableKey({ key: 'msg:wamid.X' })).not.toBe(first);
    expect(() => useLogDigestKey('')).toThrow(RangeError);
  });
});
