/**
 * An in-memory DynamoDB for the protocol checker: single-item PutItem, UpdateItem, DeleteItem and GetItem
 * with DynamoDB's conditional-write semantics, on raw (marshalled) requests as the SDK sends them. Each
 * request applies atomically, in the order `execute` is called; there is one copy of every item, so every
 * read is strongly consistent. `differential.test.ts` holds it to DynamoDB Local, request by request.
 *
 * It follows the developer guide; where the guide says nothing (what size() counts in a string, whether a
 * failed condition or a write to the key is reported first), it does what DynamoDB Local does. Where Local
 * departs from the guide, the guide wins: numbers are stored trimmed everywhere (Local keeps `1.50` in
 * UpdateItem values), and `size` is a reserved word (Local accepts it unescaped).
 *
 * Tables spring into being on first use with a string partition key (`pk` unless configured). Not modelled:
 * sort keys, indexes, Query/Scan/batch/transactions, nested update targets and projections, legacy
 * parameters (Expected, AttributeUpdates, AttributesToGet), the 400 KB item limit, consumed capacity, and TTL
 * deletion on its own (call `expireItems`). Any of them raises UnsupportedByModelError rather than a made-up
 * answer.
 */
import { CLAIM_TABLE_SCHEMA } from '../../../contract/claim-table-schema.ts';
import {
  type AttributeValue,
  cloneItem,
  cloneValue,
  type RawItem,
  typeOf,
  utf8Length,
  validatedValue,
} from './attribute-value.ts';
import { evaluateCondition, resolvePath } from './condition-evaluator.ts';
import { conditionalCheckFailed, UnsupportedByModelError, validationError } from './errors.ts';
import { ExpressionPlaceholders, parseCondition, parseProjection, parseUpdate } from './expression-parser.ts';
import { type Condition, type DocumentPath, firstOverlap, rootName } from './expression-syntax.ts';
import { applyUpdate, updateTargets } from './update-evaluator.ts';

export type { AttributeValue, RawItem } from './attribute-value.ts';

export type ModelCommandName =
  | 'PutItemCommand'
  | 'UpdateItemCommand'
  | 'DeleteItemCommand'
  | 'GetItemCommand';

export interface DynamoDbModelOptions {
  /** Partition key (type S) per table name. @default `pk` for every table (CLAIM_TABLE_SCHEMA) */
  readonly partitionKeys?: Readonly<Record<string, string>>;
}

type Input = Record<string, unknown>;
type Output = Record<string, unknown>;

const MAX_PARTITION_KEY_BYTES = 2048;
/** AWS TTL skips items whose TTL attribute lies more than five years in the past (developer guide, TTL). */
const TTL_MAX_AGE_SECONDS = 5 * 365 * 24 * 60 * 60;

const ACCEPTED_PARAMETERS: Readonly<Record<ModelCommandName, readonly string[]>> = {
  PutItemCommand: [
    'TableName',
    'Item',
    'ConditionExpression',
    'ExpressionAttributeNames',
    'ExpressionAttributeValues',
    'ReturnValues',
    'ReturnValuesOnConditionCheckFailure',
    'ReturnConsumedCapacity',
    'ReturnItemCollectionMetrics',
  ],
  UpdateItemCommand: [
    'TableName',
    'Key',
    'UpdateExpression',
    'ConditionExpression',
    'ExpressionAttributeNames',
    'ExpressionAttributeValues',
    'ReturnValues',
    'ReturnValuesOnConditionCheckFailure',
    'ReturnConsumedCapacity',
    'ReturnItemCollectionMetrics',
  ],
  DeleteItemCommand: [
    'TableName',
    'Key',
    'ConditionExpression',
    'ExpressionAttributeNames',
    'ExpressionAttributeValues',
    'ReturnValues',
    'ReturnValuesOnConditionCheckFailure',
    'ReturnConsumedCapacity',
    'ReturnItemCollectionMetrics',
  ],
  GetItemCommand: [
    'TableName',
    'Key',
    'ProjectionExpression',
    'ExpressionAttributeNames',
    'ConsistentRead',
    'ReturnConsumedCapacity',
  ],
};

export class DynamoDbModel {
  private readonly tables = new Map<string, Map<string, RawItem>>();
  private readonly partitionKeys: Readonly<Record<string, string>>;

  constructor(options: DynamoDbModelOptions = {}) {
    this.partitionKeys = options.partitionKeys ?? {};
  }

