/**
 * Evaluates a parsed condition against an item (an absent item is an item with no attributes). Following
 * DynamoDB, an operand that cannot be compared (a missing attribute, two different types, a type without
 * an order) makes its predicate false, never an error.
 */
import {
  type AttributeValue,
  compareBytes,
  compareScalars,
  isSetType,
  type RawItem,
  setElements,
  typeOf,
  valuesEqual,
} from './attribute-value.ts';
import { UnsupportedByModelError } from './errors.ts';
import type { Condition, DocumentPath, Operand } from './expression-syntax.ts';

export function evaluateCondition(condition: Condition, item: RawItem | undefined): boolean {
  const attributes = item ?? {};
  const operand = (value: Operand) => evaluateOperand(value, attributes);
  switch (condition.kind) {
    case 'and':
      return evaluateCondition(condition.left, item) && evaluateCondition(condition.right, item);
    case 'or':
      return evaluateCondition(condition.left, item) || evaluateCondition(condition.right, item);
    case 'not':
      return !evaluateCondition(condition.condition, item);
    case 'attribute_exists':
      return resolvePath(attributes, condition.path) !== undefined;
    case 'attribute_not_exists':
      return resolvePath(attributes, condition.path) === undefined;
    case 'attribute_type': {
      const value = resolvePath(attributes, condition.path);
      return value !== undefined && typeOf(value) === condition.type;
    }
    case 'comparison':
      return compare(condition.comparator, operand(condition.left), operand(condition.right));
    case 'between': {
      const value = operand(condition.operand);
      const lower = operand(condition.lower);
      const upper = operand(condition.upper);
      if (value === undefined || lower === undefined || upper === undefined) return false;
      const aboveLower = compareScalars(value, lower);
      const belowUpper = compareScalars(value, upper);
      return aboveLower !== undefined && belowUpper !== undefined && aboveLower >= 0 && belowUpper <= 0;
    }
    case 'in': {
      const value = operand(condition.operand);
      return (
        value !== undefined &&
        condition.candidates.some((candidate) => {
          const other = operand(candidate);
          return other !== undefined && valuesEqual(value, other);
        })
      );
    }
    case 'begins_with':
      return beginsWith(operand(condition.operand), operand(condition.prefix));
    case 'contains':
      return contains(operand(condition.operand), operand(condition.element));
  }
}

export function evaluateOperand(operand: Operand, item: RawItem): AttributeValue | undefined {
  switch (operand.kind) {
    case 'value':
      return operand.value;
    case 'path':
      return resolvePath(item, operand.path);
    case 'size': {
      const value = resolvePath(item, operand.path);
      const size = value === undefined ? undefined : sizeOf(value);
      return size === undefined ? undefined : { N: String(size) };
    }
    default:
      throw new UnsupportedByModelError(`${operand.kind} in a condition`);
  }
}

/** The value at a document path (nested maps and lists included), or undefined where any step is missing. */
export function resolvePath(item: RawItem, path: DocumentPath): AttributeValue | undefined {
  let current: AttributeValue | undefined;
  for (const [position, element] of path.elements.entries()) {
    if ('name' in element) {
      const map = position === 0 ? item : current?.M;
      current = map?.[element.name];
    } else {
      current = current?.L?.[element.index];
    }
    if (current === undefined) return undefined;
  }
  return current;
}

/**
 * size(): the length of a string, bytes of a binary, elements of a set, list or map; undefined otherwise.
 * A string's length counts UTF-16 code units, as DynamoDB Local does (`size('😀é')` is 3): the developer
 * guide only says "the length of the string".
 */
function sizeOf(value: AttributeValue): number | undefined {
  switch (typeOf(value)) {
    case 'S':
      return (value.S as string).length;
    case 'B':
      return (value.B as Uint8Array).length;
    case 'SS':
    case 'NS':
    case 'BS':
      return setElements(value).length;
    case 'L':
      return (value.L as AttributeValue[]).length;
    case 'M':
      return Object.keys(value.M as RawItem).length;
    default:
      return undefined;
  }
}

function compare(
  comparator: string,
  left: AttributeValue | undefined,
  right: AttributeValue | undefined,
): boolean {
  if (comparator === '=') return left !== undefined && right !== undefined && valuesEqual(left, right);
  if (comparator === '<>') return left === undefined || right === undefined || !valuesEqual(left, right);
  if (left === undefined || right === undefined) return false;
  const order = compareScalars(left, right);
  if (order === undefined) return false;
  switch (comparator) {
    case '<':
      return order < 0;
    case '<=':
      return order <= 0;
    case '>':
      return order > 0;
    default:
      return order >= 0;
  }
}

function beginsWith(value: AttributeValue | undefined, prefix: AttributeValue | undefined): boolean {
  if (value === undefined || prefix === undefined) return false;
  if (value.S !== undefined && prefix.S !== undefined) return value.S.startsWith(prefix.S);
  if (value.B !== undefined && prefix.B !== undefined) {
    return (
      prefix.B.length <= value.B.length && compareBytes(value.B.subarray(0, prefix.B.length), prefix.B) === 0
    );
  }
  return false;
}

function contains(value: AttributeValue | undefined, element: AttributeValue | undefined): boolean {
  if (value === undefined || element === undefined) return false;
  const type = typeOf(value);
  if (type === 'S') return element.S !== undefined && (value.S as string).includes(element.S);
  if (type === 'B') return element.B !== undefined && containsBytes(value.B as Uint8Array, element.B);
  if (isSetType(type) || type === 'L') {
    const members = type === 'L' ? (value.L as AttributeValue[]) : setElements(value);
    return members.some((member) => valuesEqual(member, element));
  }
  return false;
}

function containsBytes(haystack: Uint8Array, needle: Uint8Array): boolean {
  for (let start = 0; start + needle.length <= haystack.length; start++) {
    if (compareBytes(haystack.subarray(start, start + needle.length), needle) === 0) return true;
  }
  return false;
}
