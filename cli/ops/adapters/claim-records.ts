/**
 * The claim table as the operator reads it: claim items by partition key (strongly consistent, so a claim
 * just taken or completed is seen), and the one write ops makes, deleting a claim exactly as it was read.
 */
import {
  BatchGetCommand,
  DeleteCommand,
  type DynamoDBDocumentClient,
  GetCommand,
} from '@aws-sdk/lib-dynamodb';
import {
  CLAIM_ATTRIBUTES,
  type ClaimSnapshot,
  snapshotFromItem,
} from 'whatsapp-webhook-dedup/functions/claims/claim-record';

/** BatchGetItem takes at most 100 keys. */
const BATCH_GET_KEYS = 100;
const BATCH_GET_ROUNDS = 8;

export type ForgetOutcome =
  | { readonly deleted: true }
  /** The item changed (or vanished) since it was read: nothing was deleted. */
  | { readonly deleted: false; readonly now: ClaimSnapshot | undefined };

export class ClaimRecords {
  readonly #documentClient: DynamoDBDocumentClient;
  readonly #tableName: string;

  constructor(options: { readonly documentClient: DynamoDBDocumentClient; readonly tableName: string }) {
    this.#documentClient = options.documentClient;
    this.#tableName = options.tableName;
  }

  async read(pk: string): Promise<ClaimSnapshot | undefined> {
    const { Item } = await this.#documentClient.send(
      new GetCommand({
        TableName: this.#tableName,
        Key: { [CLAIM_ATTRIBUTES.pk]: pk },
        ConsistentRead: true,
      }),
    );
    return Item === undefined ? undefined : snapshotFromItem(Item);
  }

  /** The claims of many keys (absent ones are missing from the map). */
  async readMany(pks: readonly string[]): Promise<Map<string, ClaimSnapshot>> {
    const found = new Map<string, ClaimSnapshot>();
    const unique = [...new Set(pks)];
    for (let start = 0; start < unique.length; start += BATCH_GET_KEYS) {
      let keys: Record<string, unknown>[] = unique
        .slice(start, start + BATCH_GET_KEYS)
        .map((pk) => ({ [CLAIM_ATTRIBUTES.pk]: pk }));
      for (let round = 1; keys.length > 0; round++) {
        if (round > BATCH_GET_ROUNDS) throw new Error(`BatchGetItem left ${keys.length} keys unprocessed.`);
        const output = await this.#documentClient.send(
          new BatchGetCommand({
            RequestItems: { [this.#tableName]: { Keys: keys, ConsistentRead: true } },
          }),
        );
        for (const item of output.Responses?.[this.#tableName] ?? []) {
          found.set(String(item[CLAIM_ATTRIBUTES.pk]), snapshotFromItem(item));
        }
        keys = (output.UnprocessedKeys?.[this.#tableName]?.Keys ?? []) as Record<string, unknown>[];
        if (keys.length > 0) await new Promise((resolve) => setTimeout(resolve, 50 * 2 ** round));
      }
    }
    return found;
  }

  /**
   * Deletes the claim only if it still has the owner and state it was read with, so that a claim taken
   * over or completed in between is never deleted unseen.
   */
  async deleteAsRead(pk: string, read: Pick<ClaimSnapshot, 'owner' | 'state'>): Promise<ForgetOutcome> {
    try {
      await this.#documentClient.send(
        new DeleteCommand({
          TableName: this.#tableName,
          Key: { [CLAIM_ATTRIBUTES.pk]: pk },
          ...unchangedCondition({ owner: read.owner, state: read.state }),
        }),
      );
      return { deleted: true };
    } catch (error) {
      if (!(error instanceof Error && error.name === 'ConditionalCheckFailedException')) throw error;
      return { deleted: false, now: await this.read(pk) };
    }
  }
}

/** `#a = :a AND …`, with `attribute_not_exists(#a)` for an attribute that was absent when read. */
function unchangedCondition(read: Record<'owner' | 'state', string | undefined>) {
  const names: Record<string, string> = {};
  const values: Record<string, string> = {};
  const terms = Object.entries(read).map(([name, value]) => {
    names[`#${name}`] = CLAIM_ATTRIBUTES[name as keyof typeof read];
    if (value === undefined) return `attribute_not_exists(#${name})`;
    values[`:${name}`] = value;
    return `#${name} = :${name}`;
  });
  return {
    ConditionExpression: terms.join(' AND '),
    ExpressionAttributeNames: names,
    ...(Object.keys(values).length === 0 ? {} : { ExpressionAttributeValues: values }),
  };
}
