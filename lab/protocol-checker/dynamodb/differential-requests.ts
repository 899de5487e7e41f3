/**
 * fast-check generators of raw DynamoDB requests for the differential test: a few keys, a few attributes,
 * small value domains (so that conditions pass about as often as they fail), the expressions the claim
 * store uses verbatim, and generic conditions and updates over every operator, function and clause. Now
 * and then a request breaks a rule DynamoDB enforces (an unused placeholder, a reserved word, the key in
 * an update, two actions on one attribute), so validation is compared too.
 *
 * Specs are plain data (readable in a counterexample); `render` turns one into a request.
 */
import fc from 'fast-check';
import { CLAIM_CONDITION, OWNER_CONDITION } from '../../../functions/claims/claim-store.ts';
import type { AttributeValue, RawItem } from './attribute-value.ts';

const KEY_COUNT = 4;
/** Attribute names; `state`, `owner` and `size` are reserved words and need a `#name` placeholder. */
const ATTRIBUTES = ['s', 'n', 'ss', 'ns', 'l', 'm', 'b', 'flag', 'state', 'owner', 'size'] as const;
type AttributeName = (typeof ATTRIBUTES)[number];
const PREFERRED_TYPE: Record<AttributeName, string> = {
  s: 'S',
  n: 'N',
  ss: 'SS',
  ns: 'NS',
  l: 'L',
  m: 'M',
  b: 'B',
  flag: 'BOOL',
  state: 'S',
  owner: 'S',
  size: 'N',
};

export interface RawRequest {
  readonly commandName: 'PutItemCommand' | 'UpdateItemCommand' | 'DeleteItemCommand' | 'GetItemCommand';
  readonly input: Record<string, unknown>;
}

// --- values -----------------------------------------------------------------------------------------------

const strings = fc.constantFrom('', 'a', 'ab', 'b', 'é', 'z', '😀', '\uffff', 'processing', 'done');
// Other spellings of the same numbers (1.50, 1e1, -0, +2, .5) too: DynamoDB stores numbers trimmed.
const numbers = fc.constantFrom(
  '0',
  '1',
  '2',
  '3',
  '-1',
  '1.5',
  '10',
  '0.25',
  '12345678901234567890',
  '1.50',
  '1e1',
  '-0',
  '+2',
  '.5',
);
const binaries = fc.constantFrom([0], [1, 2], [255], [1], [2]).map((bytes) => Uint8Array.from(bytes));
const scalar: fc.Arbitrary<AttributeValue> = fc.oneof(
  strings.map((S) => ({ S })),
  numbers.map((N) => ({ N })),
  binaries.map((B) => ({ B })),
  fc.boolean().map((BOOL) => ({ BOOL })),
  fc.constant({ NULL: true }),
);
const stringSet = fc
  .uniqueArray(fc.constantFrom('a', 'b', 'c'), { minLength: 1, maxLength: 3 })
  .map((SS) => ({ SS }));
// `2.0` beside `2` is a duplicate DynamoDB refuses.
const numberSet = fc
  .uniqueArray(
    fc.oneof(
      { weight: 9, arbitrary: fc.constantFrom('1', '2', '3') },
      { weight: 1, arbitrary: fc.constant('2.0') },
    ),
    {
      minLength: 1,
      maxLength: 3,
    },
  )
  .map((NS) => ({ NS }));
const binarySet = fc
  .uniqueArray(fc.constantFrom('00', '0102', 'ff'), { minLength: 1, maxLength: 2 })
  .map((hex) => ({ BS: hex.map((bytes) => Uint8Array.from(Buffer.from(bytes, 'hex'))) }));
const list = fc.array(scalar, { maxLength: 2 }).map((L) => ({ L }));
const map = fc.dictionary(fc.constantFrom('x', 'y'), scalar, { maxKeys: 2 }).map((M) => ({ M }));
const anyValue: fc.Arbitrary<AttributeValue> = fc.oneof(scalar, stringSet, numberSet, binarySet, list, map);

