import { isLosslessNumber } from 'lossless-json';
import type { EventRecipe, KeyPart, RecipePart } from './field-rules.ts';
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

function readPath(sources: KeySources, { root, path }: KeyPart): unknown {
  let current: unknown = sources[root];
  for (const name of path) {
    if (!isJsonObject(current)) return undefined;
    current = current[name];
  }
  return current;
}

function isAbsent(value: unknown): boolean {
  return value === undefined || value === null || value === '';
}

/** A part's value, or its `otherwise` part's when this one is missing, null or empty and that one is not. */
function read(sources: KeySources, part: KeyPart): unknown {
  const value = readPath(sources, part);
  if (part.otherwise === undefined || !isAbsent(value)) return value;
  const alternative = read(sources, part.otherwise);
  return isAbsent(alternative) ? value : alternative;
}

/** Whether an item has the identity its recipe needs: a non-empty string or a number. */
export function hasUsableIdentity(recipe: EventRecipe, sources: KeySources): boolean {
  if (recipe.identity === undefined) return true;
  const id = read(sources, recipe.identity);
  return (typeof id === 'string' && id !== '') || typeof id === 'number' || isLosslessNumber(id);
}

/** One part of a key as it goes into the key: a member's value rendered, or a computed part's own text. */
function renderRecipePart(sources: KeySources, part: RecipePart): string {
  return 'compute' in part ? part.compute(sources) : renderKeyPart(read(sources, part));
}

/** The key of one event: the recipe's prefix and parts joined with `:`. */
export function buildEventKey(recipe: EventRecipe, sources: KeySources): string {
  let key = recipe.keyPrefix;
  for (const part of recipe.parts) {
    key += `:${renderRecipePart(sources, part)}`;
  }
  if (recipe.optionalPart !== undefined) {
    const extra = read(sources, recipe.optionalPart);
    if (extra !== undefined && extra !== null) key += `:${renderKeyPart(extra)}`;
  }
  return key;
}
