/**
 * The DynamoDB model against DynamoDB Local, request by request: random sequences over a few keys, each
 * request sent to both, answers compared (returned attributes, error name, the old item of a failed
 * condition); at the end, the whole table.
 */
import { CreateTableCommand, type DynamoDBClient, ScanCommand } from '@aws-sdk/client-dynamodb';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claimTableDefinition } from '../../../functions/claims/claim-table.ts';
import { createDynamoDbClient, uniqueName } from '../../support/aws-clients.ts';
import type { RawItem } from './attribute-value.ts';
import { type Answer, comparable, localAnswer, modelAnswer, normalizedItem } from './differential-oracle.ts';
import { type OperationSpec, operation, type RawRequest, render } from './differential-requests.ts';
import { DynamoDbModel } from './dynamodb-model.ts';

const SEED = 20_260_110;
const PARALLEL = 4;
const RUNS = 30;
const MIN_OPERATIONS = 2000;

describe('DynamoDbModel against DynamoDB Local', () => {
  let local: DynamoDBClient;
  let tableName: string;

  beforeAll(async () => {
    local = createDynamoDbClient();
    tableName = uniqueName('model-differential');
    // The claim table's schema, without TTL: the comparison must not race DynamoDB Local's TTL sweeps.
    await local.send(new CreateTableCommand(claimTableDefinition(tableName)));
  });

  afterAll(() => local.destroy());

  it('answers random operation sequences exactly as DynamoDB Local does', async () => {
    const model = new DynamoDbModel();
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
    const sequence = fc.array(operation, { minLength: 17, maxLength: 20 });
    await fc.assert(
      fc.asyncProperty(fc.array(sequence, { minLength: PARALLEL, maxLength: PARALLEL }), async (batch) => {
        await Promise.all(batch.map(runSequence));
      }),
      { seed: SEED, numRuns: RUNS },
    );

    const scanned = await scanAll(local, tableName);
    expect(model.items(tableName).map(normalizedItem).sort(byKey)).toEqual(
      scanned.map(normalizedItem).sort(byKey),
    );
    console.info(
      `DynamoDB model vs DynamoDB Local: ${operations} operations in ${sequences} sequences agreed, ${scanned.length} items at the end; ${[...outcomes].map(([outcome, count]) => `${outcome}: ${count}`).join(', ')}`,
    );
    expect(operations).toBeGreaterThanOrEqual(MIN_OPERATIONS);
    // Each kind of answer must have been compared often enough to mean something.
    for (const command of ['PutItemCommand', 'UpdateItemCommand', 'DeleteItemCommand']) {
      for (const answer of ['ok', 'ConditionalCheckFailedException', 'ValidationException']) {
        expect(outcomes.get(`${command} ${answer}`) ?? 0, `${command} ${answer}`).toBeGreaterThanOrEqual(20);
      }
    }
  }, 120_000);
});

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
