/**
 * The pieces a key is made of (docs/design.md §1), below the field rules: where parts are read from, what a
 * JSON object is, and how one part is written. Imports nothing of the rules, so that the rules' computed parts
 * (group-item.ts, content-digest.ts) may use it.
 */
import { isLosslessNumber } from 'lossless-json';
import { stringifyWebhookJson } from './parse-json.ts';
import type { JsonObject, JsonValue } from './types.ts';

/** The three objects a key part can be read from. */
export interface KeySources {
  readonly entry: JsonObject;
  readonly value: JsonObject;
  readonly item: JsonObject;
}

export function isJsonObject(candidate: unknown): candidate is JsonObject {
  return (
    typeof candidate === 'object' &&
    candidate !== null &&
    !Array.isArray(candidate) &&
    !isLosslessNumber(candidate)
  );
}

/**
 * One key part, docs/design.md §1: `-` for missing or null, strings verbatim (already unescaped by the parser),
 * numbers as written. Booleans print as their JSON literal. An object or array where a scalar was expected
 * (not a documented shape) prints as compact JSON rather than `-`, so that two different events never
 * collapse into one key and lose a side effect. A value holding `:` or `%`, or that is exactly `-`, is
 * percent-encoded ({@link encodeKeyPart}), so that no value can pass for a separator or for a missing part.
 */
export function renderKeyPart(part: unknown): string {
  switch (typeof part) {
    case 'string':
      return encodeKeyPart(part);
    case 'number':
    case 'boolean':
    case 'bigint':
      return String(part);
    case 'undefined':
      return MISSING_PART;
    default:
      if (part === null) return MISSING_PART;
      if (isLosslessNumber(part)) return part.value;
      try {
        return encodeKeyPart(stringifyWebhookJson(part as JsonValue));
      } catch {
        // Only a value nested too deeply to serialise gets here (native JSON.parse accepts any depth).
        return MISSING_PART;
      }
  }
}

const MISSING_PART = '-';
const NEEDS_ENCODING = /[:%]/;

/**
 * `%` → `%25`, `:` → `%3A`, and a value that is exactly `-` → `%2D`. Meta's ids, statuses, timestamps and
 * phone numbers hold none of these, so every key of Meta's payloads stays as it was.
 */
export function encodeKeyPart(value: string): string {
  if (value === MISSING_PART) return '%2D';
  if (!NEEDS_ENCODING.test(value)) return value;
  return value.replaceAll('%', '%25').replaceAll(':', '%3A');
}