function valueOfType(type: string): fc.Arbitrary<AttributeValue> {
  switch (type) {
    case 'S':
      return strings.map((S) => ({ S }));
    case 'N':
      return numbers.map((N) => ({ N }));
    case 'B':
      return binaries.map((B) => ({ B }));
    case 'BOOL':
      return fc.boolean().map((BOOL) => ({ BOOL }));
    case 'SS':
      return stringSet;
    case 'NS':
      return numberSet;
    case 'L':
      return list;
    default:
      return map;
  }
}

/** Mostly a value of the attribute's usual type, sometimes anything (cross-type comparisons are false). */
function valueFor(attribute: AttributeName): fc.Arbitrary<AttributeValue> {
  return fc.oneof(
    { weight: 9, arbitrary: valueOfType(PREFERRED_TYPE[attribute]) },
    { weight: 1, arbitrary: anyValue },
  );
}

// --- expression specs -------------------------------------------------------------------------------------

interface NameRef {
  readonly attribute: AttributeName;
  /** Written as is instead of through a `#name` (refused for reserved words). */
  readonly plain: boolean;
}

type OperandSpec =
  | { readonly op: 'group'; readonly inner: OperandSpec }
  | { readonly op: 'path'; readonly name: NameRef; readonly element?: 'x' | 0 }
  | { readonly op: 'value'; readonly value: AttributeValue }
  | { readonly op: 'size'; readonly name: NameRef };

type ConditionSpec =
  | {
      readonly c: 'compare';
      readonly comparator: string;
      readonly left: OperandSpec;
      readonly right: OperandSpec;
    }
  | {
      readonly c: 'between';
      readonly operand: OperandSpec;
      readonly lower: OperandSpec;
      readonly upper: OperandSpec;
    }
  | { readonly c: 'in'; readonly operand: OperandSpec; readonly candidates: readonly OperandSpec[] }
  | { readonly c: 'attribute_exists' | 'attribute_not_exists'; readonly name: NameRef }
  | { readonly c: 'attribute_type'; readonly name: NameRef; readonly type: string }
  | { readonly c: 'begins_with'; readonly name: NameRef; readonly prefix: AttributeValue }
  | { readonly c: 'contains'; readonly name: NameRef; readonly element: AttributeValue }
  | {
      readonly c: 'AND' | 'OR';
      readonly left: ConditionSpec;
      readonly right: ConditionSpec;
      readonly parens: number;
    }
  | { readonly c: 'NOT'; readonly inner: ConditionSpec; readonly parens: number };

const attributeName = fc.constantFrom(...ATTRIBUTES);
// DynamoDB Local accepts `size` unescaped although the reserved words list it; the model refuses it, as
// documented, so `size` is always written through a placeholder here.
const nameRef: fc.Arbitrary<NameRef> = fc
  .record({ attribute: attributeName, plain: fc.nat({ max: 24 }).map((n) => n === 0) })
  .map((ref) => (ref.attribute === 'size' ? { ...ref, plain: false } : ref));

const ungroupedOperand: fc.Arbitrary<OperandSpec> = fc.oneof(
  { weight: 3, arbitrary: nameRef.map((name) => ({ op: 'path' as const, name })) },
  {
    weight: 1,
    arbitrary: fc
      .record({ name: nameRef, element: fc.constantFrom('x' as const, 0 as const) })
      .map(({ name, element }) => ({ op: 'path' as const, name, element })),
  },
  {
    weight: 4,
    arbitrary: nameRef
      .chain((name) => valueFor(name.attribute))
      .map((value) => ({ op: 'value' as const, value })),
  },
  { weight: 1, arbitrary: nameRef.map((name) => ({ op: 'size' as const, name })) },
);
/** Now and then in parentheses, which DynamoDB accepts around any operand: `(a) = (:v)`. */
const operand: fc.Arbitrary<OperandSpec> = fc.oneof(
  { weight: 6, arbitrary: ungroupedOperand },
  { weight: 1, arbitrary: ungroupedOperand.map((inner) => ({ op: 'group' as const, inner })) },
);

