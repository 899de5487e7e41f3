import { LosslessNumber, parse, stringify } from 'lossless-json';
import type { JsonValue } from './types.ts';

export type JsonParseResult =
  | { readonly ok: true; readonly body: JsonValue }
  | { readonly ok: false; readonly reason: 'invalid-json'; readonly detail: string };

// `ignoreBOM: true` keeps a leading BOM in the text, so bytes and the same text as a string are judged alike
// (and like `JSON.parse`, which rejects a BOM). `fatal` turns malformed UTF-8 into an error, not U+FFFD.
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** A number stays a plain JS number only when that number prints back as the very lexeme that was
 * written; anything else (ids above 2^53, `1.50`, `1e3`, `-0`) keeps its lexeme, so keys use it verbatim. */
function parseNumber(lexeme: string): number | LosslessNumber {
  const number = Number(lexeme);
  return String(number) === lexeme ? number : new LosslessNumber(lexeme);
}

// Like `JSON.parse`, the last of two equal keys wins (lossless-json would throw by default).
const lastKeyWins = ({ newValue }: { newValue: unknown }) => newValue;

/**
 * Parses a webhook body without losing digits. Never throws: every failure (bytes that are not UTF-8,
 * syntax errors, nesting deep enough to exhaust the stack) is an `invalid-json` result whose detail names
 * the position, never the content.
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
  try {
    const body = parse(text, null, { parseNumber, onDuplicateKey: lastKeyWins }) as JsonValue;
    return { ok: true, body };
  } catch (error) {
    return { ok: false, reason: 'invalid-json', detail: describeParseError(error) };
  }
}

/** Serialises a parsed body back to JSON; `LosslessNumber`s are written back exactly as they were read. */
export function stringifyWebhookJson(value: JsonValue): string {
  const text = stringify(value);
  if (text === undefined) {
    throw new TypeError('value has no JSON representation');
  }
  return text;
}

// Parser messages quote the offending characters, which may come from message text: keep the position only.
function describeParseError(error: unknown): string {
  if (error instanceof RangeError) {
    return 'JSON nested too deeply to parse';
  }
  const position = error instanceof Error ? /position (\d+)/.exec(error.message)?.[1] : undefined;
  return position === undefined ? 'invalid JSON' : `invalid JSON at position ${position}`;
}
