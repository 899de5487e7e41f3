import { describe, expect, it } from 'vitest';
import type { AttributeValue } from '../../../protocol-checker/dynamodb/attribute-value.ts';
import {
  ExpressionPlaceholders,
  parseCondition,
  parseProjection,
  parseUpdate,
} from '../../../protocol-checker/dynamodb/expression-parser.ts';
import type { Condition } from '../../../protocol-checker/dynamodb/expression-syntax.ts';

const VALUES: Record<string, AttributeValue> = {
  ':l': { L: [] },
  ':n': { N: '1' },
  ':m': { N: '5' },
  ':s': { S: 'a' },
  ':t': { S: 'z' },
  ':bool': { BOOL: true },
  ':set': { SS: ['a'] },
  ':type': { S: 'SS' },
  ':badType': { S: 'STRING' },
};

function condition(text: string, names: Record<string, string> = {}): Condition {
  return parseCondition(text, new ExpressionPlaceholders(names, VALUES));
}

/** The tree as a compact string: `(a OR (b AND c))`, leaves by their first path name or kind. */
function shape(tree: Condition): string {
  switch (tree.kind) {
    case 'and':
    case 'or':
      return `(${shape(tree.left)} ${tree.kind.toUpperCase()} ${shape(tree.right)})`;
    case 'not':
      return `NOT ${shape(tree.condition)}`;
    case 'comparison':
      return tree.left.kind === 'path' ? (tree.left.path.text as string) : tree.left.kind;
    default:
      return tree.kind;
  }
}

function validationMessage(parse: () => unknown): string {
  try {
    parse();
  } catch (error) {
    expect((error as Error).name).toBe('ValidationException');
    return (error as Error).message;
  }
  throw new Error('expected a ValidationException');
}

describe('condition precedence', () => {
  it.each([
    ['a = :n OR b = :n AND c = :n', '(a OR (b AND c))'],
    ['a = :n AND b = :n OR c = :n', '((a AND b) OR c)'],
    ['NOT a = :n AND b = :n', '(NOT a AND b)'],
    ['NOT a = :n OR b = :n AND NOT c = :n', '(NOT a OR (b AND NOT c))'],
    ['NOT (a = :n OR b = :n)', 'NOT (a OR b)'],
    ['(a = :n OR b = :n) AND c = :n', '((a OR b) AND c)'],
    ['a = :n or b = :n and not c = :n', '(a OR (b AND NOT c))'],
    ['a = :n OR b = :n OR c = :n', '((a OR b) OR c)'],
    [
      'attribute_exists(a) AND a BETWEEN :n AND :m OR c IN (:n, :m)',
      '((attribute_exists AND between) OR in)',
    ],
  ])('%s parses as %s (NOT binds tighter than AND, AND than OR)', (text, expected) => {
    expect(shape(condition(text))).toBe(expected);
  });

  it('reads the claim condition of the claim store as three alternatives, the last one a conjunction', () => {
    const names = { '#pk': 'pk', '#expiresAt': 'expiresAt', '#state': 'state', '#leaseUntil': 'leaseUntil' };
    const values = { ':nowS': { N: '1' }, ':nowMs': { N: '2' }, ':processing': { S: 'processing' } };
    const tree = parseCondition(
      'attribute_not_exists(#pk) OR #expiresAt < :nowS OR (#state = :processing AND #leaseUntil < :nowMs)',
      new ExpressionPlaceholders(names, values),
    );
    expect(shape(tree)).toBe('((attribute_not_exists OR #expiresAt) OR (#state AND #leaseUntil))');
  });
});