  /**
   * Executes one raw request as DynamoDB would and returns its raw output (without `$metadata`), or throws
   * the SDK's ConditionalCheckFailedException (`.Item` = the raw old item for ReturnValuesOnConditionCheckFailure
   * ALL_OLD) or a ValidationException.
   */
  execute(commandName: ModelCommandName | string, input: Input): Output {
    if (!isModelCommand(commandName)) throw new UnsupportedByModelError(commandName);
    const unsupported = Object.keys(input).filter(
      (parameter) => input[parameter] !== undefined && !ACCEPTED_PARAMETERS[commandName].includes(parameter),
    );
    if (unsupported.length > 0)
      throw new UnsupportedByModelError(`${commandName} with ${unsupported.join(', ')}`);
    if (input.ReturnConsumedCapacity !== undefined && input.ReturnConsumedCapacity !== 'NONE') {
      throw new UnsupportedByModelError(`ReturnConsumedCapacity ${String(input.ReturnConsumedCapacity)}`);
    }
    switch (commandName) {
      case 'PutItemCommand':
        return this.putItem(input);
      case 'UpdateItemCommand':
        return this.updateItem(input);
      case 'DeleteItemCommand':
        return this.deleteItem(input);
      case 'GetItemCommand':
        return this.getItem(input);
    }
  }

  /** Every item of a table, as deep copies. */
  items(tableName: string): RawItem[] {
    return [...this.table(tableName).values()].map(cloneItem);
  }

  item(tableName: string, key: RawItem): RawItem | undefined {
    const stored = this.table(tableName).get(this.keyOf(tableName, key, 'key'));
    return stored === undefined ? undefined : cloneItem(stored);
  }

  /**
   * Deletes what DynamoDB's TTL process may delete by `nowSeconds`: items whose `ttlAttribute` is a number of
   * epoch seconds before it (and no more than five years before it). DynamoDB does this days late at the
   * earliest convenience; the checker decides when. Returns the deleted items.
   */
  expireItems(
    tableName: string,
    nowSeconds: number,
    ttlAttribute: string = CLAIM_TABLE_SCHEMA.timeToLiveAttribute,
  ): RawItem[] {
    const table = this.table(tableName);
    const expired: RawItem[] = [];
    for (const [key, item] of table) {
      const ttl = item[ttlAttribute];
      if (ttl?.N === undefined) continue;
      const expiresAt = Number(ttl.N);
      if (expiresAt < nowSeconds && expiresAt >= nowSeconds - TTL_MAX_AGE_SECONDS) {
        table.delete(key);
        expired.push(item);
      }
    }
    return expired;
  }

  private putItem(input: Input): Output {
    const tableName = this.tableName(input);
    const returnValues = returnValuesOf(input, ['NONE', 'ALL_OLD']);
    const onFailure = onConditionFailureOf(input);
    const placeholders = placeholdersOf(input, ['ConditionExpression']);
    const condition = conditionOf(input, placeholders);
    checkAllUsed(placeholders);
    const rawItem = input.Item as RawItem | undefined;
    if (rawItem === undefined)
      throw validationError(
        "1 validation error detected: Value null at 'item' failed to satisfy constraint: Member must not be null",
      );
    if (Object.hasOwn(rawItem, '')) throw validationError('Empty attribute name');
    const item = Object.fromEntries(
      Object.entries(rawItem).map(([name, value]) => [name, validatedValue(value)]),
    );
    const key = this.keyOf(tableName, item, 'item');
    const table = this.table(tableName);
    const existing = table.get(key);
    checkCondition(condition, existing, onFailure);
    table.set(key, item);
    return returnValues === 'ALL_OLD' && existing !== undefined ? { Attributes: cloneItem(existing) } : {};
  }

  private updateItem(input: Input): Output {
    const tableName = this.tableName(input);
    const returnValues = returnValuesOf(input, ['NONE', 'ALL_OLD', 'UPDATED_OLD', 'ALL_NEW', 'UPDATED_NEW']);
    const onFailure = onConditionFailureOf(input);
    const key = this.keyOf(tableName, input.Key as RawItem | undefined, 'key');
    const placeholders = placeholdersOf(input, ['ConditionExpression', 'UpdateExpression']);
    const update =
      typeof input.UpdateExpression === 'string'
        ? parseUpdate(input.UpdateExpression, placeholders)
        : undefined;
    const condition = conditionOf(input, placeholders);
    checkAllUsed(placeholders);
    const targets = update === undefined ? [] : updateTargets(update);
    checkNoOverlap(targets, 'UpdateExpression');
    const table = this.table(tableName);
    const existing = table.get(key);
    checkCondition(condition, existing, onFailure);
    // DynamoDB Local refuses a write to the key only once the condition held (a failed condition wins).
    checkKeyUntouched(targets, this.partitionKeyOf(tableName));
    const before = existing ?? { [this.partitionKeyOf(tableName)]: { S: key } };
    const applied =
      update === undefined ? { item: cloneItem(before), updatedNames: [] } : applyUpdate(update, before);
    table.set(key, applied.item);
    const attributes = returnedAttributes(returnValues, existing, applied.item, applied.updatedNames);
    return attributes === undefined ? {} : { Attributes: attributes };
  }

