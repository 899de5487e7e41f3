/**
 * Where values sit in a JSON text, as character offsets, so that the splitter can copy Meta's own bytes for
 * each event instead of re-serialising them (no number or escape is ever rewritten, and no second full parse
 * is needed on the hot path).
 *
 * Only for text that `JSON.parse` has already accepted: these readers check structure just enough to walk
 * it and throw `JsonSpanError` if what they find is not what valid JSON would hold at that point.
 */

export interface Span {
  /** Offset of the value's first character. */
  readonly start: number;
  /** Offset just past the value's last character. */
  readonly end: number;
}

export interface MemberSpan extends Span {
  /** The decoded member name. */
  readonly name: string;
}

export class JsonSpanError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'JsonSpanError';
  }
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const COMMA = 0x2c;
const COLON = 0x3a;

function isWhitespace(code: number): boolean {
  return code === 0x20 || code === 0x0a || code === 0x0d || code === 0x09;
}

export function skipWhitespace(text: string, position: number): number {
  let at = position;
  while (at < text.length && isWhitespace(text.charCodeAt(at))) at++;
  return at;
}

/** Offset just past the string that opens at `position` (on its opening quote). */
function skipString(text: string, position: number): number {
  let at = position + 1;
  for (;;) {
    const next = text.indexOf('"', at);
    if (next === -1) throw new JsonSpanError('unterminated string');
    // The quote is escaped only when an odd number of backslashes precede it.
    let backslashes = 0;
    for (let back = next - 1; back > position && text.charCodeAt(back) === BACKSLASH; back--) backslashes++;
    if (backslashes % 2 === 0) return next + 1;
    at = next + 1;
  }
}

/** Offset just past the value that starts at `position` (no leading whitespace). */
export function skipValue(text: string, position: number): number {
  const first = text.charCodeAt(position);
  if (first === QUOTE) return skipString(text, position);
  if (first !== OPEN_BRACE && first !== OPEN_BRACKET) {
    // A number or a literal: it ends at the next delimiter.
    let at = position;
    while (at < text.length) {
      const code = text.charCodeAt(at);
      if (code === COMMA || code === CLOSE_BRACE || code === CLOSE_BRACKET || isWhitespace(code)) break;
      at++;
    }
    if (at === position) throw new JsonSpanError(`no value at offset ${position}`);
    return at;
  }
  let depth = 0;
  let at = position;
  while (at < text.length) {
    const code = text.charCodeAt(at);
    if (code === QUOTE) {
      at = skipString(text, at);
      continue;
    }
    if (code === OPEN_BRACE || code === OPEN_BRACKET) depth++;
    else if (code === CLOSE_BRACE || code === CLOSE_BRACKET) {
      depth--;
      if (depth === 0) return at + 1;
    }
    at++;
  }
  throw new JsonSpanError('unterminated object or array');
}

/** The span of the single top-level value of a JSON text. */
export function rootSpan(text: string): Span {
  const start = skipWhitespace(text, 0);
  return { start, end: skipValue(text, start) };
}

/** The members of the object whose `{` is at `span.start`, in text order (repeated names included). */
export function objectMembers(text: string, span: Span): MemberSpan[] {
  if (text.charCodeAt(span.start) !== OPEN_BRACE) throw new JsonSpanError('not an object');
  const members: MemberSpan[] = [];
  let at = skipWhitespace(text, span.start + 1);
  if (text.charCodeAt(at) === CLOSE_BRACE) return members;
  for (;;) {
    if (text.charCodeAt(at) !== QUOTE) throw new JsonSpanError('expected a member name');
    const nameEnd = skipString(text, at);
    const name = decodeName(text, at, nameEnd);
    at = skipWhitespace(text, nameEnd);
    if (text.charCodeAt(at) !== COLON) throw new JsonSpanError('expected a colon');
    const start = skipWhitespace(text, at + 1);
    const end = skipValue(text, start);
    members.push({ name, start, end });
    at = skipWhitespace(text, end);
    const code = text.charCodeAt(at);
    if (code === CLOSE_BRACE) return members;
    if (code !== COMMA) throw new JsonSpanError('expected a comma or the end of an object');
    at = skipWhitespace(text, at + 1);
  }
}

/** The elements of the array whose `[` is at `span.start`, in order. */
export function arrayElements(text: string, span: Span): Span[] {
  if (text.charCodeAt(span.start) !== OPEN_BRACKET) throw new JsonSpanError('not an array');
  const elements: Span[] = [];
  let at = skipWhitespace(text, span.start + 1);
  if (text.charCodeAt(at) === CLOSE_BRACKET) return elements;
  for (;;) {
    const end = skipValue(text, at);
    elements.push({ start: at, end });
    at = skipWhitespace(text, end);
    const code = text.charCodeAt(at);
    if (code === CLOSE_BRACKET) return elements;
    if (code !== COMMA) throw new JsonSpanError('expected a comma or the end of an array');
    at = skipWhitespace(text, at + 1);
  }
}

/** The member `JSON.parse` would keep for `name`: the last one, as the last of repeated names wins. */
export function lastMember(members: readonly MemberSpan[], name: string): MemberSpan | undefined {
  for (let index = members.length - 1; index >= 0; index--) {
    const member = members[index];
    if (member?.name === name) return member;
  }
  return undefined;
}

export function isObjectAt(text: string, span: Span): boolean {
  return text.charCodeAt(span.start) === OPEN_BRACE;
}

export function isArrayAt(text: string, span: Span): boolean {
  return text.charCodeAt(span.start) === OPEN_BRACKET;
}

function decodeName(text: string, start: number, end: number): string {
  const raw = text.slice(start + 1, end - 1);
  return raw.includes('\\') ? (JSON.parse(text.slice(start, end)) as string) : raw;
}