describe('parentheses', () => {
  it('accepts a grouped operand where a grouped condition does not fit', () => {
    expect(condition('(a) = (:n)')).toMatchObject({
      kind: 'comparison',
      left: { kind: 'path' },
      right: { kind: 'value' },
    });
    expect(condition('(size(a)) BETWEEN (:n) AND :m')).toMatchObject({
      kind: 'between',
      operand: { kind: 'size' },
    });
    expect(shape(condition('(a = :n) AND (NOT (b = :n))'))).toBe('(a AND NOT b)');
  });

  it('refuses parentheses that only wrap other parentheses, as DynamoDB does', () => {
    expect(validationMessage(() => condition('((a = :n))'))).toContain('redundant parentheses');
    expect(validationMessage(() => condition('NOT ((a = :n))'))).toContain('redundant parentheses');
    expect(validationMessage(() => condition('((a)) = :n'))).toContain('redundant parentheses');
    expect(shape(condition('((a = :n) OR (b = :n))'))).toBe('(a OR b)');
    // The parentheses of IN belong to its syntax: the operand inside may have its own.
    expect(condition('a IN ((:n))')).toMatchObject({ kind: 'in' });
  });
});

describe('names, values and reserved words', () => {
  it('refuses a reserved word written as a name, in any case, and accepts it through a #name', () => {
    expect(validationMessage(() => condition('state = :s'))).toContain('reserved keyword: state');
    expect(validationMessage(() => condition('Status = :s'))).toContain('reserved keyword: Status');
    expect(shape(condition('#state = :s', { '#state': 'state' }))).toBe('#state');
  });

  it('marks the placeholders it used and refuses undefined ones', () => {
    const placeholders = new ExpressionPlaceholders({ '#a': 'a', '#b': 'b' }, VALUES);
    parseCondition('#a = :n', placeholders);
    expect([...placeholders.usedNames]).toEqual(['#a']);
    expect([...placeholders.usedValues]).toEqual([':n']);
    expect(validationMessage(() => condition('#nope = :n'))).toContain('attribute name: #nope');
    expect(validationMessage(() => condition('a = :nope'))).toContain('attribute value: :nope');
  });

  it('parses nested document paths', () => {
    const tree = condition('a.b[2].c = :n');
    expect(tree).toMatchObject({
      left: { kind: 'path', path: { elements: [{ name: 'a' }, { name: 'b' }, { index: 2 }, { name: 'c' }] } },
    });
  });

  it('refuses names that do not start with a letter, and empty expressions', () => {
    expect(validationMessage(() => condition('_a = :n'))).toContain('Syntax error');
    expect(validationMessage(() => condition('  '))).toContain('can not be empty');
  });
});

describe('functions and operand types', () => {
  it('takes size() as a number operand, of a path only', () => {
    expect(condition('size(a) > :n')).toMatchObject({ kind: 'comparison', left: { kind: 'size' } });
    expect(validationMessage(() => condition('size(:s) > :n'))).toContain('requires a document path');
    expect(validationMessage(() => condition('size(a) < :bool'))).toContain('operand type: BOOL');
  });

  it('keeps function names case-sensitive and refuses condition functions as operands', () => {
    expect(validationMessage(() => condition('ATTRIBUTE_EXISTS(a)'))).toContain('Invalid function name');
    expect(validationMessage(() => condition('a = attribute_exists(b)'))).toContain('not allowed');
  });

  it('refuses BETWEEN bounds out of order or of two types, and accepts equal ones', () => {
    expect(validationMessage(() => condition('a BETWEEN :m AND :n'))).toContain('upper bound to be greater');
    expect(validationMessage(() => condition('a BETWEEN :n AND :s'))).toContain('same data type');
    expect(condition('a BETWEEN :n AND :n')).toMatchObject({ kind: 'between' });
    expect(validationMessage(() => condition('a BETWEEN :set AND :set'))).toContain('operand type: SS');
  });

  it('refuses a path compared with itself, as DynamoDB does', () => {
    expect(validationMessage(() => condition('a = a'))).toContain('first operand must be distinct');
    expect(validationMessage(() => condition('a IN (b, a)'))).toContain('first operand must be distinct');
    expect(condition('size(a) = a')).toMatchObject({ kind: 'comparison' });
  });

  it('checks attribute_type names and begins_with operand types', () => {
    expect(condition('attribute_type(a, :type)')).toMatchObject({ kind: 'attribute_type', type: 'SS' });
    expect(validationMessage(() => condition('attribute_type(a, :badType)'))).toContain(
      'Invalid attribute type name',
    );
    expect(validationMessage(() => condition('begins_with(a, :n)'))).toContain('operand type: N');
  });

  it('accepts up to 100 IN candidates', () => {
    const values = Object.fromEntries(Array.from({ length: 101 }, (_, i) => [`:v${i}`, { N: String(i) }]));
    const list = (count: number) => Object.keys(values).slice(0, count).join(', ');
    expect(parseCondition(`a IN (${list(100)})`, new ExpressionPlaceholders({}, values))).toMatchObject({
      kind: 'in',
    });
    expect(
      validationMessage(() => parseCondition(`a IN (${list(101)})`, new ExpressionPlaceholders({}, values))),
    ).toContain('too many operands');
  });
});

