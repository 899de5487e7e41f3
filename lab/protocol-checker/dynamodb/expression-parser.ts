/**
 * Parses DynamoDB expressions (developer guide, "Condition and filter expressions, operators, and functions"
 * and "Update expressions") into the trees of `expression-syntax.ts`, raising the ValidationExceptions
 * DynamoDB raises before it touches an item: syntax errors, undefined placeholders, reserved words used as
 * names, operand types that cannot work (`:bool < x`, `ADD x :string`), BETWEEN bounds out of order, a
 * clause used twice.
 *
 * Condition precedence, lowest first: OR, AND, NOT, then comparisons, BETWEEN, IN and functions.
 * Keywords are case-insensitive, function names case-sensitive.
 */
import {
  type AttributeType,
  type AttributeValue,
  compareScalars,
  isAttributeType,
  typeOf,
} from './attribute-value.ts';
import { validationError } from './errors.ts';
import type {
  Comparator,
  Condition,
  DocumentPath,
  Operand,
  PathElement,
  UpdateExpression,
} from './expression-syntax.ts';
import { isReservedWord } from './reserved-words.ts';

/** The request's placeholders, and which of them the expressions used (DynamoDB refuses unused ones). */
export class ExpressionPlaceholders {
  readonly usedNames = new Set<string>();
  readonly usedValues = new Set<string>();

  constructor(
    readonly names: Readonly<Record<string, string>> = {},
    readonly values: Readonly<Record<string, AttributeValue>> = {},
  ) {}

  name(placeholder: string, expression: ExpressionKind): string {
    const name = this.names[placeholder];
    if (name === undefined) {
      throw invalid(
        expression,
        `An expression attribute name used in the document path is not defined; attribute name: ${placeholder}`,
      );
    }
    this.usedNames.add(placeholder);
    return name;
  }

  value(placeholder: string, expression: ExpressionKind): AttributeValue {
    const value = this.values[placeholder];
    if (value === undefined) {
      throw invalid(
        expression,
        `An expression attribute value used in expression is not defined; attribute value: ${placeholder}`,
      );
    }
    this.usedValues.add(placeholder);
    return value;
  }
}

export type ExpressionKind = 'ConditionExpression' | 'UpdateExpression' | 'ProjectionExpression';

export function parseCondition(text: string, placeholders: ExpressionPlaceholders): Condition {
  const parser = new Parser(text, placeholders, 'ConditionExpression');
  const condition = parser.condition();
  parser.expectEnd();
  return condition;
}

export function parseUpdate(text: string, placeholders: ExpressionPlaceholders): UpdateExpression {
  const parser = new Parser(text, placeholders, 'UpdateExpression');
  const update = parser.update();
  parser.expectEnd();
  return update;
}

export function parseProjection(text: string, placeholders: ExpressionPlaceholders): DocumentPath[] {
  const parser = new Parser(text, placeholders, 'ProjectionExpression');
  const paths = parser.commaSeparated(() => parser.path());
  parser.expectEnd();
  return paths;
}

function invalid(expression: ExpressionKind, message: string) {
  return validationError(`Invalid ${expression}: ${message}`);
}

type TokenType = 'identifier' | 'name' | 'value' | 'number' | 'symbol' | 'end';

interface Token {
  readonly type: TokenType;
  readonly text: string;
  readonly position: number;
}

