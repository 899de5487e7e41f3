/**
 * Writes a parsed JSON value back to text in a randomly chosen but equivalent spelling: whitespace between
 * tokens, `\/` for `/`, `\uXXXX` for non-ASCII (surrogate pairs as two escapes) and for arbitrary ASCII, short
 * escapes or `\u` escapes for quotes and control characters, upper- or lower-case hex. Numbers keep their
 * lexeme. Every choice comes from `seed`, so a failing case replays.
 */
import { isLosslessNumber } from 'lossless-json';
import { seededRandom } from '../../../cli/local/seeded-random.ts';

export interface Spelling {
  readonly seed: number;
  /** Chance (0..1) of escaping each ASCII character that needs no escape. */
  readonly asciiEscapeRate: number;
  readonly escapeNonAscii: boolean;
  readonly escapeSlash: boolean;
  readonly whitespace: readonly string[];
}

const SHORT_ESCAPES: Record<string, string> = {
  '"': '\\"',
  '\\': '\\\\',
  '\b': '\\b',
  '\f': '\\f',
  '\n': '\\n',
  '\r': '\\r',
  '\t': '\\t',
};

export function writeJson(value: unknown, spelling: Spelling): string {
  const next = seededRandom(spelling.seed);
  const ws = () => spelling.whitespace[Math.floor(next() * spelling.whitespace.length)] ?? '';
  const unicodeEscape = (code: number) => {
    const hex = code.toString(16).padStart(4, '0');
    return `\\u${next() < 0.5 ? hex : hex.toUpperCase()}`;
  };

  const writeString = (text: string): string => {
    let out = '"';
    for (let i = 0; i < text.length; i++) {
      const char = text.charAt(i);
      const code = text.charCodeAt(i);
      const short = SHORT_ESCAPES[char];
      if (short !== undefined || code < 0x20) {
        out += short !== undefined && next() < 0.5 ? short : unicodeEscape(code);
      } else if (char === '/') {
        out += spelling.escapeSlash ? '\\/' : '/';
      } else if (code > 0x7e) {
        out += spelling.escapeNonAscii ? unicodeEscape(code) : char;
      } else {
        out += next() < spelling.asciiEscapeRate ? unicodeEscape(code) : char;
      }
    }
    return `${out}"`;
  };

  const write = (node: unknown): string => {
    if (node === null) return 'null';
    if (typeof node === 'boolean' || typeof node === 'number') return String(node);
    if (typeof node === 'string') return writeString(node);
    if (isLosslessNumber(node)) return node.value;
    if (Array.isArray(node))
      return `[${ws()}${node.map((item) => write(item)).join(`${ws()},${ws()}`)}${ws()}]`;
    const members = Object.entries(node as Record<string, unknown>).map(
      ([key, member]) => `${writeString(key)}${ws()}:${ws()}${write(member)}`,
    );
    return `{${ws()}${members.join(`${ws()},${ws()}`)}${ws()}}`;
  };

  return `${ws()}${write(value)}${ws()}`;
}