const ORDERABLE = new Set(['N', 'S', 'B']);
const anyComparator = fc.constantFrom('=', '<>', '<', '<=', '>', '>=');
/** Ordering a set, list, map or boolean is refused up front: rare, so that most conditions get evaluated. */
const comparatorFor = (type: string) =>
  ORDERABLE.has(type)
    ? anyComparator
    : fc.oneof({ weight: 9, arbitrary: fc.constantFrom('=', '<>') }, { weight: 1, arbitrary: anyComparator });

/** Usually `path <op> value` of the path's usual type, which is what makes conditions pass and fail. */
const pathAgainstValue = nameRef.chain((name) =>
  fc.record({
    c: fc.constant('compare' as const),
    comparator: comparatorFor(PREFERRED_TYPE[name.attribute]),
    left: fc.constant<OperandSpec>({ op: 'path', name }),
    right: valueFor(name.attribute).map((value): OperandSpec => ({ op: 'value', value })),
  }),
);

/** Operands of BETWEEN: paths, size(), or numbers, strings and binaries (rarely anything else). */
const rangeOperand: fc.Arbitrary<OperandSpec> = fc.oneof(
  { weight: 3, arbitrary: nameRef.map((name) => ({ op: 'path' as const, name })) },
  { weight: 1, arbitrary: nameRef.map((name) => ({ op: 'size' as const, name })) },
  {
    weight: 4,
    arbitrary: fc
      .oneof(valueOfType('N'), valueOfType('S'), valueOfType('B'))
      .map((value) => ({ op: 'value' as const, value })),
  },
  { weight: 1, arbitrary: anyValue.map((value) => ({ op: 'value' as const, value })) },
);

const leafCondition: fc.Arbitrary<ConditionSpec> = fc.oneof(
  { weight: 4, arbitrary: pathAgainstValue },
  {
    weight: 2,
    arbitrary: fc.record({
      c: fc.constant('compare' as const),
      comparator: fc.oneof(fc.constantFrom('=', '<>'), anyComparator),
      left: operand,
      right: operand,
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      c: fc.constant('between' as const),
      operand: rangeOperand,
      lower: rangeOperand,
      upper: rangeOperand,
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      c: fc.constant('in' as const),
      operand,
      candidates: fc.array(operand, { minLength: 1, maxLength: 3 }),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      c: fc.constantFrom('attribute_exists' as const, 'attribute_not_exists' as const),
      name: nameRef,
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      c: fc.constant('attribute_type' as const),
      name: nameRef,
      type: fc.constantFrom('S', 'N', 'B', 'SS', 'NS', 'BS', 'M', 'L', 'NULL', 'BOOL'),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      c: fc.constant('begins_with' as const),
      name: nameRef,
      prefix: fc.oneof(valueOfType('S'), valueOfType('B')),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      c: fc.constant('contains' as const),
      name: nameRef,
      element: fc.oneof(scalar, stringSet),
    }),
  },
);

/** How many pairs of parentheses around a compound condition; two is redundant, which DynamoDB refuses. */
const parentheses = fc.oneof(
  { weight: 10, arbitrary: fc.constant(0) },
  { weight: 10, arbitrary: fc.constant(1) },
  { weight: 1, arbitrary: fc.constant(2) },
);

const condition: fc.Arbitrary<ConditionSpec> = fc.letrec<{ node: ConditionSpec }>((tie) => ({
  node: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    { weight: 3, arbitrary: leafCondition },
    {
      weight: 1,
      arbitrary: fc.record({
        c: fc.constantFrom('AND' as const, 'OR' as const),
        left: tie('node'),
        right: tie('node'),
        parens: parentheses,
      }),
    },
    {
      weight: 1,
      arbitrary: fc.record({ c: fc.constant('NOT' as const), inner: tie('node'), parens: parentheses }),
    },
  ),
})).node;

type SetRightSide =
  | { readonly rhs: 'value'; readonly value: AttributeValue }
  | { readonly rhs: 'path'; readonly name: NameRef }
  | { readonly rhs: 'if_not_exists'; readonly name: NameRef; readonly fallback: SetRightSide }
  | { readonly rhs: 'group'; readonly inner: SetRightSide }
  | { readonly rhs: '+' | '-'; readonly left: SetRightSide; readonly right: SetRightSide }
  | { readonly rhs: 'list_append'; readonly first: SetRightSide; readonly second: SetRightSide };

