/**
 * Customers with usernames on the local stack as `npm start` runs it (docs/design.md §1 "Customers", §8): since
 * 2026 a customer may come with a business-scoped user id (BSUID) and no phone number. Their conversations run
 * apart from each other and in order within themselves whether or not the phone number came, a group message
 * read by username participants is effected once per participant with a ledger each, and a message without an
 * id is quarantined, not run. Handler times come from `/local/effects` (`startedAt`, `endedAt`); the default
 * side effect is slowed with `LOCAL_EFFECT_DELAY_MS`.
 */
import { readFileSync } from 'node:fs';
import { SQSClient } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StatusLedgerView } from '../../../functions/ledger/status-ledger.ts';
import { spawnTestStack } from '../../../test/support/test-local-stack.ts';
import { readQueueCounts } from '../../local/queue-counts.ts';
import type { EffectEntry } from '../../local/stack/effects-journal.ts';
import type { LocalLedgerView } from '../../local/stack/local-server.ts';
import { LocalStackClient } from '../../local/stack/local-stack-client.ts';
import type { LocalDeadLetters } from '../../local/stack/operator-views.ts';
import type { SpawnedLocalStack } from '../../local/stack/spawn-local-stack.ts';

const SECRET = 'e2e-username-app-secret';
const EFFECT_DELAY_MS = 300;
const FIXTURES = new URL('../../../test/fixtures/webhooks/', import.meta.url);
const METADATA = { display_phone_number: '15556013472', phone_number_id: '397201846153720' };
/** Unique to this run: nothing another run left in a stack can be mistaken for these. */
const RUN = `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
const RUN_DIGITS = String(Date.now()).slice(-10);

let stack: SpawnedLocalStack;
let client: LocalStackClient;
/** Every BSUID, username and wamid these tests send: none may reach the stack's output. */
const privateValues = new Set<string>();

interface UsernameCustomer {
  readonly bsuid: string;
  readonly username: string;
}

function customer(n: number): UsernameCustomer {
  const value = { bsuid: `US.${RUN_DIGITS}${String(n).padStart(9, '0')}`, username: `user.${RUN}.${n}` };
  privateValues.add(value.bsuid).add(value.username);
  return value;
}

function wamid(label: string): string {
  const id = `wamid.username-e2e.${RUN}.${label}`;
  privateValues.add(id);
  return id;
}

/**
 * A body of text messages from customers with a username and no phone number, as Meta's 2026 samples show
 * them: no `from`, no contact `wa_id`. A message whose id is undefined has none.
 */
function messagesBody(
  messages: readonly { readonly from: UsernameCustomer; readonly id?: string }[],
): string {
  return JSON.stringify({
    object: 'whatsapp_business_account',
    entry: [
      {
        id: '184735920115467',
        changes: [
          {
            field: 'messages',
            value: {
              messaging_product: 'whatsapp',
              metadata: METADATA,
              contacts: messages.map(({ from }) => ({
                profile: { name: 'Customer', username: from.username },
                user_id: from.bsuid,
              })),
              messages: messages.map(({ from, id }) => ({
                from_user_id: from.bsuid,
                ...(id !== undefined && { id }),
                timestamp: '1781175600',
                type: 'text',
                text: { body: 'Hello' },
              })),
            },
          },
        ],
      },
    ],
  });
}

/** Members that name a customer or a message. */
const PRIVATE_MEMBERS = new Set([
  'id',
  'from',
  'from_user_id',
  'wa_id',
  'user_id',
  'parent_user_id',
  'username',
]);

function collectPrivateValues(value: unknown): void {
  if (Array.isArray(value)) for (const item of value) collectPrivateValues(item);
  else if (typeof value === 'object' && value !== null) {
    for (const [name, member] of Object.entries(value)) {
      if (PRIVATE_MEMBERS.has(name) || name.startsWith('recipient_')) {
        if (typeof member === 'string' && member.length > 4) privateValues.add(member);
      }
      collectPrivateValues(member);
    }
  }
}

/** A committed fixture body and its hand-checked keys. */
function fixture(name: string): { body: Buffer; keys: string[] } {
  const body = readFileSync(new URL(`${name}.json`, FIXTURES));
  // The changes' values only: the entry id is the business's, not a customer's.
  const entries = (JSON.parse(body.toString('utf8')) as { entry: { changes: unknown }[] }).entry;
  for (const entry of entries) collectPrivateValues(entry.changes);
  const keys = readFileSync(new URL(`${name}.keys`, FIXTURES), 'utf8')
    .split('\n')
    .filter(Boolean);
  return { body, keys };
}

/** The most handler calls that ran at the same moment. */
function peakOverlap(runs: readonly Required<EffectEntry>[]): number {
  const edges = runs.flatMap((r) => [
    { at: r.startedAt, change: 1 },
    { at: r.endedAt, change: -1 },
  ]);
  // An end before a start at the same millisecond: touching calls did not overlap.
  edges.sort((a, b) => a.at - b.at || a.change - b.change);
  let running = 0;
  let peak = 0;
  for (const { change } of edges) {
    running += change;
    peak = Math.max(peak, running);
  }
  return peak;
}

async function post(body: string | Buffer): Promise<void> {
  const { status } = await client.postWebhook(body, SECRET);
  expect(status).toBe(200);
}

/** The effects of `keys`, once the queues drained; each must have run exactly once. */
async function effectsOnce(keys: readonly string[]): Promise<Required<EffectEntry>[]> {
  await client.drained();
  const byKey = new Map((await client.effects()).effects.map((entry) => [entry.key, entry]));
  return keys.map((key) => {
    const entry = byKey.get(key);
    expect(entry?.count, 'every key effected once').toBe(1);
    expect(entry?.startedAt, 'the effect has its times').toEqual(expect.any(Number));
    return entry as Required<EffectEntry>;
  });
}

beforeAll(async () => {
  stack = await spawnTestStack({
    env: {
      WHATSAPP_APP_SECRETS: SECRET,
      LOCAL_EFFECT_DELAY_MS: String(EFFECT_DELAY_MS),
      // The status lane gathers no records: the group's statuses run at once (the message lane never waits).
      LOCAL_BATCHING_WINDOW_SECONDS: '0',
    },
  });
  client = new LocalStackClient(stack.url);
});

afterAll(async () => {
  await stack?.stop();
});

describe('username customers on the local stack', () => {
  it("runs 8 username-only customers' messages, sent at once, in parallel: a conversation each", async () => {
    // One body, as Meta sends several customers' messages at once: without their BSUIDs, none of them names a
    // customer (no `from`), and they would all be one conversation, run one after the other.
    const messages = Array.from({ length: 8 }, (_, n) => ({ from: customer(n), id: wamid(`parallel-${n}`) }));

    await post(messagesBody(messages));
    const runs = await effectsOnce(messages.map(({ id }) => `msg:${id}`));

    // Each call took the effect delay (a timer may fire a millisecond early by the wall clock).
    for (const run of runs) expect(run.endedAt - run.startedAt).toBeGreaterThanOrEqual(EFFECT_DELAY_MS - 2);
    const spanMs = Math.max(...runs.map((r) => r.endedAt)) - Math.min(...runs.map((r) => r.startedAt));
    const sumMs = runs.reduce((sum, r) => sum + (r.endedAt - r.startedAt), 0);
    console.info(
      `8 username conversations: first start to last end ${spanMs} ms; handler times summed ${sumMs} ms; at most ${peakOverlap(runs)} at once`,
    );
    // One after the other they take at least the sum of their handler times, itself at least 8 x 300 ms; two at a
    // time, half of it.
    expect(spanMs).toBeLessThan((runs.length * EFFECT_DELAY_MS) / 2);
    expect(spanMs).toBeLessThan(sumMs / 2);
  });

  it("runs one customer's message without the phone number, then their next with it, in that order", async () => {
    // Long enough that the second message is queued while the first one's handler still runs.
    await client.setFaults({ effect: { delayMs: 800 } });
    try {
      const withoutPhone = fixture('message-text-username');
      const withPhone = fixture('message-text-username-with-phone');

      await post(withoutPhone.body);
      await new Promise((resolve) => setTimeout(resolve, 30));
      await post(withPhone.body);
      const secondAcceptedAt = Date.now();
      const [first, second] = await effectsOnce([...withoutPhone.keys, ...withPhone.keys]);
      if (first === undefined || second === undefined) throw new Error('expected two effects');

      console.info(
        `one username conversation: first handler ${first.endedAt - first.startedAt} ms, the second started ${second.startedAt - first.endedAt} ms after it ended`,
      );
      // The second was waiting while the first ran: only the conversation's order held it back.
      expect(secondAcceptedAt).toBeLessThan(first.endedAt);
      expect(second.startedAt).toBeGreaterThanOrEqual(first.endedAt);
    } finally {
      await client.setFaults({ effect: { delayMs: EFFECT_DELAY_MS } });
    }
  });

  it('effects a group message read by three username participants three times, with a ledger each', async () => {
    const { body, keys } = fixture('status-group-username-participants');
    const groupWamid = (keys[0] as string).split(':')[1] as string;
    const participants = keys.map((key) => key.split(':')[3] as string).sort();

    await post(body);
    expect(await effectsOnce(keys)).toHaveLength(3);
    expect(
      (await client.effects()).effects.filter((e) => e.key.startsWith(`st:${groupWamid}:`)),
    ).toHaveLength(3);

    const path = `/local/ledger/${encodeURIComponent(groupWamid)}`;
    const ledger = await client.get<LocalLedgerView>(path);
    expect(ledger.status).toBe(200);
    expect(ledger.body).toEqual({
      wamid: groupWamid,
      participants: participants.map((participant) =>
        expect.objectContaining({ wamid: groupWamid, recipientParticipantId: participant, current: 'read' }),
      ),
    });
    for (const participant of participants) {
      const one = await client.get<StatusLedgerView>(
        `${path}?participant=${encodeURIComponent(participant)}`,
      );
      expect(one.body).toMatchObject({ recipientParticipantId: participant, current: 'read' });
    }
  });

  it('quarantines a message without an id instead of running it', async () => {
    const info = await client.info();
    const sqs = new SQSClient({
      region: 'us-east-1',
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
      endpoint: info.sqsEndpoint,
    });
    try {
      const before = (await client.effects()).total;
      const quarantinedBefore = await readQueueCounts(sqs, info.quarantineQueueUrl);

      await post(messagesBody([{ from: customer(100) }]));
      await client.drained();

      expect((await client.effects()).total).toBe(before);
      const counts = await readQueueCounts(sqs, info.quarantineQueueUrl);
      expect(counts.visible + counts.inFlight).toBe(
        quarantinedBefore.visible + quarantinedBefore.inFlight + 1,
      );
      const deadLetters = (await client.get<LocalDeadLetters>('/local/dead-letters')).body;
      expect(deadLetters.quarantine.newest).toContainEqual(
        expect.objectContaining({
          reason: 'event-without-id',
          reads: '0 events, 1 message without a usable id',
        }),
      );
      // Never claimed under a key of its own, never run as `msg:-`.
      const lookup = await client.get<{ subscribers: { claim?: unknown }[] }>('/local/key?key=msg:-');
      expect(lookup.body.subscribers.map((s) => s.claim)).toEqual([undefined]);
    } finally {
      sqs.destroy();
    }
  });

  it('prints no BSUID, username or wamid', () => {
    const output = stack.output();
    expect(output).toContain('Local stack ready');
    expect([...privateValues].filter((value) => output.includes(value))).toEqual([]);
  });
});
