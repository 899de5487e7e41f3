/**
 * The DynamoDB model against DynamoDB Local, request by request, each request sent to both and the answers
 * compared (returned attributes, error name, the old item of a failed condition), then the whole table:
 *
 * - raw requests: random sequences over a few keys, mixing the claim store's own expressions with generic
 *   conditions and updates over every operator, function and clause;
 * - the real ClaimStore and StatusLedger, driven through `modelDocumentClient` by random actions under a
 *   shared clock, every request they send mirrored to DynamoDB Local.
 *
 * Where DynamoDB Local (1.25.1) departs from the developer guide, the model follows the guide and the test
 * steps around the difference:
 * - Local keeps numbers untrimmed in UpdateItem values, lists and maps (`1.50`; 0.25 + 0.25 gives `0.50`);
 *   DynamoDB trims leading and trailing zeroes: numbers compare by value (`differential-oracle.ts`).
 * - Local fails an UpdateItem without UpdateExpression that asks for UPDATED_NEW (or UPDATED_OLD of an
 *   existing item) with an InternalFailure (HTTP 500): that combination is not sent.
 * - Local accepts `size` as a bare attribute name although the reserved words list it: the generator always
 *   writes it through a `#name`.
 */
import { CreateTableCommand, type DynamoDBClient, ScanCommand } from '@aws-sdk/client-dynamodb';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claimTableDefinition } from '../../../../cli/local/emulators/claim-table.ts';
import { type ClaimHandle, ClaimStore, isHeld } from '../../../../functions/claims/claim-store.ts';
import { StatusLedger } from '../../../../functions/ledger/status-ledger.ts';
import { createDynamoDbClient, uniqueName } from '../../../../test/support/aws-clients.ts';
import type { RawItem } from '../../../protocol-checker/dynamodb/attribute-value.ts';
import {
  type Answer,
  answerOfOutcome,
  comparable,
  localAnswer,
  modelAnswer,
  normalizedItem,
} from '../../../protocol-checker/dynamodb/differential-oracle.ts';
import {
  type OperationSpec,
  operation,
  type RawRequest,
  render,
} from '../../../protocol-checker/dynamodb/differential-requests.ts';
import { DynamoDbModel } from '../../../protocol-checker/dynamodb/dynamodb-model.ts';
import {
  modelDocumentClient,
  type RequestInterceptor,
} from '../../../protocol-checker/dynamodb/model-document-client.ts';

const SEED = 20_260_110;
const PARALLEL = 4;
const RAW_RUNS = 30;
const MIN_RAW_OPERATIONS = 2000;
const DOMAIN_RUNS = 34;
const MIN_DOMAIN_REQUESTS = 400;