type UpdateAction =
  | { readonly clause: 'SET'; readonly target: NameRef; readonly value: SetRightSide }
  | { readonly clause: 'REMOVE'; readonly target: NameRef }
  | { readonly clause: 'ADD' | 'DELETE'; readonly target: NameRef; readonly value: AttributeValue };

const asValue = (value: AttributeValue): SetRightSide => ({ rhs: 'value', value });

/** if_not_exists(name, fallback): the fallback a value, sometimes a path or another if_not_exists. */
function ifNotExists(
  name: fc.Arbitrary<NameRef>,
  fallback: fc.Arbitrary<AttributeValue>,
): fc.Arbitrary<SetRightSide> {
  return fc.record({
    rhs: fc.constant('if_not_exists' as const),
    name,
    fallback: fc.oneof(
      { weight: 6, arbitrary: fallback.map(asValue) },
      { weight: 1, arbitrary: nameRef.map((ref): SetRightSide => ({ rhs: 'path', name: ref })) },
      {
        weight: 1,
        arbitrary: fc.record({ name: nameRef, value: fallback }).map(
          ({ name: inner, value }): SetRightSide => ({
            rhs: 'if_not_exists',
            name: inner,
            fallback: asValue(value),
          }),
        ),
      },
    ),
  });
}

/** Now and then in parentheses: DynamoDB takes `(a) + :v`, `(if_not_exists(a, :v))`, `(:v + :w)`. */
function sometimesGrouped(side: fc.Arbitrary<SetRightSide>): fc.Arbitrary<SetRightSide> {
  return fc.oneof(
    { weight: 6, arbitrary: side },
    { weight: 1, arbitrary: side.map((inner): SetRightSide => ({ rhs: 'group', inner })) },
  );
}

function setRightSide(target: AttributeName): fc.Arbitrary<SetRightSide> {
  const simple: fc.Arbitrary<SetRightSide> = fc.oneof(
    { weight: 3, arbitrary: valueFor(target).map(asValue) },
    { weight: 1, arbitrary: nameRef.map((name) => ({ rhs: 'path' as const, name })) },
    { weight: 2, arbitrary: ifNotExists(nameRef, valueFor(target)) },
  );
  const numberOperand: fc.Arbitrary<SetRightSide> = sometimesGrouped(
    fc.oneof(
      valueOfType('N').map(asValue),
      fc
        .constantFrom('n', 'size')
        .map((attribute) => ({ rhs: 'path' as const, name: { attribute, plain: false } })),
      ifNotExists(fc.constant({ attribute: 'n' as const, plain: false }), valueOfType('N')),
    ),
  );
  const listValue = list.map(asValue);
  // A list_append inside another is refused (list_append may only be a whole SET value).
  const listOperand: fc.Arbitrary<SetRightSide> = sometimesGrouped(
    fc.oneof(
      { weight: 3, arbitrary: listValue },
      {
        weight: 2,
        arbitrary: fc.constant({ rhs: 'path' as const, name: { attribute: 'l' as const, plain: false } }),
      },
      { weight: 2, arbitrary: ifNotExists(fc.constant({ attribute: 'l' as const, plain: false }), list) },
      {
        weight: 1,
        arbitrary: fc
          .tuple(listValue, listValue)
          .map(([first, second]): SetRightSide => ({ rhs: 'list_append', first, second })),
      },
    ),
  );
  return sometimesGrouped(
    fc.oneof(
      { weight: 4, arbitrary: simple },
      {
        weight: 2,
        arbitrary: fc.record({
          rhs: fc.constantFrom('+' as const, '-' as const),
          left: numberOperand,
          right: numberOperand,
        }),
      },
      {
        weight: 1,
        arbitrary: fc.record({
          rhs: fc.constant('list_append' as const),
          first: listOperand,
          second: listOperand,
        }),
      },
    ),
  );
}

