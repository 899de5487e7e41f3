/**
 * The defaults docs/operations.md states are the code's: `npm run ops`'s targets (the local port, the default
 * stack name), the FIFO window a re-send meets, `dlq peek`'s and `redrive`'s counts and hiding times,
 * `quarantine requeue`'s hiding, the Graph API version, the smoke test's ids, timeout and the secret cache it
 * meets, and `replay`'s range, rate, progress lines and the archive retention it falls back to (its AWS
 * permissions table is a generated region, cli/test/unit/ops/aws-calls.test.ts's). The other pages:
 * stated-defaults-*.test.ts beside this one.
 */
import { describe, expect, it } from 'vitest';
import { DEFAULT_PORT } from '../../../cli/local/local-stack-api.ts';
import { DEFAULT_PEEK_LIMIT } from '../../../cli/ops/arguments.ts';
import { DEFAULT_REPLAY_RATE_PER_SECOND } from '../../../cli/ops/replay/run-replay.ts';
import { DEFAULT_SMOKE_TIMEOUT_SECONDS } from '../../../cli/ops/smoke/smoke-arguments.ts';
import { DEFAULT_ARCHIVE_RETENTION_DAYS } from '../../../contract/archive.ts';
import { GRAPH_API_VERSION } from '../../../contract/meta-graph-api.ts';
import {
  SMOKE_TEST_CUSTOMER_WA_ID,
  SMOKE_TEST_PHONE_NUMBER_ID,
  SMOKE_TEST_WAMID_PREFIX,
} from '../../../contract/smoke-test.ts';
import { MAX_BATCH_ENTRIES } from '../../../functions/queue/sqs-batch-sender.ts';
import { SECRETS_MAX_AGE_SECONDS } from '../../../functions/receiver/webhook-secrets.ts';
import {
  DEFAULT_STACK_NAME,
  durationInWords,
  FIFO_DEDUPLICATION_MINUTES,
  inWords,
  prose,
  sourceMatch,
  sourceNumber,
} from './stated-defaults-support.ts';

describe("docs/operations.md's stated defaults", () => {
  const operations = prose('docs/operations.md');
  const dlq = 'cli/ops/commands/dlq.ts';

  it("states ops's default targets: the local stack's port and the CDK app's stack name", () => {
    expect(operations).toContain(
      `(default \`http://localhost:$PORT\`, else port ${DEFAULT_PORT}, as \`npm start\`)`,
    );
    expect(operations).toContain(
      `the CloudFormation stack name, \`${DEFAULT_STACK_NAME}\` unless you deployed with`,
    );
  });

  it('states the FIFO window a re-sent message meets, in each place', () => {
    const minutes = FIFO_DEDUPLICATION_MINUTES;
    expect(operations).toContain(
      `An inbound message re-sent within ${minutes} minutes of its first delivery`,
    );
    expect(operations).toContain(`SQS drops a second send with the same id for ${minutes} minutes`);
    expect(operations).toContain(`re-send the body after those ${minutes} minutes`);
    expect(operations).toContain(
      `would make SQS drop the copy within ${minutes} minutes of the receiver's send`,
    );
    expect(operations).toContain(
      `a second replay within SQS's ${minutes} minutes still reaches the consumer`,
    );
  });

  it("states dlq peek's count and hiding, a FIFO scan's reach and redrive's hiding as the commands have them", () => {
    expect(operations).toContain(`\`peek\`: the \`N\` newest records (default ${DEFAULT_PEEK_LIMIT})`);
    expect(operations).toContain(
      `hiding each record for ${sourceNumber(dlq, 'PEEK_HIDE_SECONDS')} seconds at most`,
    );
    expect(operations).toContain(`so a scan sees up to ${MAX_BATCH_ENTRIES} records of each conversation`);
    const redriveHide = sourceNumber(dlq, 'REDRIVE_HIDE_SECONDS');
    expect(operations).toContain(
      `leaves its record in the DLQ, visible again within ${durationInWords(redriveHide)}`,
    );
  });

  it('states how long quarantine requeue hides the bodies it works on', () => {
    const minutes = sourceNumber('cli/ops/commands/quarantine.ts', 'REQUEUE_HIDE_SECONDS') / 60;
    expect(operations).toContain(
      `Bodies being requeued stay hidden from other readers for at most ${inWords(minutes)} minutes`,
    );
  });

  it("states the pinned Graph API version, the smoke test's ids and timeout, and the secret cache it meets", () => {
    expect(operations).toContain(`**Graph API version**: pinned to \`${GRAPH_API_VERSION}\``);
    expect(operations).toContain(`Its wamids start with \`${SMOKE_TEST_WAMID_PREFIX}\``);
    expect(operations).toContain(`the customer is \`${SMOKE_TEST_CUSTOMER_WA_ID}\``);
    expect(operations).toContain(`the business phone number id is \`${SMOKE_TEST_PHONE_NUMBER_ID}\``);
    expect(operations).toContain(`Waits, up to \`--timeout\` (default ${DEFAULT_SMOKE_TIMEOUT_SECONDS} s)`);
    expect(operations).toContain(
      `or cached by warm receivers for up to ${inWords(SECRETS_MAX_AGE_SECONDS / 60)} minutes`,
    );
  });

  it("states replay's defaults: the range's end, the rate, the progress lines and the archive's retention", () => {
    const until = sourceMatch(
      'cli/ops/replay/replay-arguments.ts',
      /const until = values\.until \?\? '(\w+)';/,
    );
    expect(operations).toContain(`Options: \`--until T\` (default \`${until}\`)`);
    expect(operations).toContain(
      `\`--rate N/s\` caps the deliveries sent per second (default ${DEFAULT_REPLAY_RATE_PER_SECOND}/s)`,
    );
    const lineSeconds = sourceNumber('cli/ops/replay/replay-progress.ts', 'LINE_INTERVAL_MS') / 1000;
    expect(operations).toContain(`otherwise a line every ${lineSeconds} seconds`);
    expect(operations).toContain(
      `else contract/archive.ts's default of ${DEFAULT_ARCHIVE_RETENTION_DAYS} days`,
    );
  });
});
