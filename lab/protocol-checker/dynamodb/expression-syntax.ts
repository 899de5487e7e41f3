/**
 * The syntax trees of DynamoDB's condition, update and projection expressions, with placeholders already
 * resolved: a `#name` becomes the attribute name it stands for, a `:value` carries its (validated) value.
 */
import type { AttributeType, AttributeValue } from './attribute-value.ts';

export type PathElement = { readonly name: string } | { readonly index: number };

export interface DocumentPath {
  readonly elements: readonly PathElement[];
  /** As written in the expression, for error messages. */
  readonly text: string;
}

export type Operand =
  | { readonly kind: 'path'; readonly path: DocumentPath }
  | { readonly kind: 'value'; readonly placeholder: string; readonly value: AttributeValue }
  | { readonly kind: 'size'; readonly path: DocumentPath }
  | { readonly kind: 'if_not_exists'; readonly path: DocumentPath; readonly fallback: Operand }
  | { readonly kind: 'list_append'; readonly first: Operand; readonly second: Operand }
  | {
      readonly kind: 'arithmetic';
      readonly operator: '+' | '-';
      readonly left: Operand;
      readonly right: Operand;
    };

export type Comparator = '=' | '<>' | '<' | '<=' | '>' | '>=';

export type Condition =
  | {
      readonly kind: 'comparison';
      readonly comparator: Comparator;
      readonly left: Operand;
      readonly right: Operand;
    }
  | { readonly kind: 'between'; readonly operand: Operand; readonly lower: Operand; readonly upper: Operand }
  | { readonly kind: 'in'; readonly operand: Operand; readonly candidates: readonly Operand[] }
  | { readonly kind: 'attribute_exists' | 'attribute_not_exists'; readonly path: DocumentPath }
  | { readonly kind: 'attribute_type'; readonly path: DocumentPath; readonly type: AttributeType }
  | { readonly kind: 'begins_with'; readonly operand: Operand; readonly prefix: Operand }
  | { readonly kind: 'contains'; readonly operand: Operand; readonly element: Operand }
  | { readonly kind: 'and' | 'or'; readonly left: Condition; readonly right: Condition }
  | { readonly kind: 'not'; readonly condition: Condition };

export interface UpdateExpression {
  readonly set: readonly { readonly path: DocumentPath; readonly value: Operand }[];
  readonly remove: readonly DocumentPath[];
  readonly add: readonly { readonly path: DocumentPath; readonly value: AttributeValue }[];
  readonly delete: readonly { readonly path: DocumentPath; readonly value: AttributeValue }[];
}

/** The top-level attribute a path starts at. */
export function rootName(path: DocumentPath): string {
  return (path.elements[0] as { name: string }).name;
}

export function isTopLevel(path: DocumentPath): boolean {
  return path.elements.length === 1;
}

/** Two paths overlap when one is the other or lies inside it (`a` and `a.b`); DynamoDB refuses both in one expression. */
export function pathsOverlap(a: DocumentPath, b: DocumentPath): boolean {
  const shorter = a.elements.length <= b.elements.length ? a : b;
  const longer = shorter === a ? b : a;
  return shorter.elements.every(
    (element, i) => JSON.stringify(element) === JSON.stringify(longer.elements[i]),
  );
}

/** The first pair of overlapping paths, in the order written, or undefined. */
export function firstOverlap(
  paths: readonly DocumentPath[],
): readonly [DocumentPath, DocumentPath] | undefined {
  for (const [i, path] of paths.entries()) {
    const earlier = paths.slice(0, i).find((other) => pathsOverlap(other, path));
    if (earlier !== undefined) return [earlier, path];
  }
  return undefined;
}
