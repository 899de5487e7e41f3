/**
 * DynamoDB capacity as AWS bills it, measured on the wire: every request of a client is sent with
 * `ReturnConsumedCapacity: TOTAL`, and the units in each answer are summed per operation, inside the SDK's
 * retry loop (every attempt).
 *
 * A write refused by its condition (`ConditionalCheckFailedException`) still consumes write units in AWS:
 * "the larger of the existing item and the new item", at least 1 per KB (DynamoDB developer guide, read/write
 * operations). Neither DynamoDB nor DynamoDB Local returns `ConsumedCapacity` with that error (checked against
 * DynamoDB Local 1.25.1: the 400 body holds only the type and message), so such a write is counted by that
 * rule from the item in the request and the item returned by `ReturnValuesOnConditionCheckFailure: ALL_OLD`
 * where there is one. These units are reported apart (`failedConditionWru`) so that the split stays visible.
 */

export interface OperationCapacity {
  readonly requests: number;
  /** Write units the answers reported, plus the units of refused conditional writes. */
  readonly wru: number;
  readonly rru: number;
  readonly failedConditions: number;
  /** The share of `wru` counted by the rule for refused conditional writes, not reported by DynamoDB. */
  readonly failedConditionWru: number;
}

export interface CapacityMeter {
  byOperation(): Record<string, OperationCapacity>;
  total(): OperationCapacity;
  reset(): void;
}

type AttributeValue = Record<string, unknown>;
type Handler = (args: { input?: Record<string, unknown>; request?: unknown }) => Promise<unknown>;
interface AnyMiddlewareStack {
  add(
    middleware: (next: Handler, context: { commandName?: string }) => Handler,
    options: { step: 'initialize' | 'deserialize'; name: string; priority?: 'high' },
  ): void;
}

const WRITES = new Set(['PutItem', 'UpdateItem', 'DeleteItem', 'BatchWriteItem', 'TransactWriteItems']);
const KB = 1024;
let added = 0;

export function meterCapacity(client: { middlewareStack: unknown }): CapacityMeter {
  let seen: Record<string, { -readonly [K in keyof OperationCapacity]: OperationCapacity[K] }> = {};
  const entry = (operation: string) => {
    seen[operation] ??= { requests: 0, wru: 0, rru: 0, failedConditions: 0, failedConditionWru: 0 };
    return seen[operation];
  };
  const stack = client.middlewareStack as AnyMiddlewareStack;
  const id = ++added;
  stack.add(
    (next) => (args) => {
      if (args.input !== undefined) args.input.ReturnConsumedCapacity ??= 'TOTAL';
      return next(args);
    },
    { step: 'initialize', name: `returnConsumedCapacity${id}` },
  );
  stack.add(
    (next, context) => async (args) => {
      const operation = (context.commandName ?? 'unknown').replace(/Command$/, '');
      const counted = entry(operation);
      counted.requests++;
      try {
        const result = (await next(args)) as { output?: { ConsumedCapacity?: unknown } };
        for (const capacity of capacities(result.output?.ConsumedCapacity)) {
          const units = capacity.CapacityUnits ?? 0;
          if (capacity.WriteCapacityUnits !== undefined || capacity.ReadCapacityUnits !== undefined) {
            counted.wru += capacity.WriteCapacityUnits ?? 0;
            counted.rru += capacity.ReadCapacityUnits ?? 0;
          } else if (WRITES.has(operation)) counted.wru += units;
          else counted.rru += units;
        }
        return result;
      } catch (error) {
        if ((error as { name?: string }).name === 'ConditionalCheckFailedException') {
          const units = refusedWriteUnits(
            requestItem(args.request),
            (error as { Item?: AttributeValue }).Item,
          );
          counted.failedConditions++;
          counted.failedConditionWru += units;
          counted.wru += units;
        }
        throw error;
      }
    },
    // High priority: outside the SDK's deserializer (so the answer is parsed and a refusal thrown), inside
    // the retry loop of the finalizeRequest step (so every attempt passes).
    { step: 'deserialize', name: `consumedCapacity${id}`, priority: 'high' },
  );
  return {
    byOperation: () => structuredClone(seen),
    total: () =>
      Object.values(seen).reduce(
        (sum, op) => ({
          requests: sum.requests + op.requests,
          wru: sum.wru + op.wru,
          rru: sum.rru + op.rru,
          failedConditions: sum.failedConditions + op.failedConditions,
          failedConditionWru: sum.failedConditionWru + op.failedConditionWru,
        }),
        { requests: 0, wru: 0, rru: 0, failedConditions: 0, failedConditionWru: 0 },
      ),
    reset: () => {
      seen = {};
    },
  };
}

interface ConsumedCapacity {
  CapacityUnits?: number;
  WriteCapacityUnits?: number;
  ReadCapacityUnits?: number;
}

function capacities(value: unknown): ConsumedCapacity[] {
  if (value === undefined || value === null) return [];
  return (Array.isArray(value) ? value : [value]) as ConsumedCapacity[];
}

/** The `Item` of a PutItem on the wire (AttributeValue JSON), if the request has one. */
function requestItem(request: unknown): AttributeValue | undefined {
  const body = (request as { body?: unknown } | undefined)?.body;
  if (typeof body !== 'string') return undefined;
  return (JSON.parse(body) as { Item?: AttributeValue }).Item;
}

/** Write units of a refused conditional write: the larger of the two items, in KB rounded up, at least 1. */
export function refusedWriteUnits(newItem?: AttributeValue, existingItem?: AttributeValue): number {
  const bytes = Math.max(
    newItem ? dynamoDbItemBytes(newItem) : 0,
    existingItem ? dynamoDbItemBytes(existingItem) : 0,
  );
  return Math.max(1, Math.ceil(bytes / KB));
}

/**
 * An item's size as DynamoDB counts it (developer guide, "Item sizes and formats"): each attribute name's
 * UTF-8 bytes plus its value's: strings their UTF-8 bytes, numbers about one byte per two significant digits
 * plus one, binaries their bytes, booleans and nulls one byte, lists and maps 3 bytes plus one per element
 * plus their elements.
 */
export function dynamoDbItemBytes(item: AttributeValue): number {
  return Object.entries(item).reduce(
    (sum, [name, value]) => sum + utf8(name) + valueBytes(value as AttributeValue),
    0,
  );
}

function valueBytes(value: AttributeValue): number {
  const [type, content] = Object.entries(value)[0] ?? ['NULL', true];
  switch (type) {
    case 'S':
      return utf8(content as string);
    case 'N':
      return numberBytes(content as string);
    case 'B':
      return Buffer.byteLength(content as string, 'base64');
    case 'SS':
      return (content as string[]).reduce((sum, s) => sum + utf8(s), 0);
    case 'NS':
      return (content as string[]).reduce((sum, n) => sum + numberBytes(n), 0);
    case 'BS':
      return (content as string[]).reduce((sum, b) => sum + Buffer.byteLength(b, 'base64'), 0);
    case 'L':
      return (content as AttributeValue[]).reduce((sum, element) => sum + 1 + valueBytes(element), 3);
    case 'M':
      return Object.entries(content as Record<string, AttributeValue>).reduce(
        (sum, [name, element]) => sum + 1 + utf8(name) + valueBytes(element),
        3,
      );
    default:
      return 1;
  }
}

function numberBytes(number: string): number {
  const digits = number.replace(/^-/, '').replace('.', '').replace(/^0+/, '').replace(/0+$/, '');
  return Math.ceil(digits.length / 2) + 1;
}

function utf8(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}
