import { LosslessNumber, parse, stringify } from 'lossless-json';
import { nestingExceeds, skipString } from './json-spans.ts';
import type { JsonValue } from './types.ts';

export type JsonParseResult =
  | { readonly ok: true; readonly body: JsonValue }
  | { readonly ok: false; readonly reason: 'invalid-json'; readonly detail: string };

// `ignoreBOM: true` keeps a leading BOM in the text, so bytes and the same text as a string are judged alike
// (and like `JSON.parse`, which rejects a BOM). `fatal` turns malformed UTF-8 into an error, not U+FFFD.
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * Parses a webhook body without losing digits: every number whose lexeme prints back unchanged from a JS
 * number (`String(Number(lexeme)) === lexeme`) is a plain number; any other (ids above 2^53, `1.50`, `1e3`,
 * `-0`) is a `LosslessNumber` keeping its lexeme, so keys use it verbatim.
 *
 * Speed: lossless-json builds strings one character at a time (about 0.8 s per MB of message text), so the
 * body goes through native `JSON.parse` first and lossless-json only when a number lexeme outside the strings
 * would not round-trip (template ids, rare decimals). Both paths give the same value for the same text.
 *
 * Never throws: bytes that are not UTF-8 and syntax errors are `invalid-json` results whose detail names a
 * position, never the content. On the rare lossless path, nesting deeper than {@link MAX_LOSSLESS_NESTING}
 * levels is `invalid-json` too; Meta's bodies are under ten levels deep.
 */
export function parseWebhookJson(raw: string | Uint8Array): JsonParseResult {
  let text: string;
  if (typeof raw === 'string') {
    text = raw;
  } else if (raw instanceof Uint8Array) {
    try {
      text = utf8.decode(raw);
    } catch {
      return { ok: false, reason: 'invalid-json', detail: 'body is not valid UTF-8' };
    }
  } else {
    return { ok: false, reason: 'invalid-json', detail: 'body is neither text nor bytes' };
  }
  let native: JsonValue;
  try {
    native = JSON.parse(text) as JsonValue;
  } catch {
    // V8's message quotes the body around the error; lossless-json's gives a position we can keep alone.
    return parseLosslessly(text);
  }
  return numbersRoundTrip(text) ? { ok: true, body: native } : parseLosslessly(text);
}

/** Serialises a parsed body back to JSON; `LosslessNumber`s are written back exactly as they were read. */
export function stringifyWebhookJson(value: JsonValue): string {
  const text = stringify(value);
  if (text === undefined) {
    throw new TypeError('value has no JSON representation');
  }
  return text;
}

function parseNumber(lexeme: string): number | LosslessNumber {
  const number = Number(lexeme);
  return String(number) === lexeme ? number : new LosslessNumber(lexeme);
}

// Like `JSON.parse`, the last of two equal keys wins (lossless-json would throw by default).
const lastKeyWins = ({ newValue }: { newValue: unknown }) => newValue;

/**
 * lossless-json recurses per level and runs out of stack near 5000 levels, at a depth that moves with the JIT's
 * state and the caller's stack. A fixed limit well below that gives the receiver, the consumer and a replay
 * the same verdict on the same body.
 */
export const MAX_LOSSLESS_NESTING = 1000;

const TOO_DEEP = 'JSON nested too deeply to parse';

function parseLosslessly(text: string): JsonParseResult {
  if (nestingExceeds(text, MAX_LOSSLESS_NESTING))
    return { ok: false, reason: 'invalid-json', detail: TOO_DEEP };
  try {
    const body = parse(text, null, { parseNumber, onDuplicateKey: lastKeyWins }) as JsonValue;
    return { ok: true, body };
  } catch (error) {
    return { ok: false, reason: 'invalid-json', detail: describeParseError(error) };
  }
}

// Parser messages quote the offending characters, which may come from message text: keep the position only.
function describeParseError(error: unknown): string {
  if (error instanceof RangeError) {
    return TOO_DEEP;
  }
  const position = error instanceof Error ? /position (\d+)/.exec(error.message)?.[1] : undefined;
  return position === undefined ? 'invalid JSON' : `invalid JSON at position ${position}`;
}

const QUOTE = 0x22;
const MINUS = 0x2d;
const DIGIT_0 = 0x30;
const DIGIT_9 = 0x39;

function isNumberChar(code: number): boolean {
  // digits, `-`, `+`, `.`, `e`, `E`: the characters a JSON number lexeme is made of
  return (
    (code >= DIGIT_0 && code <= DIGIT_9) ||
    code === MINUS ||
    code === 0x2b ||
    code === 0x2e ||
    (code | 0x20) === 0x65
  );
}

/**
 * Whether every number lexeme of `text` (valid JSON) prints back unchanged from a JS number. Strings are
 * skipped with `indexOf`, so the cost is in the structure between them, not in message text.
 */
function numbersRoundTrip(text: string): boolean {
  const length = text.length;
  let index = 0;
  while (index < length) {
    const code = text.charCodeAt(index);
    if (code === QUOTE) {
      index = skipString(text, index);
    } else if (code === MINUS || (code >= DIGIT_0 && code <= DIGIT_9)) {
      const start = index;
      do index++;
      while (index < length && isNumberChar(text.charCodeAt(index)));
      const lexeme = text.slice(start, index);
      if (String(Number(lexeme)) !== lexeme) return false;
    } else {
      index++;
    }
  }
  return true;
}
