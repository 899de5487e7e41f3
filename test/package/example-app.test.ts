/**
 * The repository's example app (bin/): the CDK app deploys bin/subscribers.ts's subscribers, or those of the
 * module `-c subscribers=PATH` names, such as the bot and CRM of bin/bot-and-crm.ts.
 */
import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { subscribers as botAndCrm } from '../../bin/bot-and-crm.ts';
import { subscribers as configured } from '../../bin/subscribers.ts';
import { loadSubscribers } from '../../bin/subscribers-module.ts';
import { resolveSubscribers } from '../../contract/subscribers.ts';

describe('the example app', () => {
  it('deploys bin/subscribers.ts without -c subscribers', async () => {
    expect(await loadSubscribers(undefined)).toBe(configured);
  });

  it('deploys the bot and the CRM with -c subscribers=bin/bot-and-crm.ts, entries that exist', async () => {
    const loaded = await loadSubscribers('bin/bot-and-crm.ts');
    expect(loaded).toEqual(botAndCrm);
    const resolved = resolveSubscribers(loaded ?? {});
    expect(resolved.map(({ name, fields, messageLane }) => [name, fields, messageLane?.ordered])).toEqual([
      ['bot', ['messages'], true],
      ['crm', undefined, false],
    ]);
    for (const { entry } of resolved) expect(entry !== undefined && existsSync(entry), entry).toBe(true);
  });

  it('names the module it cannot use', async () => {
    await expect(loadSubscribers('bin/no-such-module.ts')).rejects.toThrow(
      /subscribers=bin\/no-such-module\.ts/,
    );
    await expect(loadSubscribers('bin/subscribers-module.ts')).rejects.toThrow(/exports no subscribers/);
  });
});
