/**
 * Builds an event's key from its recipe (field-rules.ts): reads each part, with its fallback, and joins the
 * rendered parts (key-parts.ts).
 */
import { isLosslessNumber } from 'lossless-json';
import type { EventRecipe, KeyPart, RecipePart } from './field-rules.ts';
import { isJsonObject, type KeySources, renderKeyPart } from './key-parts.ts';

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