/** One token per match, tried in this order; names start with a letter (DynamoDB reports `_x` as a syntax error). */
const TOKEN =
  /\s+|(?<identifier>[A-Za-z][A-Za-z0-9_]*)|(?<name>#[A-Za-z0-9_]+)|(?<value>:[A-Za-z0-9_]+)|(?<number>\d+)|(?<symbol><>|<=|>=|[=<>()[\],.+-])/y;
const TOKEN_TYPES = ['identifier', 'name', 'value', 'number', 'symbol'] as const;

/** The checker sends the same few expressions many thousand times: their tokens are kept. */
const tokenCache = new Map<string, readonly Token[]>();
const TOKEN_CACHE_LIMIT = 1000;

function tokenize(text: string, expression: ExpressionKind): readonly Token[] {
  const cached = tokenCache.get(text);
  if (cached !== undefined) return cached;
  const tokens: Token[] = [];
  TOKEN.lastIndex = 0;
  while (TOKEN.lastIndex < text.length) {
    const position = TOKEN.lastIndex;
    const match = TOKEN.exec(text);
    if (match === null) {
      throw invalid(
        expression,
        `Syntax error; token: "${text[position]}", near: "${text.slice(Math.max(0, position - 5), position + 5)}"`,
      );
    }
    const type = TOKEN_TYPES.find((candidate) => match.groups?.[candidate] !== undefined);
    if (type !== undefined) tokens.push({ type, text: match[0], position });
  }
  tokens.push({ type: 'end', text: '<EOF>', position: text.length });
  if (tokenCache.size >= TOKEN_CACHE_LIMIT) tokenCache.clear();
  tokenCache.set(text, tokens);
  return tokens;
}

function matchParentheses(tokens: readonly Token[]): Map<number, number> {
  const closing = new Map<number, number>();
  const open: number[] = [];
  tokens.forEach((token, i) => {
    if (token.type !== 'symbol') return;
    if (token.text === '(') open.push(i);
    if (token.text === ')' && open.length > 0) closing.set(open.pop() as number, i);
  });
  return closing;
}

const COMPARATORS: readonly string[] = ['=', '<>', '<', '<=', '>', '>='];
const ORDERABLE_TYPES: readonly AttributeType[] = ['N', 'S', 'B'];
const CONDITION_FUNCTIONS = [
  'attribute_exists',
  'attribute_not_exists',
  'attribute_type',
  'begins_with',
  'contains',
];
const UPDATE_FUNCTIONS = ['if_not_exists', 'list_append'];
const MAX_IN_CANDIDATES = 100;
type Clause = 'SET' | 'REMOVE' | 'ADD' | 'DELETE';
const CLAUSES: readonly Clause[] = ['SET', 'REMOVE', 'ADD', 'DELETE'];

class Parser {
  private readonly tokens: readonly Token[];
  /** Token index of each `(` → token index of its `)`. */
  private readonly closingParenthesis: Map<number, number>;
  private index = 0;

  constructor(
    private readonly text: string,
    private readonly placeholders: ExpressionPlaceholders,
    private readonly expression: ExpressionKind,
  ) {
    if (text.trim() === '') throw invalid(expression, 'The expression can not be empty;');
    this.tokens = tokenize(text, expression);
    this.closingParenthesis = matchParentheses(this.tokens);
  }

  // --- conditions -------------------------------------------------------------------------------------

  condition(): Condition {
    let left = this.conjunction();
    while (this.acceptKeyword('OR')) left = { kind: 'or', left, right: this.conjunction() };
    return left;
  }

  private conjunction(): Condition {
    let left = this.negation();
    while (this.acceptKeyword('AND')) left = { kind: 'and', left, right: this.negation() };
    return left;
  }

  private negation(): Condition {
    if (this.acceptKeyword('NOT')) return { kind: 'not', condition: this.negation() };
    return this.predicate();
  }

  private predicate(): Condition {
    // `(` opens a grouped condition, or a grouped operand as in `(a) = :v`: try the first, then the second.
    if (this.peek().text === '(') {
      const grouped = this.attempt(() => {
        const inner = this.group(() => this.condition());
        if (this.startsComparison()) throw this.syntaxError(this.peek());
        return inner;
      });
      if (grouped !== undefined) return grouped;
    }
    const token = this.peek();
    if (
      token.type === 'identifier' &&
      CONDITION_FUNCTIONS.includes(token.text) &&
      this.peek(1).text === '('
    ) {
      return this.conditionFunction();
    }
    const left = this.conditionOperand();
    const next = this.peek();
    if (next.type === 'symbol' && COMPARATORS.includes(next.text)) {
      this.advance();
      const comparator = next.text as Comparator;
      const right = this.conditionOperand();
      this.requireDistinct(comparator, left, [right]);
      if (comparator !== '=' && comparator !== '<>') {
        this.requireStaticType(left, comparator, ORDERABLE_TYPES);
        this.requireStaticType(right, comparator, ORDERABLE_TYPES);
      }
      return { kind: 'comparison', comparator, left, right };
    }
    if (this.acceptKeyword('BETWEEN')) {
      const lower = this.conditionOperand();
      this.expectKeyword('AND');
      const upper = this.conditionOperand();
      this.requireDistinct('BETWEEN', left, [lower, upper]);
      for (const operand of [left, lower, upper]) this.requireStaticType(operand, 'BETWEEN', ORDERABLE_TYPES);
      if (lower.kind === 'value' && upper.kind === 'value') {
        const order = compareScalars(lower.value, upper.value);
        if (order === undefined) {
          throw invalid(
            this.expression,
            `The BETWEEN operator requires same data type for lower and upper bounds; lower bound operand: AttributeValue: ${JSON.stringify(lower.value)}, upper bound operand: AttributeValue: ${JSON.stringify(upper.value)}`,
          );
        }
        if (order > 0) {
          throw invalid(
            this.expression,
            `The BETWEEN operator requires upper bound to be greater than or equal to lower bound; lower bound operand: AttributeValue: ${JSON.stringify(lower.value)}, upper bound operand: AttributeValue: ${JSON.stringify(upper.value)}`,
          );
        }
      }
      return { kind: 'between', operand: left, lower, upper };
    }
    if (this.acceptKeyword('IN')) {
      this.expectSymbol('(');
      const candidates = this.commaSeparated(() => this.conditionOperand());
      this.expectSymbol(')');
      this.requireDistinct('IN', left, candidates);
      if (candidates.length > MAX_IN_CANDIDATES) {
        throw invalid(
          this.expression,
          `The IN operator is provided with too many operands; number of operands: ${candidates.length}`,
        );
      }
      return { kind: 'in', operand: left, candidates };
    }
    throw this.syntaxError(next);
  }

  private conditionFunction(): Condition {
    const name = this.advance().text;
    this.expectSymbol('(');
    let condition: Condition;
    switch (name) {
      case 'attribute_exists':
      case 'attribute_not_exists':
        condition = { kind: name, path: this.requirePath(this.conditionOperand(), name) };
        break;
      case 'attribute_type': {
        const path = this.requirePath(this.conditionOperand(), name);
        this.expectSymbol(',');
        const type = this.conditionOperand();
        if (type.kind !== 'value' || typeOf(type.value) !== 'S') {
          throw this.incorrectOperandType(name, type);
        }
        const typeName = type.value.S as string;
        if (!isAttributeType(typeName)) {
          throw invalid(
            this.expression,
            `Invalid attribute type name found; type: ${typeName}, valid types: {B,NULL,SS,BOOL,L,BS,N,NS,S,M}`,
          );
        }
        condition = { kind: name, path, type: typeName };
        break;
      }
      case 'begins_with': {
        const operand = this.conditionOperand();
        this.expectSymbol(',');
        const prefix = this.conditionOperand();
        this.requireDistinct(name, operand, [prefix]);
        this.requireStaticType(operand, name, ['S', 'B']);
        this.requireStaticType(prefix, name, ['S', 'B']);
        condition = { kind: name, operand, prefix };
        break;
      }
      default: {
        const operand = this.conditionOperand();
        this.expectSymbol(',');
        const element = this.conditionOperand();
        this.requireDistinct('contains', operand, [element]);
        condition = { kind: 'contains', operand, element };
      }
    }
    this.expectSymbol(')');
    return condition;
  }

  private conditionOperand(): Operand {
    if (this.peek().text === '(') return this.group(() => this.conditionOperand());
    const token = this.peek();
    if (token.type === 'value') return this.valueOperand();
    if (token.type === 'identifier' && this.peek(1).text === '(') {
      if (token.text !== 'size') {
        throw CONDITION_FUNCTIONS.includes(token.text) || UPDATE_FUNCTIONS.includes(token.text)
          ? invalid(
              this.expression,
              `The function is not allowed to be used this way in an expression; function: ${token.text}`,
            )
          : invalid(this.expression, `Invalid function name; function: ${token.text}`);
      }
      this.advance();
      this.expectSymbol('(');
      const path = this.requirePath(this.conditionOperand(), 'size');
      this.expectSymbol(')');
      return { kind: 'size', path };
    }
    return { kind: 'path', path: this.path() };
  }

  // --- updates ----------------------------------------------------------------------------------------

  update(): UpdateExpression {
    const update = { set: [], remove: [], add: [], delete: [] } as {
      set: { path: DocumentPath; value: Operand }[];
      remove: DocumentPath[];
      add: { path: DocumentPath; value: AttributeValue }[];
      delete: { path: DocumentPath; value: AttributeValue }[];
    };
    const seen = new Set<Clause>();
    do {
      const token = this.peek();
      const clause = CLAUSES.find(
        (keyword) => token.type === 'identifier' && token.text.toUpperCase() === keyword,
      );
      if (clause === undefined) throw this.syntaxError(token);
      this.advance();
      if (seen.has(clause)) {
        throw invalid(
          this.expression,
          `The "${clause}" section can only be used once in an update expression;`,
        );
      }
      seen.add(clause);
      switch (clause) {
        case 'SET':
          update.set.push(
            ...this.commaSeparated(() => {
              const path = this.path();
              this.expectSymbol('=');
              return { path, value: this.setValue() };
            }),
          );
          break;
        case 'REMOVE':
          update.remove.push(...this.commaSeparated(() => this.path()));
          break;
        case 'ADD':
          update.add.push(
            ...this.commaSeparated(() => {
              const path = this.path();
              const value = this.valueOperand();
              const type = typeOf(value.value);
              if (type !== 'N' && type !== 'SS' && type !== 'NS' && type !== 'BS')
                throw this.incorrectOperandType('ADD', value);
              return { path, value: value.value };
            }),
          );
          break;
        case 'DELETE':
          update.delete.push(
            ...this.commaSeparated(() => {
              const path = this.path();
              const value = this.valueOperand();
              const type = typeOf(value.value);
              if (type !== 'SS' && type !== 'NS' && type !== 'BS')
                throw this.incorrectOperandType('DELETE', value);
              return { path, value: value.value };
            }),
          );
          break;
      }
    } while (this.peek().type !== 'end');
    return update;
  }

  /**
   * A SET value: an operand, or `operand + operand`, or `operand - operand`, or a grouped value. DynamoDB
   * accepts `(a) + :v` and `(:v + :w)` but not `(:v + :w) + :x`, and list_append only as the whole value.
   */
  private setValue(): Operand {
    if (this.peek().text === '(') {
      const operandFirst = this.attempt(() => this.arithmeticOrOperand());
      if (operandFirst !== undefined) return operandFirst;
      return this.group(() => this.setValue());
    }
    return this.arithmeticOrOperand();
  }

  private arithmeticOrOperand(): Operand {
    const left = this.setOperand(true);
    const operator = this.peek();
    if (operator.type !== 'symbol' || (operator.text !== '+' && operator.text !== '-')) return left;
    if (left.kind === 'list_append') throw this.misplacedFunction('list_append');
    this.advance();
    const right = this.setOperand(false);
    this.requireStaticType(left, operator.text, ['N']);
    this.requireStaticType(right, operator.text, ['N']);
    return { kind: 'arithmetic', operator: operator.text, left, right };
  }

  /** `whole`: the operand is the entire SET value, the only place list_append may stand. */
  private setOperand(whole: boolean): Operand {
    if (this.peek().text === '(') return this.group(() => this.setOperand(whole));
    const token = this.peek();
    if (token.type === 'value') return this.valueOperand();
    if (token.type === 'identifier' && this.peek(1).text === '(') {
      if (!UPDATE_FUNCTIONS.includes(token.text)) {
        throw CONDITION_FUNCTIONS.includes(token.text) || token.text === 'size'
          ? invalid(
              this.expression,
              `The function is not allowed in an update expression; function: ${token.text}`,
            )
          : invalid(this.expression, `Invalid function name; function: ${token.text}`);
      }
      if (token.text === 'list_append' && !whole) throw this.misplacedFunction(token.text);
      this.advance();
      this.expectSymbol('(');
      let operand: Operand;
      if (token.text === 'if_not_exists') {
        const target = this.setOperand(false);
        const path = this.requirePath(target, token.text);
        this.expectSymbol(',');
        const fallback = this.setOperand(false);
        this.requireDistinct(token.text, target, [fallback]);
        operand = { kind: 'if_not_exists', path, fallback };
      } else {
        const first = this.setOperand(false);
        this.expectSymbol(',');
        const second = this.setOperand(false);
        this.requireStaticType(first, token.text, ['L']);
        this.requireStaticType(second, token.text, ['L']);
        operand = { kind: 'list_append', first, second };
      }
      this.expectSymbol(')');
      return operand;
    }
    return { kind: 'path', path: this.path() };
  }

  private misplacedFunction(name: string) {
    return invalid(
      this.expression,
      `The function is not allowed to be used this way in an expression; function: ${name}`,
    );
  }

  // --- shared -----------------------------------------------------------------------------------------

  path(): DocumentPath {
    const start = this.peek().position;
    const elements: PathElement[] = [this.pathName()];
    for (;;) {
      if (this.acceptSymbol('.')) {
        elements.push(this.pathName());
      } else if (this.acceptSymbol('[')) {
        const index = this.peek();
        if (index.type !== 'number') throw this.syntaxError(index);
        this.advance();
        this.expectSymbol(']');
        elements.push({ index: Number(index.text) });
      } else {
        break;
      }
    }
    return { elements, text: this.text.slice(start, this.peek().position).trim() };
  }

  private pathName(): PathElement {
    const token = this.peek();
    if (token.type === 'name') {
      this.advance();
      return { name: this.placeholders.name(token.text, this.expression) };
    }
    if (token.type === 'identifier') {
      if (isReservedWord(token.text)) {
        throw invalid(
          this.expression,
          `Attribute name is a reserved keyword; reserved keyword: ${token.text}`,
        );
      }
      this.advance();
      return { name: token.text };
    }
    throw this.syntaxError(token);
  }

  private valueOperand(): { kind: 'value'; placeholder: string; value: AttributeValue } {
    const token = this.peek();
    if (token.type !== 'value') throw this.syntaxError(token);
    this.advance();
    return {
      kind: 'value',
      placeholder: token.text,
      value: this.placeholders.value(token.text, this.expression),
    };
  }

  commaSeparated<T>(item: () => T): T[] {
    const items = [item()];
    while (this.acceptSymbol(',')) items.push(item());
    return items;
  }

  expectEnd(): void {
    const token = this.peek();
    if (token.type !== 'end') throw this.syntaxError(token);
  }

  /** `( inner )`; DynamoDB refuses a group that only wraps another group: `((a = :v))`. */
  private group<T>(inner: () => T): T {
    const open = this.index;
    this.expectSymbol('(');
    const close = this.closingParenthesis.get(open);
    if (
      this.peek().text === '(' &&
      close !== undefined &&
      this.closingParenthesis.get(open + 1) === close - 1
    ) {
      throw invalid(this.expression, 'The expression has redundant parentheses;');
    }
    const value = inner();
    this.expectSymbol(')');
    return value;
  }

  /** Runs one reading of the tokens ahead; on a ValidationException, rewinds and returns undefined. */
  private attempt<T>(parse: () => T): T | undefined {
    const start = this.index;
    try {
      return parse();
    } catch (error) {
      if ((error as Error).name !== 'ValidationException') throw error;
      this.index = start;
      return undefined;
    }
  }

  private startsComparison(): boolean {
    const token = this.peek();
    return (
      (token.type === 'symbol' && COMPARATORS.includes(token.text)) ||
      (token.type === 'identifier' && ['BETWEEN', 'IN'].includes(token.text.toUpperCase()))
    );
  }

  private requirePath(operand: Operand, functionName: string): DocumentPath {
    if (operand.kind !== 'path') {
      throw invalid(
        this.expression,
        `Operator or function requires a document path; operator or function: ${functionName}`,
      );
    }
    return operand.path;
  }

  /** DynamoDB refuses `a = a`, `a IN (b, a)`, `contains(a, a)`…: a path compared with itself. */
  private requireDistinct(operator: string, first: Operand, rest: readonly Operand[]): void {
    if (first.kind !== 'path') return;
    const same = (other: Operand) =>
      other.kind === 'path' && JSON.stringify(other.path.elements) === JSON.stringify(first.path.elements);
    if (rest.some(same)) {
      throw invalid(
        this.expression,
        `The first operand must be distinct from the remaining operands for this operator or function; operator: ${operator}, first operand: [${first.path.text}]`,
      );
    }
  }

  /** An operand whose type is known before reading the item (a value, or size()) must suit the operator. */
  private requireStaticType(operand: Operand, operator: string, allowed: readonly AttributeType[]): void {
    const type = operand.kind === 'value' ? typeOf(operand.value) : operand.kind === 'size' ? 'N' : undefined;
    if (type !== undefined && !allowed.includes(type)) throw this.incorrectOperandType(operator, operand);
  }

  private incorrectOperandType(operator: string, operand: Operand) {
    const type = operand.kind === 'value' ? typeOf(operand.value) : operand.kind;
    return invalid(
      this.expression,
      `Incorrect operand type for operator or function; operator or function: ${operator}, operand type: ${type}`,
    );
  }

  private syntaxError(token: Token) {
    const near = this.text.slice(Math.max(0, token.position - 10), token.position + token.text.length + 10);
    return invalid(this.expression, `Syntax error; token: "${token.text}", near: "${near}"`);
  }

  private peek(offset = 0): Token {
    return this.tokens[Math.min(this.index + offset, this.tokens.length - 1)] as Token;
  }

  private advance(): Token {
    const token = this.peek();
    this.index += 1;
    return token;
  }

  private acceptSymbol(symbol: string): boolean {
    const token = this.peek();
    if (token.type !== 'symbol' || token.text !== symbol) return false;
    this.advance();
    return true;
  }

  private expectSymbol(symbol: string): void {
    if (!this.acceptSymbol(symbol)) throw this.syntaxError(this.peek());
  }

  private acceptKeyword(keyword: string): boolean {
    const token = this.peek();
    if (token.type !== 'identifier' || token.text.toUpperCase() !== keyword) return false;
    this.advance();
    return true;
  }

  private expectKeyword(keyword: string): void {
    if (!this.acceptKeyword(keyword)) throw this.syntaxError(this.peek());
  }
}
