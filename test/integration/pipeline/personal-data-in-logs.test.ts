/**
 * No personal data in the logs (docs/operations.md, "Logs"): every fixture body goes through the real receiver
 * and consumer on the emulators, at the most verbose log level, and no line of their output holds a phone
 * number, business-scoped user id, username, wamid, name or message text of any fixture. Log lines carry a
 * keyed digest of each key instead (functions/commons/log-digest.ts).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { keyedDigest, useLogDigestKey } from '../../../functions/commons/log-digest.ts';
import { extractEvents } from '../../../functions/events/extract-events.ts';
import { captureOutput } from '../../support/consumer-harness.ts';
import { createPipeline, type Pipeline, restoreEnvironment } from '../../support/pipeline-fixture.ts';

const FIXTURES = resolve(import.meta.dirname, '../../fixtures/webhooks');
const LOG_DIGEST_KEY = 'personal-data-test-key';

/** Members whose values name or quote a customer, and ids that encode one (a wamid holds the phone number). */
const PERSONAL_MEMBERS = new Set([
  'wa_id',
  'from',
  'to',
  'recipient_id',
  'user_id',
  'from_user_id',
  'recipient_user_id',
  'recipient_participant_id',
  'recipient_participant_user_id',
  'parent_user_id',
  'recipient_participant_parent_user_id',
  'username',
  'phone_number',
  'name',
  'body',
  'text',
  'caption',
]);

/** Every personal value in a parsed body: the members above, and every wamid wherever it stands. */
function personalValues(value: unknown, found = new Set<string>(), member = ''): Set<string> {
  if (typeof value === 'string') {
    // Short values ("1", "ok") would match anything; real ids, numbers and texts are longer.
    if ((PERSONAL_MEMBERS.has(member) || value.startsWith('wamid.')) && value.length >= 6) found.add(value);
  } else if (Array.isArray(value)) {
    for (const item of value) personalValues(item, found, member);
  } else if (typeof value === 'object' && value !== null) {
    for (const [name, item] of Object.entries(value)) personalValues(item, found, name);
  }
  return found;
}

const bodies = readdirSync(FIXTURES)
  .filter((file) => file.endsWith('.json'))
  .map((file) => readFileSync(join(FIXTURES, file), 'utf8'));

let pipeline: Pipeline | undefined;
const level = process.env.POWERTOOLS_LOG_LEVEL;
afterEach(async () => {
  await pipeline?.close();
  pipeline = undefined;
  if (level === undefined) delete process.env.POWERTOOLS_LOG_LEVEL;
  else process.env.POWERTOOLS_LOG_LEVEL = level;
});
afterAll(() => restoreEnvironment());

describe('logs of a pipeline run over every fixture', () => {
  it('hold no phone number, BSUID, username, wamid, name or text of any fixture, and digests in place of keys', async () => {
    process.env.POWERTOOLS_LOG_LEVEL = 'DEBUG';
    const { lines } = await captureOutput(async () => {
      // The pipeline's consumers run in this process, as the local stack's do: its key is this process's.
      useLogDigestKey(LOG_DIGEST_KEY);
      pipeline = await createPipeline('personal-data');
      const source = await pipeline.startConsumer();
      for (const body of bodies) await pipeline.post(body);
      await source.waitUntilDrained({ timeoutMs: 30_000 });
      return undefined;
    });

    const secrets = new Set<string>();
    for (const body of bodies) {
      try {
        personalValues(JSON.parse(body), secrets);
      } catch {
        // Not JSON (the invalid-body fixtures): it holds nothing to look for.
      }
    }
    // The run logged, and the fixtures hold what the check looks for.
    expect(lines.length).toBeGreaterThan(bodies.length);
    expect(secrets.size).toBeGreaterThan(50);
    const output = lines.join('\n');
    const leaked = [...secrets].filter((secret) => output.includes(secret));
    expect(leaked).toEqual([]);
    // An operator finds an event's lines by the digest `ops key` prints.
    const keys = bodies.flatMap((body) => {
      const extraction = extractEvents(body);
      return extraction.ok ? extraction.events.map((event) => event.key) : [];
    });
    const found = keys.filter((key) => output.includes(keyedDigest(LOG_DIGEST_KEY, key)));
    expect(found.length).toBeGreaterThan(keys.length / 2);
  }, 90_000);
});