  private deleteItem(input: Input): Output {
    const tableName = this.tableName(input);
    const returnValues = returnValuesOf(input, ['NONE', 'ALL_OLD']);
    const onFailure = onConditionFailureOf(input);
    const key = this.keyOf(tableName, input.Key as RawItem | undefined, 'key');
    const placeholders = placeholdersOf(input, ['ConditionExpression']);
    const condition = conditionOf(input, placeholders);
    checkAllUsed(placeholders);
    const table = this.table(tableName);
    const existing = table.get(key);
    checkCondition(condition, existing, onFailure);
    table.delete(key);
    return returnValues === 'ALL_OLD' && existing !== undefined ? { Attributes: cloneItem(existing) } : {};
  }

  private getItem(input: Input): Output {
    const tableName = this.tableName(input);
    const key = this.keyOf(tableName, input.Key as RawItem | undefined, 'key');
    const placeholders = placeholdersOf(input, ['ProjectionExpression']);
    const projection =
      typeof input.ProjectionExpression === 'string'
        ? parseProjection(input.ProjectionExpression, placeholders)
        : undefined;
    if (projection !== undefined) checkNoOverlap(projection, 'ProjectionExpression');
    checkAllUsed(placeholders);
    const existing = this.table(tableName).get(key);
    if (existing === undefined) return {};
    return { Item: projection === undefined ? cloneItem(existing) : projected(existing, projection) };
  }

  private tableName(input: Input): string {
    const tableName = input.TableName;
    if (typeof tableName !== 'string' || !/^[A-Za-z0-9_.-]{3,255}$/.test(tableName)) {
      throw validationError(`Invalid table name: ${String(tableName)}`);
    }
    return tableName;
  }

  private table(tableName: string): Map<string, RawItem> {
    let table = this.tables.get(tableName);
    if (table === undefined) {
      table = new Map();
      this.tables.set(tableName, table);
    }
    return table;
  }

  private partitionKeyOf(tableName: string): string {
    return this.partitionKeys[tableName] ?? CLAIM_TABLE_SCHEMA.partitionKey;
  }

  /** The partition key value of a request's Key (exactly the key attribute) or Item (the key among others). */
  private keyOf(tableName: string, attributes: RawItem | undefined, role: 'key' | 'item'): string {
    const keyName = this.partitionKeyOf(tableName);
    const names = Object.keys(attributes ?? {});
    if (role === 'key' && (names.length !== 1 || names[0] !== keyName)) {
      throw validationError('The provided key element does not match the schema');
    }
    const value = attributes?.[keyName];
    if (value === undefined)
      throw validationError(
        `One or more parameter values were invalid: Missing the key ${keyName} in the item`,
      );
    const type = typeOf(value);
    if (type !== 'S') {
      throw role === 'key'
        ? validationError('The provided key element does not match the schema')
        : validationError(
            `One or more parameter values were invalid: Type mismatch for key ${keyName} expected: S actual: ${type}`,
          );
    }
    const text = value.S as string;
    if (text === '') {
      throw validationError(
        `One or more parameter values are not valid. The AttributeValue for a key attribute cannot contain an empty string value. Key: ${keyName}`,
      );
    }
    if (utf8Length(text) > MAX_PARTITION_KEY_BYTES) {
      throw validationError(
        'One or more parameter values were invalid: Size of hashkey has exceeded the maximum size limit of 2048 bytes',
      );
    }
    return text;
  }
}

function isModelCommand(name: string): name is ModelCommandName {
  return name in ACCEPTED_PARAMETERS;
}

function returnValuesOf(input: Input, allowed: readonly string[]): string {
  const value = input.ReturnValues ?? 'NONE';
  if (typeof value !== 'string' || !allowed.includes(value))
    throw validationError('Return values set to invalid value');
  return value;
}

function onConditionFailureOf(input: Input): string {
  const value = input.ReturnValuesOnConditionCheckFailure ?? 'NONE';
  if (value !== 'NONE' && value !== 'ALL_OLD') {
    throw validationError(
      `1 validation error detected: Value '${String(value)}' at 'returnValuesOnConditionCheckFailure' failed to satisfy constraint: Member must satisfy enum value set: [ALL_OLD, NONE]`,
    );
  }
  return value;
}

