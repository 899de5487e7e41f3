/**
 * Raw (marshalled) attribute values as the SDK carries them: `{S}`, `{N}`, `{B}`, `{SS}`, `{NS}`, `{BS}`,
 * `{M}`, `{L}`, `{NULL}`, `{BOOL}`. Equality, ordering, size and input validation follow DynamoDB: numbers
 * compare as exact decimals, strings and binaries by their (UTF-8) bytes, sets without regard to order.
 */
import type { AttributeValue as SdkAttributeValue } from '@aws-sdk/client-dynamodb';
import { canonicalNumber, compareDecimals, parseDecimal } from './decimal-number.ts';
import { validationError } from './errors.ts';

export type AttributeValue = SdkAttributeValue;
export type RawItem = Record<string, AttributeValue>;

export const ATTRIBUTE_TYPES = ['S', 'N', 'B', 'SS', 'NS', 'BS', 'M', 'L', 'NULL', 'BOOL'] as const;
export type AttributeType = (typeof ATTRIBUTE_TYPES)[number];
const TYPE_NAMES: ReadonlySet<string> = new Set(ATTRIBUTE_TYPES);

type Fields = Partial<Record<AttributeType, unknown>>;

export function typeOf(value: AttributeValue): AttributeType {
  let type: AttributeType | undefined;
  let count = 0;
  for (const key in value) {
    if (TYPE_NAMES.has(key) && (value as Fields)[key as AttributeType] !== undefined) {
      type = key as AttributeType;
      count += 1;
    }
  }
  if (type === undefined || count !== 1) {
    throw validationError(
      'Supplied AttributeValue has more than one datatypes set, must contain exactly one of the supported datatypes',
    );
  }
  return type;
}

export function isAttributeType(text: string): text is AttributeType {
  return TYPE_NAMES.has(text);
}

const utf8 = new TextEncoder();

export function compareBytes(left: Uint8Array, right: Uint8Array): number {
  const length = Math.min(left.length, right.length);
  for (let i = 0; i < length; i++) {
    const difference = (left[i] as number) - (right[i] as number);
    if (difference !== 0) return difference < 0 ? -1 : 1;
  }
  return left.length === right.length ? 0 : left.length < right.length ? -1 : 1;
}

const SURROGATE = /[\uD800-\uDFFF]/;

/**
 * DynamoDB orders strings by their UTF-8 bytes, which is code point order. `<` on JS strings compares UTF-16
 * code units, which agrees except where a surrogate pair (a character above U+FFFF) meets U+E000–U+FFFF.
 */
export function compareStrings(left: string, right: string): number {
  if (!SURROGATE.test(left) && !SURROGATE.test(right)) return left < right ? -1 : left > right ? 1 : 0;
  return compareBytes(utf8.encode(left), utf8.encode(right));
}

export function utf8Length(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}

/**
 * Orders two scalar values of the same type (N, S or B); undefined when they cannot be ordered (different
 * types, or a type without an order), which makes a comparison condition false rather than an error.
 */
export function compareScalars(left: AttributeValue, right: AttributeValue): number | undefined {
  const type = typeOf(left);
  if (type !== typeOf(right)) return undefined;
  switch (type) {
    case 'N':
      return compareNumbers(left.N as string, right.N as string);
    case 'S':
      return compareStrings(left.S as string, right.S as string);
    case 'B':
      return compareBytes(left.B as Uint8Array, right.B as Uint8Array);
    default:
      return undefined;
  }
}

/** Integers below 2^53 (epoch milliseconds among them) compare as doubles; anything else as exact decimals. */
const SAFE_INTEGER = /^-?\d{1,15}$/;

function compareNumbers(left: string, right: string): number {
  if (SAFE_INTEGER.test(left) && SAFE_INTEGER.test(right)) return Math.sign(Number(left) - Number(right));
  return compareDecimals(parseDecimal(left), parseDecimal(right));
}

