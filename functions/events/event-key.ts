import { isLosslessNumber } from 'lossless-json';
import type { EventRecipe, KeyPart } from './field-rules.ts';
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
 * collapse into one key and lose a side effect.
 */
export function renderKeyPart(part: unknown): string {
  switch (typeof part) {
    case 'string':
      return part;
    case 'number':
    case 'boolean':
    case 'bigint':
      return String(part);
    case 'undefined':
      return '-';
    default:
      if (part === null) return '-';
      if (isLosslessNumber(part)) return part.value;
      try {
        return stringifyWebhookJson(part as JsonValue);
      } catch {
        // Only a value nested too deeply to serialise gets here (native JSON.parse accepts any depth).
        return '-';
      }
  }
}

function read(sources: KeySources, { root, path }: KeyPart): unknown {
  let current: unknown = sources[root];
  for (const name of path) {
    if (!isJsonObject(current)) return undefined;
    current = current[name];
  }
  return current;
}

/** The key of one event: the recipe's prefix and parts joined with `:`. */
export function buildEventKey(recipe: EventRecipe, sources: KeySources): string {
  let key = recipe.keyPrefix;
  for (const part of recipe.parts) {
    key += `:${renderKeyPart(read(sources, part))}`;
  }
  if (recipe.optionalPart !== undefined) {
    const extra = read(sources, recipe.optionalPart);
    if (extra !== undefined && extra !== null) key += `:${renderKeyPart(extra)}`;
  }
  return key;
}
