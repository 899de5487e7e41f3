/**
 * Applies a parsed update expression to an item. Every right-hand side is read from the item as it was
 * before the update (so `SET a = b, b = a` swaps), as DynamoDB does. Only top-level attributes can be
 * written: a nested target (`SET a.b = :v`, `REMOVE l[0]`) raises UnsupportedByModelError, since the
 * project never writes one.
 */
import {
  type AttributeValue,
  cloneItem,
  cloneValue,
  isSetType,
  makeSet,
  type RawItem,
  setElements,
  typeOf,
  valuesEqual,
} from './attribute-value.ts';
import { evaluateOperand, resolvePath } from './condition-evaluator.ts';
import { addDecimals, formatDecimal, negateDecimal, parseDecimal } from './decimal-number.ts';
import { UnsupportedByModelError, validationError } from './errors.ts';
import {
  type DocumentPath,
  isTopLevel,
  type Operand,
  rootName,
  type UpdateExpression,
} from './expression-syntax.ts';

export interface AppliedUpdate {
  readonly item: RawItem;
  /** The top-level attributes the expression wrote or removed (for ReturnValues UPDATED_OLD/UPDATED_NEW). */
  readonly updatedNames: readonly string[];
}

/** The names of the top-level attributes an update writes, checked to be writable. */
export function updateTargets(update: UpdateExpression): DocumentPath[] {
  const targets = [
    ...update.set.map((action) => action.path),
    ...update.remove,
    ...update.add.map((action) => action.path),
    ...update.delete.map((action) => action.path),
  ];
  for (const target of targets) {
    if (!isTopLevel(target)) throw new UnsupportedByModelError(`writing the nested path ${target.text}`);
  }
  return targets;
}

export function applyUpdate(update: UpdateExpression, before: RawItem): AppliedUpdate {
  const after = cloneItem(before);
  const assignments = update.set.map(
    (action) => [rootName(action.path), setValue(action.value, before)] as const,
  );
  for (const [name, value] of assignments) after[name] = value;
  for (const path of update.remove) delete after[rootName(path)];
  for (const action of update.add) {
    const name = rootName(action.path);
    after[name] = added(before[name], action.value);
  }
  for (const action of update.delete) {
    const name = rootName(action.path);
    const remaining = deleted(before[name], action.value);
    if (remaining === undefined) delete after[name];
    else after[name] = remaining;
  }
  return { item: after, updatedNames: [...new Set(updateTargets(update).map(rootName))] };
}

function setValue(operand: Operand, item: RawItem): AttributeValue {
  switch (operand.kind) {
    case 'value':
      return cloneValue(operand.value);
    case 'path': {
      const value = resolvePath(item, operand.path);
      if (value === undefined) throw missingAttribute();
      return cloneValue(value);
    }
    case 'if_not_exists': {
      const value = resolvePath(item, operand.path);
      return value === undefined ? setValue(operand.fallback, item) : cloneValue(value);
    }
    case 'list_append': {
      const first = setValue(operand.first, item);
      const second = setValue(operand.second, item);
      if (first.L === undefined || second.L === undefined) throw incorrectDataType();
      return { L: [...first.L, ...second.L] };
    }
    case 'arithmetic': {
      const left = setValue(operand.left, item);
      const right = setValue(operand.right, item);
      if (left.N === undefined || right.N === undefined) throw incorrectDataType();
      const rightNumber = parseDecimal(right.N);
      const sum = addDecimals(
        parseDecimal(left.N),
        operand.operator === '+' ? rightNumber : negateDecimal(rightNumber),
      );
      return { N: formatDecimal(sum) };
    }
    default:
      return evaluateOperand(operand, item) ?? missingAttribute();
  }
}

function added(existing: AttributeValue | undefined, value: AttributeValue): AttributeValue {
  if (existing === undefined) return cloneValue(value);
  const type = typeOf(value);
  if (typeOf(existing) !== type) throw incorrectDataType();
  if (type === 'N') {
    return {
      N: formatDecimal(addDecimals(parseDecimal(existing.N as string), parseDecimal(value.N as string))),
    };
  }
  const current = setElements(existing);
  const extra = setElements(value).filter(
    (element) => !current.some((member) => valuesEqual(member, element)),
  );
  return makeSet(type as 'SS' | 'NS' | 'BS', [...current, ...extra].map(cloneValue));
}

/** What remains of a set after DELETE; undefined when nothing remains (DynamoDB removes empty sets). */
function deleted(existing: AttributeValue | undefined, value: AttributeValue): AttributeValue | undefined {
  if (existing === undefined) return undefined;
  const type = typeOf(existing);
  if (type !== typeOf(value) || !isSetType(type)) throw incorrectDataType();
  const removed = setElements(value);
  const remaining = setElements(existing).filter(
    (member) => !removed.some((element) => valuesEqual(member, element)),
  );
  return remaining.length === 0 ? undefined : makeSet(type, remaining.map(cloneValue));
}

function missingAttribute(): never {
  throw validationError('The provided expression refers to an attribute that does not exist in the item');
}

function incorrectDataType() {
  return validationError('An operand in the update expression has an incorrect data type');
}