export function valuesEqual(left: AttributeValue, right: AttributeValue): boolean {
  const type = typeOf(left);
  if (type !== typeOf(right)) return false;
  switch (type) {
    case 'S':
    case 'N':
    case 'B':
      return compareScalars(left, right) === 0;
    case 'BOOL':
      return left.BOOL === right.BOOL;
    case 'NULL':
      return true;
    case 'SS':
    case 'NS':
    case 'BS': {
      const a = setElements(left);
      const b = setElements(right);
      return a.length === b.length && a.every((element) => b.some((other) => valuesEqual(element, other)));
    }
    case 'L': {
      const a = left.L as AttributeValue[];
      const b = right.L as AttributeValue[];
      return a.length === b.length && a.every((element, i) => valuesEqual(element, b[i] as AttributeValue));
    }
    case 'M': {
      const a = left.M as RawItem;
      const b = right.M as RawItem;
      const keys = Object.keys(a);
      return (
        keys.length === Object.keys(b).length &&
        keys.every(
          (key) => b[key] !== undefined && valuesEqual(a[key] as AttributeValue, b[key] as AttributeValue),
        )
      );
    }
  }
}

/** The elements of a set as scalar attribute values (`{SS: ['a']}` → `[{S: 'a'}]`). */
export function setElements(value: AttributeValue): AttributeValue[] {
  if (value.SS !== undefined) return value.SS.map((S) => ({ S }));
  if (value.NS !== undefined) return value.NS.map((N) => ({ N }));
  if (value.BS !== undefined) return value.BS.map((B) => ({ B }));
  return [];
}

/** The set type holding elements of a scalar type (S → SS), or undefined. */
export function setTypeOf(elementType: AttributeType): 'SS' | 'NS' | 'BS' | undefined {
  return elementType === 'S' ? 'SS' : elementType === 'N' ? 'NS' : elementType === 'B' ? 'BS' : undefined;
}

export function makeSet(type: 'SS' | 'NS' | 'BS', elements: readonly AttributeValue[]): AttributeValue {
  if (type === 'SS') return { SS: elements.map((element) => element.S as string) };
  if (type === 'NS') return { NS: elements.map((element) => element.N as string) };
  return { BS: elements.map((element) => element.B as Uint8Array) };
}

export function isSetType(type: AttributeType): type is 'SS' | 'NS' | 'BS' {
  return type === 'SS' || type === 'NS' || type === 'BS';
}

export function cloneValue(value: AttributeValue): AttributeValue {
  switch (typeOf(value)) {
    case 'B':
      return { B: Uint8Array.from(value.B as Uint8Array) };
    case 'SS':
      return { SS: [...(value.SS as string[])] };
    case 'NS':
      return { NS: [...(value.NS as string[])] };
    case 'BS':
      return { BS: (value.BS as Uint8Array[]).map((bytes) => Uint8Array.from(bytes)) };
    case 'L':
      return { L: (value.L as AttributeValue[]).map(cloneValue) };
    case 'M':
      return { M: cloneItem(value.M as RawItem) };
    default:
      return { ...value } as AttributeValue;
  }
}

export function cloneItem(item: RawItem): RawItem {
  return Object.fromEntries(Object.entries(item).map(([name, value]) => [name, cloneValue(value)]));
}

/**
 * Checks a value supplied in a request (item attribute or expression value) as DynamoDB does, and returns it
 * in the form DynamoDB stores: numbers canonical (`1.50` → `1.5`), a fresh copy throughout.
 */
export function validatedValue(value: AttributeValue): AttributeValue {
  const type = typeOf(value);
  switch (type) {
    case 'N':
      return { N: canonicalNumber(value.N as string) };
    case 'NULL':
      if (value.NULL !== true)
        throw validationError(
          'One or more parameter values were invalid: Null attribute value types must have the value of true',
        );
      return { NULL: true };
    case 'SS':
    case 'NS':
    case 'BS': {
      const elements = setElements(value).map(validatedValue);
      if (elements.length === 0) {
        throw validationError(
          `One or more parameter values were invalid: An ${type === 'SS' ? 'string' : type === 'NS' ? 'number' : 'binary'} set  may not be empty`,
        );
      }
      const unique = elements.filter(
        (element, i) => elements.findIndex((other) => valuesEqual(element, other)) === i,
      );
      if (unique.length !== elements.length) {
        throw validationError(`Input collection ${JSON.stringify(setElements(value))} contains duplicates.`);
      }
      return makeSet(type, elements);
    }
    case 'L':
      return { L: (value.L as AttributeValue[]).map(validatedValue) };
    case 'M':
      return {
        M: Object.fromEntries(
          Object.entries(value.M as RawItem).map(([name, inner]) => [name, validatedValue(inner)]),
        ),
      };
    default:
      return cloneValue(value);
  }
}
