import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { UnsafeSettingsError } from '../../../../contract/settings.ts';
import { SubscriberModuleError, withLocalEffects } from '../../../local/stack/consumer-runtime.ts';
import {
  loadLocalSubscribers,
  localForwardHeaders,
  resolveLocalSubscribers,
  SubscribersModuleNotFoundError,
} from '../../../local/stack/local-subscribers.ts';

const ROOT = fileURLToPath(new URL('../../../../', import.meta.url));
const scratch = mkdtempSync(join(tmpdir(), 'local-subscribers-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe('local subscribers', () => {
  it('without definitions, runs the single default subscriber of functions/consumer.ts, keys unprefixed', () => {
    const [only, ...others] = resolveLocalSubscribers(undefined, { batchSize: 1 });
    expect(others).toEqual([]);
    expect(only).toMatchObject({
      name: 'default',
      entry: 'functions/consumer.ts',
      fields: undefined,
      keyNamespace: undefined,
    });
    expect(only?.settings.batchSize).toBe(1);
  });

  it('reads LOCAL_SUBSCRIBERS over bin/subscribers.ts, with each subscriber’s settings over the local ones', async () => {
    const loaded = await loadLocalSubscribers({
      projectRoot: ROOT,
      settings: { maxConcurrency: 3 },
      env: { LOCAL_SUBSCRIBERS: join(ROOT, 'test/support/local-subscribers/two-subscribers.ts') },
    });
    expect(loaded.subscribers.map((s) => [s.name, s.fields, s.keyNamespace])).toEqual([
      ['bot', ['messages'], 'bot'],
      ['crm', undefined, 'crm'],
    ]);
    expect(loaded.subscribers.every((s) => s.settings.maxConcurrency === 3)).toBe(true);
  });

  it('refuses unsafe definitions, a module without subscribers, and a missing module', async () => {
    const load = (path: string) =>
      loadLocalSubscribers({ projectRoot: ROOT, settings: {}, env: { LOCAL_SUBSCRIBERS: path } });
    await expect(load(join(ROOT, 'test/support/local-subscribers/unsafe-subscribers.ts'))).rejects.toThrow(
      UnsafeSettingsError,
    );
    const noExport = join(scratch, 'no-export.mjs');
    writeFileSync(noExport, 'export const other = 1;\n');
    await expect(load(noExport)).rejects.toThrow(/must export subscribers/);
    await expect(load(join(scratch, 'missing.ts'))).rejects.toThrow(SubscribersModuleNotFoundError);
    await expect(load(join(scratch, 'missing.ts'))).rejects.toThrow(SubscriberModuleError);
  });
});

describe("a forward subscriber's headers, locally", () => {
  const [crm] = resolveLocalSubscribers(
    { crm: { forward: { url: 'http://127.0.0.1:9000/hook', headersSecretName: 'CRM_HEADERS' } } },
    {},
  );
  const forward = crm?.forward as NonNullable<typeof crm>['forward'] & object;

  it('come from the environment variable named like the secret', () => {
    expect(localForwardHeaders('crm', forward, { CRM_HEADERS: '{"Authorization":"Bearer local"}' })).toEqual({
      Authorization: 'Bearer local',
    });
    expect(localForwardHeaders('crm', { ...forward, headersSecretName: undefined }, {})).toBeUndefined();
  });

  it('are refused at start when missing, not JSON, or naming a header of ours, never echoing a value', () => {
    expect(() => localForwardHeaders('crm', forward, {})).toThrow(
      /Subscriber crm: set the environment variable CRM_HEADERS/,
    );
    expect(() => localForwardHeaders('crm', forward, { CRM_HEADERS: 'Bearer x' })).toThrow(
      /CRM_HEADERS holds no JSON object/,
    );
    const reserved = () =>
      localForwardHeaders('crm', forward, { CRM_HEADERS: '{"X-Hub-Signature-256":"sha256=forged-value"}' });
    expect(reserved).toThrow(SubscriberModuleError);
    expect(reserved).toThrow(/may not set X-Hub-Signature-256/);
    expect(reserved).not.toThrow(/forged-value/);
  });
});

describe('withLocalEffects', () => {
  it('journals a record as one effect per event once it returned', async () => {
    const recorded: string[] = [];
    const handlers = withLocalEffects(
      { onRecord: () => undefined },
      { delay: { nextEffectDelayMs: () => 0 }, recordEffect: (key) => recorded.push(key) },
    );
    await handlers.onRecord?.({ events: [{ key: 'msg:a' }, { key: 'st:b:read' }] } as never);
    expect(recorded).toEqual(['msg:a', 'st:b:read']);
    expect(handlers.onMessage).toBeUndefined();
  });

  it('records an effect only once the handler returned, and leaves absent handlers absent', async () => {
    const recorded: string[] = [];
    const handlers = withLocalEffects(
      {
        onMessage: () => undefined,
        onStatus: () => {
          throw new Error('downstream down');
        },
      },
      { delay: { nextEffectDelayMs: () => 0 }, recordEffect: (key) => recorded.push(key) },
    );
    const context = (key: string) => ({ key }) as never;

    await handlers.onMessage?.(context('msg:a'));
    await expect(handlers.onStatus?.(context('st:b:read'))).rejects.toThrow('downstream down');

    expect(recorded).toEqual(['msg:a']);
    expect(handlers.onError).toBeUndefined();
    expect(handlers.onManagementEvent).toBeUndefined();
  });

  it('journals a conversation turn as one effect per message once it returned, and keeps the burst window', async () => {
    const recorded: string[] = [];
    const seen: number[] = [];
    const handlers = withLocalEffects(
      {
        onConversationTurn: ({ messages }) => {
          seen.push(messages.length);
        },
        burstWindowMs: 300,
      },
      { delay: { nextEffectDelayMs: () => 0 }, recordEffect: (key) => recorded.push(key) },
    );
    const turn = { messages: [{ key: 'msg:a' }, { key: 'msg:b' }] } as never;

    await handlers.onConversationTurn?.(turn);

    expect(seen).toEqual([2]);
    expect(recorded).toEqual(['msg:a', 'msg:b']);
    expect(handlers.burstWindowMs).toBe(300);
    expect(handlers.onMessage).toBeUndefined();
  });

  it('records when each call started, the effect delay included, and when it returned', async () => {
    let now = 1_000;
    const recorded: unknown[] = [];
    const handlers = withLocalEffects(
      {
        onMessage: () => {
          now += 7;
        },
        onConversationTurn: () => {
          now += 11;
        },
      },
      {
        delay: {
          nextEffectDelayMs: () => {
            now += 300;
            return 0;
          },
        },
        recordEffect: (key, run) => recorded.push({ key, ...run }),
        clock: () => now,
      },
    );

    await handlers.onMessage?.({ key: 'msg:a' } as never);
    await handlers.onConversationTurn?.({ messages: [{ key: 'msg:b' }, { key: 'msg:c' }] } as never);

    expect(recorded).toEqual([
      { key: 'msg:a', startedAt: 1_000, endedAt: 1_307 },
      { key: 'msg:b', startedAt: 1_307, endedAt: 1_618 },
      { key: 'msg:c', startedAt: 1_307, endedAt: 1_618 },
    ]);
  });
});