describe('DynamoDbModel against DynamoDB Local', () => {
  let local: DynamoDBClient;
  let tableName: string;
  const model = new DynamoDbModel();

  beforeAll(async () => {
    local = createDynamoDbClient();
    tableName = uniqueName('model-differential');
    // The claim table's schema, without TTL: the comparison must not race DynamoDB Local's TTL sweeps.
    await local.send(new CreateTableCommand(claimTableDefinition(tableName)));
  });

  afterAll(() => local.destroy());

  it('answers random raw request sequences exactly as DynamoDB Local does', async () => {
    const outcomes = new Map<string, number>();
    let operations = 0;
    let sequences = 0;
    const runSequence = async (specs: readonly OperationSpec[]) => {
      const keyPrefix = `r${sequences++}-`;
      for (const spec of specs) {
        const request = render(spec, keyPrefix, tableName);
        const fromLocal = await localAnswer(local, request);
        const fromModel = modelAnswer(model, request);
        expect(comparable(fromModel), mismatch(request, fromLocal, fromModel)).toEqual(comparable(fromLocal));
        operations += 1;
        const outcome = `${request.commandName} ${fromLocal.ok ? 'ok' : fromLocal.error}`;
        outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
      }
    };
    // Sequences on disjoint keys run side by side, to keep DynamoDB Local busy; each is sequential.
    const sequence = fc.array(operation, { minLength: 17, maxLength: 18 });
    await fc.assert(
      fc.asyncProperty(fc.array(sequence, { minLength: PARALLEL, maxLength: PARALLEL }), async (batch) => {
        await Promise.all(batch.map(runSequence));
      }),
      { seed: SEED, numRuns: RAW_RUNS },
    );

    const items = await expectSameTable(local, model, tableName);
    console.info(
      `DynamoDB model vs DynamoDB Local, raw requests: ${operations} in ${sequences} sequences agreed, ${items} items in the table; ${[...outcomes].map(([outcome, count]) => `${outcome}: ${count}`).join(', ')}`,
    );
    expect(operations).toBeGreaterThanOrEqual(MIN_RAW_OPERATIONS);
    // Each kind of answer must have been compared often enough to mean something.
    for (const command of ['PutItemCommand', 'UpdateItemCommand', 'DeleteItemCommand']) {
      for (const answer of ['ok', 'ConditionalCheckFailedException', 'ValidationException']) {
        expect(outcomes.get(`${command} ${answer}`) ?? 0, `${command} ${answer}`).toBeGreaterThanOrEqual(20);
      }
    }
  }, 120_000);

  it('answers the real ClaimStore and StatusLedger exactly as DynamoDB Local does', async () => {
    const mismatches: string[] = [];
    const outcomes = new Map<string, number>();
    let requests = 0;
    // One request at a time, in the order sent: claimMany's concurrent claims must reach both in one order.
    let previous: Promise<unknown> = Promise.resolve();
    const mirrorToLocal: RequestInterceptor = (request, apply) => {
      const turn = previous.then(async () => {
        const raw = request as RawRequest;
        const fromLocal = await localAnswer(local, raw);
        let outcome: { output: Record<string, unknown> } | { error: unknown };
        try {
          outcome = { output: apply() };
        } catch (error) {
          outcome = { error };
        }
        const fromModel = answerOfOutcome(outcome);
        if (JSON.stringify(comparable(fromModel)) !== JSON.stringify(comparable(fromLocal))) {
          mismatches.push(mismatch(raw, fromLocal, fromModel));
        }
        requests += 1;
        const label = `${request.commandName} ${fromLocal.ok ? 'ok' : fromLocal.error}`;
        outcomes.set(label, (outcomes.get(label) ?? 0) + 1);
        if ('error' in outcome) throw outcome.error;
        return outcome.output;
      });
      previous = turn.catch(() => undefined);
      return turn;
    };
    const documentClient = modelDocumentClient(model, mirrorToLocal);
    let run = 0;

    await fc.assert(
      fc.asyncProperty(fc.array(domainAction, { minLength: 10, maxLength: 20 }), async (actions) => {
        const keyNamespace = `d${run++}`;
        let now = 1_770_000_000_000;
        const clock = () => now;
        const claims = new ClaimStore({ documentClient, tableName, keyNamespace, clock });
        const ledger = new StatusLedger({
          documentClient,
          tableName,
          keyNamespace,
          retentionDays: 8,
          clock,
        });
        const held: ClaimHandle[] = [];
        const event = (index: number) => ({ key: `msg:wamid.E${index}`, field: 'messages' });
        for (const action of actions) {
          // Outcomes (a lost claim, a failed release) are the store's answers; only mismatches fail the test.
          await perform(action).catch(() => undefined);
          expect(mismatches, JSON.stringify(action)).toEqual([]);
        }

        async function perform(action: DomainAction): Promise<void> {
          switch (action.a) {
            case 'tick':
              now += action.ms;
              return;
            case 'claim': {
              const results = await claims.claimMany(action.events.map(event), {
                deadlineMs: now + action.leaseMs,
              });
              held.push(...results.filter(isHeld));
              return;
            }
            case 'complete':
              if (held.length > 0) await claims.complete(held[action.held % held.length] as ClaimHandle);
              return;
            case 'release':
              if (held.length > 0) await claims.release(held[action.held % held.length] as ClaimHandle);
              return;
            case 'status':
              await ledger.record({
                wamid: `wamid.S${action.wamid}`,
                status: action.status,
                timestamp: action.timestamp,
                recipientParticipantId: action.participant ? '15550001111' : undefined,
              });
              return;
            case 'view':
              await ledger.view(`wamid.S${action.wamid}`);
              return;
          }
        }
      }),
      { seed: SEED, numRuns: DOMAIN_RUNS },
    );

    const items = await expectSameTable(local, model, tableName);
    console.info(
      `DynamoDB model vs DynamoDB Local, ClaimStore and StatusLedger: ${requests} requests in ${run} runs agreed, ${items} items in the table; ${[...outcomes].map(([outcome, count]) => `${outcome}: ${count}`).join(', ')}`,
    );
    expect(requests).toBeGreaterThanOrEqual(MIN_DOMAIN_REQUESTS);
    for (const outcome of [
      'PutItemCommand ok',
      'PutItemCommand ConditionalCheckFailedException',
      'UpdateItemCommand ok',
      'UpdateItemCommand ConditionalCheckFailedException',
      'DeleteItemCommand ok',
      'DeleteItemCommand ConditionalCheckFailedException',
    ]) {
      expect(outcomes.get(outcome) ?? 0, outcome).toBeGreaterThanOrEqual(5);
    }
  }, 120_000);
});