function updateAction(target: NameRef): fc.Arbitrary<UpdateAction> {
  const setValued = fc.oneof(numberSet, stringSet, binarySet);
  return fc.oneof(
    {
      weight: 4,
      arbitrary: setRightSide(target.attribute).map((value) => ({ clause: 'SET' as const, target, value })),
    },
    { weight: 2, arbitrary: fc.constant({ clause: 'REMOVE' as const, target }) },
    {
      weight: 2,
      arbitrary: fc
        .oneof(
          { weight: 4, arbitrary: fc.oneof(valueOfType('N'), setValued) },
          { weight: 1, arbitrary: anyValue },
        )
        .map((value) => ({ clause: 'ADD' as const, target, value })),
    },
    {
      weight: 1,
      arbitrary: fc
        .oneof({ weight: 4, arbitrary: setValued }, { weight: 1, arbitrary: anyValue })
        .map((value) => ({ clause: 'DELETE' as const, target, value })),
    },
  );
}

/** Distinct targets mostly; sometimes one attribute twice, which DynamoDB refuses (overlapping paths). */
const updateActions: fc.Arbitrary<UpdateAction[]> = fc
  .record({
    targets: fc.uniqueArray(attributeName, { minLength: 1, maxLength: 4 }),
    repeat: fc.nat({ max: 24 }).map((n) => n === 0),
    plain: fc.nat({ max: 19 }).map((n) => n === 0),
  })
  .chain(({ targets, repeat, plain }) => {
    const names = [...targets, ...(repeat ? [targets[0] as AttributeName] : [])].map((attribute) => ({
      attribute,
      plain: plain && attribute !== 'size',
    }));
    return fc.tuple(...names.map(updateAction));
  })
  .chain((actions) => fc.shuffledSubarray(actions, { minLength: actions.length, maxLength: actions.length }));

/** Rare rule breakers, applied to a generic request. */
const ruleBreak = fc.oneof(
  { weight: 40, arbitrary: fc.constant(undefined) },
  fc.constantFrom('unused-value', 'unused-name', 'key-target', 'bad-return-values', 'empty-values'),
);
type RuleBreak =
  | 'unused-value'
  | 'unused-name'
  | 'key-target'
  | 'bad-return-values'
  | 'empty-values'
  | undefined;

// --- operations -------------------------------------------------------------------------------------------

export type OperationSpec =
  | {
      readonly op: 'claim';
      readonly key: number;
      readonly item: { state: string; owner: string; leaseUntil: string; expiresAt: string };
      readonly nowMs: string;
      readonly nowS: string;
      readonly returnOld: boolean;
    }
  | {
      readonly op: 'complete';
      readonly key: number;
      readonly me: string;
      readonly nowMs: string;
      readonly expiresAt: string;
    }
  | { readonly op: 'release'; readonly key: number; readonly me: string }
  | {
      readonly op: 'put';
      readonly key: number;
      readonly attributes: Readonly<Record<string, AttributeValue>>;
      readonly condition?: ConditionSpec;
      readonly returnValues?: string;
      readonly onFailure?: string;
      readonly breaks: RuleBreak;
    }
  | {
      readonly op: 'update';
      readonly key: number;
      readonly actions: readonly UpdateAction[] | undefined;
      readonly condition?: ConditionSpec;
      readonly returnValues?: string;
      readonly onFailure?: string;
      readonly breaks: RuleBreak;
    }
  | {
      readonly op: 'delete';
      readonly key: number;
      readonly condition?: ConditionSpec;
      readonly returnValues?: string;
      readonly onFailure?: string;
      readonly breaks: RuleBreak;
    }
  | { readonly op: 'get'; readonly key: number; readonly projection?: readonly NameRef[] };

const key = fc.nat({ max: KEY_COUNT - 1 });
const owner = fc.constantFrom('o1', 'o2', 'o3');
const smallMs = fc.constantFrom('10', '20', '30');
const smallS = fc.constantFrom('1', '2', '3');
const onFailure = fc.constantFrom(undefined, 'NONE', 'ALL_OLD', 'ALL_OLD');
const maybeCondition = fc.option(condition, { freq: 4, nil: undefined });

