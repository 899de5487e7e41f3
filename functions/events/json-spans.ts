/**
 * Walks a JSON text by character offsets, so that the receiver's splitter can copy Meta's own bytes for each
 * event instead of re-serialising them (no number or escape is ever rewritten, and no second, lossless parse is
 * needed on the hot path).
 *
 * Single pass: a caller descends into the containers it cares about through the callbacks and skips the
 * rest, so every character is visited about once. Only for text that `JSON.parse` has already accepted:
 * the walkers check structure just enough to find their way and throw `JsonSpanError` when what they find
 * is not what valid JSON would hold there.
 */

export interface Span {
  /** Offset of the value's first character. */
  readonly start: number;
  /** Offset just past the value's last character. */
  readonly end: number;
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

export function isObjectAt(text: string, position: number): boolean {
  return text.charCodeAt(position) === OPEN_BRACE;
}

export function isArrayAt(text: string, position: number): boolean {
  return text.charCodeAt(position) === OPEN_BRACKET;
}

export function isStringAt(text: string, position: number): boolean {
  return text.charCodeAt(position) === QUOTE;
}

/** Offset just past the string that opens at `position` (on its opening quote). */
export function skipString(text: string, position: number): number {
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

/**
 * Walks the members of the object whose `{` is at `position`, in text order (repeated names included).
 * `onMember` receives the decoded name, the offset of the value and the offset of the name's opening quote
 * (so that a member can be copied whole, name included), and returns the offset just past the value (from
 * `skipValue`, or from walking into it). Returns the offset just past the object.
 */
export function walkObject(
  text: string,
  position: number,
  onMember: (name: string, valueStart: number, nameStart: number) => number,
): number {
  if (text.charCodeAt(position) !== OPEN_BRACE) throw new JsonSpanError('not an object');
  let at = skipWhitespace(text, position + 1);
  if (text.charCodeAt(at) === CLOSE_BRACE) return at + 1;
  for (;;) {
    if (text.charCodeAt(at) !== QUOTE) throw new JsonSpanError('expected a member name');
    const nameStart = at;
    const nameEnd = skipString(text, at);
    const name = decodeString(text, at, nameEnd);
    at = skipWhitespace(text, nameEnd);
    if (text.charCodeAt(at) !== COLON) throw new JsonSpanError('expected a colon');
    at = skipWhitespace(text, onMember(name, skipWhitespace(text, at + 1), nameStart));
    const code = text.charCodeAt(at);
    if (code === CLOSE_BRACE) return at + 1;
    if (code !== COMMA) throw new JsonSpanError('expected a comma or the end of an object');
    at = skipWhitespace(text, at + 1);
  }
}

/**
 * Walks the elements of the array whose `[` is at `position`. `onElement` receives each element's offset and
 * returns the offset just past it. Returns the offset just past the array.
 */
export function walkArray(text: string, position: number, onElement: (start: number) => number): number {
  if (text.charCodeAt(position) !== OPEN_BRACKET) throw new JsonSpanError('not an array');
  let at = skipWhitespace(text, position + 1);
  if (text.charCodeAt(at) === CLOSE_BRACKET) return at + 1;
  for (;;) {
    at = skipWhitespace(text, onElement(at));
    const code = text.charCodeAt(at);
    if (code === CLOSE_BRACKET) return at + 1;
    if (code !== COMMA) throw new JsonSpanError('expected a comma or the end of an array');
    at = skipWhitespace(text, at + 1);
  }
}

/** The value of the string between `start` (its opening quote) and `end` (just past its closing quote). */
export function decodeString(text: string, start: number, end: number): string {
  const raw = text.slice(start + 1, end - 1);
  return raw.includes('\\') ? (JSON.parse(text.slice(start, end)) as string) : raw;
}

/**
 * Whether arrays and objects outside the strings of `text` nest deeper than `limit`. Unlike the walkers, for
 * any text, valid JSON or not: an unterminated string ends the count.
 */
export function nestingExceeds(text: string, limit: number): boolean {
  let depth = 0;
  let index = 0;
  while (index < text.length) {
    const code = text.charCodeAt(index);
    if (code === QUOTE) {
      try {
        index = skipString(text, index);
      } catch {
        return false; // an unterminated string: the parser reports where
      }
      continue;
    }
    if (code === OPEN_BRACKET || code === OPEN_BRACE) {
      if (++depth > limit) return true;
    } else if (code === CLOSE_BRACKET || code === CLOSE_BRACE) {
      depth--;
    }
    index++;
  }
  return false;
}