type DomainAction =
  | { readonly a: 'tick'; readonly ms: number }
  | { readonly a: 'claim'; readonly events: readonly number[]; readonly leaseMs: number }
  | { readonly a: 'complete' | 'release'; readonly held: number }
  | {
      readonly a: 'status';
      readonly wamid: number;
      readonly status: string;
      readonly timestamp: number;
      readonly participant: boolean;
    }
  | { readonly a: 'view'; readonly wamid: number };

const SECOND = 1000;
const DAY = 86_400 * SECOND;

/** Ticks cross the lease (deadline + 10 s margin) and the 8-day retention, so takeovers and reclaims happen. */
const domainAction: fc.Arbitrary<DomainAction> = fc.oneof(
  {
    weight: 2,
    arbitrary: fc.record({
      a: fc.constant('tick' as const),
      ms: fc.constantFrom(SECOND, 15 * SECOND, 2 * 60 * SECOND, 9 * DAY),
    }),
  },
  {
    weight: 4,
    arbitrary: fc.record({
      a: fc.constant('claim' as const),
      // Repeats within one call cost nothing; distinct events run concurrently.
      events: fc.array(fc.nat({ max: 2 }), { minLength: 1, maxLength: 3 }),
      leaseMs: fc.constantFrom(SECOND, 30 * SECOND),
    }),
  },
  // A handle picked again may be released twice, or completed or released after a takeover: both refused.
  { weight: 2, arbitrary: fc.record({ a: fc.constant('complete' as const), held: fc.nat({ max: 5 }) }) },
  { weight: 3, arbitrary: fc.record({ a: fc.constant('release' as const), held: fc.nat({ max: 5 }) }) },
  {
    weight: 3,
    arbitrary: fc.record({
      a: fc.constant('status' as const),
      wamid: fc.nat({ max: 1 }),
      status: fc.constantFrom('sent', 'delivered', 'read', 'played', 'failed', 'deleted'),
      timestamp: fc.constantFrom(1_770_000_000, 1_770_000_060),
      participant: fc.boolean(),
    }),
  },
  { weight: 1, arbitrary: fc.record({ a: fc.constant('view' as const), wamid: fc.nat({ max: 1 }) }) },
);

/** Scans DynamoDB Local and compares every item with the model's; returns how many there are. */
async function expectSameTable(
  local: DynamoDBClient,
  model: DynamoDbModel,
  tableName: string,
): Promise<number> {
  const scanned = await scanAll(local, tableName);
  expect(model.items(tableName).map(normalizedItem).sort(byKey)).toEqual(
    scanned.map(normalizedItem).sort(byKey),
  );
  return scanned.length;
}

function byKey(a: Record<string, unknown>, b: Record<string, unknown>): number {
  const ka = JSON.stringify(a.pk);
  const kb = JSON.stringify(b.pk);
  return ka < kb ? -1 : ka > kb ? 1 : 0;
}

async function scanAll(client: DynamoDBClient, tableName: string): Promise<RawItem[]> {
  const items: RawItem[] = [];
  let start: RawItem | undefined;
  do {
    const page = await client.send(
      new ScanCommand({ TableName: tableName, ConsistentRead: true, ExclusiveStartKey: start }),
    );
    items.push(...(page.Items ?? []));
    start = page.LastEvaluatedKey;
  } while (start !== undefined);
  return items;
}

function mismatch(request: RawRequest, fromLocal: Answer, fromModel: Answer): string {
  const show = (value: unknown) =>
    JSON.stringify(value, (_key, inner) =>
      inner instanceof Uint8Array ? `bytes:${Buffer.from(inner).toString('hex')}` : inner,
    );
  return `${request.commandName} ${show(request.input)}\n  DynamoDB Local: ${show(fromLocal)}\n  model:          ${show(fromModel)}`;
}