const claim = fc.record({
  op: fc.constant('claim' as const),
  key,
  item: fc.record({
    state: fc.constantFrom('processing', 'done'),
    owner,
    leaseUntil: smallMs,
    expiresAt: smallS,
  }),
  nowMs: fc.constantFrom('5', '15', '25', '35'),
  nowS: fc.constantFrom('0', '1', '2', '3', '4'),
  returnOld: fc.boolean(),
});
const complete = fc.record({
  op: fc.constant('complete' as const),
  key,
  me: owner,
  nowMs: smallMs,
  expiresAt: smallS,
});
const release = fc.record({ op: fc.constant('release' as const), key, me: owner });
const put = fc.record({
  op: fc.constant('put' as const),
  key,
  attributes: fc
    .uniqueArray(attributeName, { maxLength: 4 })
    .chain((names) =>
      fc
        .tuple(...names.map((name) => valueFor(name).map((value) => [name, value] as const)))
        .map((entries) => Object.fromEntries(entries)),
    ),
  condition: maybeCondition,
  returnValues: fc.constantFrom(undefined, 'NONE', 'ALL_OLD'),
  onFailure,
  breaks: ruleBreak,
});
const update = fc.record({
  op: fc.constant('update' as const),
  key,
  actions: fc.option(updateActions, { freq: 12, nil: undefined }),
  condition: maybeCondition,
  returnValues: fc.constantFrom(undefined, 'NONE', 'ALL_OLD', 'UPDATED_OLD', 'ALL_NEW', 'UPDATED_NEW'),
  onFailure,
  breaks: ruleBreak,
});
const remove = fc.record({
  op: fc.constant('delete' as const),
  key,
  condition: maybeCondition,
  returnValues: fc.constantFrom(undefined, 'NONE', 'ALL_OLD'),
  onFailure,
  breaks: ruleBreak,
});
const get = fc.record({
  op: fc.constant('get' as const),
  key,
  projection: fc.option(fc.array(nameRef, { minLength: 1, maxLength: 3 }), { nil: undefined }),
});

export const operation: fc.Arbitrary<OperationSpec> = fc.oneof(
  { weight: 3, arbitrary: claim },
  { weight: 2, arbitrary: complete },
  { weight: 2, arbitrary: release },
  { weight: 3, arbitrary: put },
  { weight: 5, arbitrary: update },
  { weight: 2, arbitrary: remove },
  { weight: 1, arbitrary: get },
);

// --- rendering --------------------------------------------------------------------------------------------

class Placeholders {
  readonly names: Record<string, string> = {};
  readonly values: Record<string, AttributeValue> = {};

  name(ref: NameRef): string {
    if (ref.plain) return ref.attribute;
    this.names[`#${ref.attribute}`] = ref.attribute;
    return `#${ref.attribute}`;
  }

  value(value: AttributeValue): string {
    const placeholder = `:v${Object.keys(this.values).length}`;
    this.values[placeholder] = value;
    return placeholder;
  }

  /** The request's ExpressionAttributeNames/Values, omitted when empty (DynamoDB refuses empty maps). */
  parameters(): Record<string, unknown> {
    return {
      ...(Object.keys(this.names).length > 0 ? { ExpressionAttributeNames: this.names } : {}),
      ...(Object.keys(this.values).length > 0 ? { ExpressionAttributeValues: this.values } : {}),
    };
  }
}

function renderOperand(spec: OperandSpec, placeholders: Placeholders): string {
  switch (spec.op) {
    case 'group':
      return `(${renderOperand(spec.inner, placeholders)})`;
    case 'value':
      return placeholders.value(spec.value);
    case 'size':
      return `size(${placeholders.name(spec.name)})`;
    default: {
      const path = placeholders.name(spec.name);
      return spec.element === undefined ? path : spec.element === 'x' ? `${path}.x` : `${path}[0]`;
    }
  }
}