describe('update expressions', () => {
  const update = (text: string) => parseUpdate(text, new ExpressionPlaceholders({ '#t': 'time' }, VALUES));

  it('reads every clause, in any order and case, with the functions SET allows', () => {
    const parsed = update(
      'add hits :n, tags :set remove stale set #t = if_not_exists(#t, :n), amount = amount + :n delete tags2 :set',
    );
    expect(parsed.set.map((action) => action.value.kind)).toEqual(['if_not_exists', 'arithmetic']);
    expect(parsed.remove.map((path) => path.text)).toEqual(['stale']);
    expect(parsed.add.map((action) => action.path.text)).toEqual(['hits', 'tags']);
    expect(parsed.delete.map((action) => action.path.text)).toEqual(['tags2']);
  });

  it('refuses a clause used twice, ADD of a string, DELETE of a number, and size() in SET', () => {
    expect(validationMessage(() => update('SET a = :n SET b = :n'))).toContain('can only be used once');
    expect(validationMessage(() => update('ADD a :s'))).toContain('operator or function: ADD');
    expect(validationMessage(() => update('DELETE a :n'))).toContain('operator or function: DELETE');
    expect(validationMessage(() => update('SET a = size(b)'))).toContain('not allowed in an update');
    expect(validationMessage(() => update('SET a = b + :s'))).toContain('operator or function: +');
  });

  it('takes grouped SET values and list_append only as a whole value', () => {
    expect(update('SET a = (b) + :n').set[0]?.value).toMatchObject({ kind: 'arithmetic' });
    expect(update('SET a = (:n + :m)').set[0]?.value).toMatchObject({ kind: 'arithmetic' });
    expect(validationMessage(() => update('SET a = (:n + :m) + :n'))).toContain('Syntax error');
    expect(update('SET a = list_append(if_not_exists(a, :l), :l)').set[0]?.value).toMatchObject({
      kind: 'list_append',
    });
    expect(validationMessage(() => update('SET a = list_append(list_append(:l, :l), :l)'))).toContain(
      'not allowed',
    );
    expect(validationMessage(() => update('SET a = if_not_exists(a, list_append(:l, :l))'))).toContain(
      'not allowed',
    );
    expect(validationMessage(() => update('SET a = if_not_exists(b, :n + :m)'))).toContain('Syntax error');
    expect(validationMessage(() => update('SET a = if_not_exists(b, b)'))).toContain(
      'first operand must be distinct',
    );
    expect(validationMessage(() => update('SET a = ((:n))'))).toContain('redundant parentheses');
  });

  it('parses projections as a list of paths', () => {
    const paths = parseProjection('a, #t, c.d', new ExpressionPlaceholders({ '#t': 'time' }));
    expect(paths.map((path) => path.elements)).toEqual([
      [{ name: 'a' }],
      [{ name: 'time' }],
      [{ name: 'c' }, { name: 'd' }],
    ]);
  });
});
