/**
 * A digest of a JSON value's content, for a key part of a field whose identity members Meta does not show
 * (`consumer_profile`, docs/design.md §1): two different values never share it, and a redelivery of the same
 * value, however its members are ordered or spaced, always gives the same one. Pure.
 */
import { createHash } from 'node:crypto';
import { isLosslessNumber } from 'lossless-json';
import { isJsonObject } from './key-parts.ts';
import type { JsonValue } from './types.ts';

/** Text written as it is, as opposed to a value still to be serialised. */
class Literal {
  constructor(readonly text: string) {}
}

const COMMA = new Literal(',');
const CLOSE_ARRAY = new Literal(']');
const CLOSE_OBJECT = new Literal('}');

/**
 * The lowercase hex SHA-256 of the canonical JSON of `value` (UTF-8): object members sorted by name (UTF-16
 * code units, as `Array.prototype.sort` orders), no whitespace, strings as `JSON.stringify` writes them, numbers
 * as written (a `LosslessNumber` keeps its lexeme; the lossless parser keeps every number that would not print
 * back unchanged as one).
 *
 * Iterative, so that no nesting depth the native parser accepts can overflow the stack and leave two
 * different values without a digest.
 *
 * @example
 * canonicalJsonSha256({ b: 1, a: [true, null] }) // sha256 of '{"a":[true,null],"b":1}'
 */
export function canonicalJsonSha256(value: JsonValue): string {
  const hash = createHash('sha256');
  const pending: (JsonValue | Literal)[] = [value];
  while (pending.length > 0) {
    const next = pending.pop() as JsonValue | Literal;
    if (next instanceof Literal) {
      hash.update(next.text);
    } else if (Array.isArray(next)) {
      hash.update('[');
      pending.push(CLOSE_ARRAY);
      for (let index = next.length - 1; index >= 0; index--) {
        pending.push(next[index] as JsonValue);
        if (index > 0) pending.push(COMMA);
      }
    } else if (isJsonObject(next)) {
      hash.update('{');
      pending.push(CLOSE_OBJECT);
      const names = Object.keys(next).sort();
      for (let index = names.length - 1; index >= 0; index--) {
        const name = names[index] as string;
        pending.push(next[name] as JsonValue, new Literal(`${JSON.stringify(name)}:`));
        if (index > 0) pending.push(COMMA);
      }
    } else {
      hash.update(scalarJson(next));
    }
  }
  return hash.digest('hex');
}

function scalarJson(value: JsonValue): string {
  if (isLosslessNumber(value)) return value.value;
  if (value === null) return 'null';
  // A number the native parser read is one whose lexeme prints back unchanged (parse-json.ts); `undefined`
  // (a member set by code, never by a parser) is written as `null`, as inside a JSON array.
  return JSON.stringify(value) ?? 'null';
}