function renderCondition(spec: ConditionSpec, placeholders: Placeholders): string {
  const operandText = (operand: OperandSpec) => renderOperand(operand, placeholders);
  switch (spec.c) {
    case 'compare':
      return `${operandText(spec.left)} ${spec.comparator} ${operandText(spec.right)}`;
    case 'between':
      return `${operandText(spec.operand)} BETWEEN ${operandText(spec.lower)} AND ${operandText(spec.upper)}`;
    case 'in':
      return `${operandText(spec.operand)} IN (${spec.candidates.map(operandText).join(', ')})`;
    case 'attribute_exists':
    case 'attribute_not_exists':
      return `${spec.c}(${placeholders.name(spec.name)})`;
    case 'attribute_type':
      return `attribute_type(${placeholders.name(spec.name)}, ${placeholders.value({ S: spec.type })})`;
    case 'begins_with':
      return `begins_with(${placeholders.name(spec.name)}, ${placeholders.value(spec.prefix)})`;
    case 'contains':
      return `contains(${placeholders.name(spec.name)}, ${placeholders.value(spec.element)})`;
    case 'NOT': {
      return parenthesized(`NOT ${renderCondition(spec.inner, placeholders)}`, spec.parens);
    }
    default: {
      // Without parentheses the text means what DynamoDB's precedence makes of it, on both sides alike.
      const text = `${renderCondition(spec.left, placeholders)} ${spec.c} ${renderCondition(spec.right, placeholders)}`;
      return parenthesized(text, spec.parens);
    }
  }
}

function parenthesized(text: string, pairs: number): string {
  return `${'('.repeat(pairs)}${text}${')'.repeat(pairs)}`;
}

function renderRightSide(spec: SetRightSide, placeholders: Placeholders): string {
  switch (spec.rhs) {
    case 'value':
      return placeholders.value(spec.value);
    case 'path':
      return placeholders.name(spec.name);
    case 'if_not_exists':
      return `if_not_exists(${placeholders.name(spec.name)}, ${renderRightSide(spec.fallback, placeholders)})`;
    case 'group':
      return `(${renderRightSide(spec.inner, placeholders)})`;
    case 'list_append':
      return `list_append(${renderRightSide(spec.first, placeholders)}, ${renderRightSide(spec.second, placeholders)})`;
    default:
      return `${renderRightSide(spec.left, placeholders)} ${spec.rhs} ${renderRightSide(spec.right, placeholders)}`;
  }
}

function renderUpdate(
  actions: readonly UpdateAction[],
  placeholders: Placeholders,
  breaks: RuleBreak,
): string {
  const clauses = new Map<string, string[]>();
  for (const action of actions) {
    const target = placeholders.name(action.target);
    const text =
      action.clause === 'SET'
        ? `${target} = ${renderRightSide(action.value, placeholders)}`
        : action.clause === 'REMOVE'
          ? target
          : `${target} ${placeholders.value(action.value)}`;
    clauses.set(action.clause, [...(clauses.get(action.clause) ?? []), text]);
  }
  if (breaks === 'key-target')
    clauses.set('SET', [...(clauses.get('SET') ?? []), `pk = ${placeholders.value({ S: 'other' })}`]);
  return [...clauses].map(([clause, texts]) => `${clause} ${texts.join(', ')}`).join(' ');
}