/** The request's placeholders, validated as DynamoDB does before it parses any expression. */
function placeholdersOf(input: Input, expressions: readonly string[]): ExpressionPlaceholders {
  const names = input.ExpressionAttributeNames as Record<string, string> | undefined;
  const values = input.ExpressionAttributeValues as Record<string, AttributeValue> | undefined;
  const anyExpression = expressions.some((expression) => input[expression] !== undefined);
  if (names !== undefined) {
    if (!anyExpression)
      throw validationError('ExpressionAttributeNames can only be specified when using expressions');
    if (Object.keys(names).length === 0) throw validationError('ExpressionAttributeNames must not be empty');
  }
  if (values !== undefined) {
    if (!anyExpression)
      throw validationError('ExpressionAttributeValues can only be specified when using expressions');
    if (Object.keys(values).length === 0)
      throw validationError('ExpressionAttributeValues must not be empty');
  }
  const validatedValues = Object.fromEntries(
    Object.entries(values ?? {}).map(([placeholder, value]) => {
      try {
        return [placeholder, validatedValue(value)];
      } catch (error) {
        throw validationError(
          `ExpressionAttributeValues contains invalid value: ${(error as Error).message} for key ${placeholder}`,
        );
      }
    }),
  );
  return new ExpressionPlaceholders(names, validatedValues);
}

function conditionOf(input: Input, placeholders: ExpressionPlaceholders): Condition | undefined {
  return typeof input.ConditionExpression === 'string'
    ? parseCondition(input.ConditionExpression, placeholders)
    : undefined;
}

function checkAllUsed(placeholders: ExpressionPlaceholders): void {
  const unusedNames = Object.keys(placeholders.names).filter((name) => !placeholders.usedNames.has(name));
  if (unusedNames.length > 0) {
    throw validationError(
      `Value provided in ExpressionAttributeNames unused in expressions: keys: {${unusedNames.join(', ')}}`,
    );
  }
  const unusedValues = Object.keys(placeholders.values).filter(
    (value) => !placeholders.usedValues.has(value),
  );
  if (unusedValues.length > 0) {
    throw validationError(
      `Value provided in ExpressionAttributeValues unused in expressions: keys: {${unusedValues.join(', ')}}`,
    );
  }
}

function checkKeyUntouched(targets: readonly DocumentPath[], keyName: string): void {
  if (targets.some((target) => rootName(target) === keyName)) {
    throw validationError(
      `One or more parameter values were invalid: Cannot update attribute ${keyName}. This attribute is part of the key`,
    );
  }
}

function checkNoOverlap(paths: readonly DocumentPath[], expression: string): void {
  const overlap = firstOverlap(paths);
  if (overlap === undefined) return;
  const show = (path: DocumentPath) =>
    path.elements.map((element) => ('name' in element ? element.name : `[${element.index}]`)).join(', ');
  throw validationError(
    `Invalid ${expression}: Two document paths overlap with each other; must remove or rewrite one of these paths; path one: [${show(overlap[0])}], path two: [${show(overlap[1])}]`,
  );
}

function checkCondition(
  condition: Condition | undefined,
  existing: RawItem | undefined,
  onFailure: string,
): void {
  if (condition === undefined || evaluateCondition(condition, existing)) return;
  throw conditionalCheckFailed(
    onFailure === 'ALL_OLD' && existing !== undefined ? cloneItem(existing) : undefined,
  );
}

function returnedAttributes(
  returnValues: string,
  before: RawItem | undefined,
  after: RawItem,
  updatedNames: readonly string[],
): RawItem | undefined {
  const pick = (item: RawItem | undefined) => {
    const picked = Object.fromEntries(
      updatedNames.flatMap((name) => (item?.[name] === undefined ? [] : [[name, cloneValue(item[name])]])),
    );
    return Object.keys(picked).length === 0 ? undefined : picked;
  };
  switch (returnValues) {
    case 'ALL_OLD':
      return before === undefined ? undefined : cloneItem(before);
    case 'ALL_NEW':
      return cloneItem(after);
    case 'UPDATED_OLD':
      return pick(before);
    case 'UPDATED_NEW':
      return pick(after);
    default:
      return undefined;
  }
}

function projected(item: RawItem, paths: readonly DocumentPath[]): RawItem {
  const result: RawItem = {};
  for (const path of paths) {
    if (path.elements.length !== 1)
      throw new UnsupportedByModelError(`projecting the nested path ${path.text}`);
    const value = resolvePath(item, path);
    const name = (path.elements[0] as { name: string }).name;
    if (value !== undefined) result[name] = cloneValue(value);
  }
  return result;
}