/** The request for `spec` on the key `<keyPrefix>k<n>`. */
export function render(spec: OperationSpec, keyPrefix: string, tableName: string): RawRequest {
  const pk = { S: `${keyPrefix}k${spec.key}` };
  const placeholders = new Placeholders();
  switch (spec.op) {
    case 'claim': {
      const item: RawItem = {
        pk,
        state: { S: spec.item.state },
        owner: { S: spec.item.owner },
        leaseUntil: { N: spec.item.leaseUntil },
        expiresAt: { N: spec.item.expiresAt },
        field: { S: 'messages' },
        claimedAt: { N: spec.nowMs },
        attempt: { N: '1' },
      };
      return {
        commandName: 'PutItemCommand',
        input: {
          TableName: tableName,
          Item: item,
          ConditionExpression: CLAIM_CONDITION,
          ExpressionAttributeNames: {
            '#pk': 'pk',
            '#expiresAt': 'expiresAt',
            '#state': 'state',
            '#leaseUntil': 'leaseUntil',
          },
          ExpressionAttributeValues: {
            ':nowS': { N: spec.nowS },
            ':nowMs': { N: spec.nowMs },
            ':processing': { S: 'processing' },
          },
          ReturnValues: spec.returnOld ? 'ALL_OLD' : 'NONE',
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        },
      };
    }
    case 'complete':
      return {
        commandName: 'UpdateItemCommand',
        input: {
          TableName: tableName,
          Key: { pk },
          // ClaimStore.complete's expression.
          UpdateExpression:
            'SET #state = :done, #doneAt = :nowMs, #expiresAt = :expiresAt, #attempt = :attempt',
          ConditionExpression: OWNER_CONDITION,
          ExpressionAttributeNames: {
            '#state': 'state',
            '#doneAt': 'doneAt',
            '#expiresAt': 'expiresAt',
            '#attempt': 'attempt',
            '#owner': 'owner',
          },
          ExpressionAttributeValues: {
            ':done': { S: 'done' },
            ':nowMs': { N: spec.nowMs },
            ':expiresAt': { N: spec.expiresAt },
            ':attempt': { N: '2' },
            ':me': { S: spec.me },
          },
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        },
      };
    case 'release':
      return {
        commandName: 'DeleteItemCommand',
        input: {
          TableName: tableName,
          Key: { pk },
          ConditionExpression: OWNER_CONDITION,
          ExpressionAttributeNames: { '#owner': 'owner' },
          ExpressionAttributeValues: { ':me': { S: spec.me } },
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        },
      };
    case 'get': {
      const projection = spec.projection?.map((ref) => placeholders.name(ref)).join(', ');
      return {
        commandName: 'GetItemCommand',
        input: {
          TableName: tableName,
          Key: { pk },
          ConsistentRead: true,
          ...(projection === undefined ? {} : { ProjectionExpression: projection }),
          ...placeholders.parameters(),
        },
      };
    }
    default:
      return renderGeneric(spec, pk, placeholders, tableName);
  }
}

function renderGeneric(
  spec: Extract<OperationSpec, { op: 'put' | 'update' | 'delete' }>,
  pk: AttributeValue,
  placeholders: Placeholders,
  tableName: string,
): RawRequest {
  const updateExpression =
    spec.op === 'update' && (spec.actions !== undefined || spec.breaks === 'key-target')
      ? renderUpdate(spec.actions ?? [], placeholders, spec.breaks)
      : undefined;
  const conditionExpression =
    spec.condition === undefined ? undefined : renderCondition(spec.condition, placeholders);
  if (spec.breaks === 'unused-value') placeholders.values[':unused'] = { S: 'x' };
  if (spec.breaks === 'unused-name') placeholders.names['#unused'] = 'unused';
  const parameters = placeholders.parameters();
  if (spec.breaks === 'empty-values') parameters.ExpressionAttributeValues = {};
  // DynamoDB Local fails an UpdateItem without UpdateExpression that asks for UPDATED_NEW, or UPDATED_OLD of
  // an existing item, with an InternalFailure (a 500). AWS documents no such failure: those are not sent.
  const returnValues =
    spec.breaks === 'bad-return-values'
      ? 'UPDATED_NEW'
      : spec.op === 'update' && updateExpression === undefined && spec.returnValues?.startsWith('UPDATED_')
        ? undefined
        : spec.returnValues;
  const common = {
    TableName: tableName,
    ...(conditionExpression === undefined ? {} : { ConditionExpression: conditionExpression }),
    ...parameters,
    ...(returnValues === undefined
      ? {}
      : { ReturnValues: spec.op === 'update' && spec.breaks === 'bad-return-values' ? 'ALL' : returnValues }),
    ...(spec.onFailure === undefined ? {} : { ReturnValuesOnConditionCheckFailure: spec.onFailure }),
  };
  switch (spec.op) {
    case 'put':
      return { commandName: 'PutItemCommand', input: { ...common, Item: { ...spec.attributes, pk } } };
    case 'delete':
      return { commandName: 'DeleteItemCommand', input: { ...common, Key: { pk } } };
    default:
      return {
        commandName: 'UpdateItemCommand',
        input: {
          ...common,
          Key: { pk },
          ...(updateExpression === undefined ? {} : { UpdateExpression: updateExpression }),
        },
      };
  }
}
