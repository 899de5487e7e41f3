/** The archive's text: which bodies SQS takes as they are, and chunks cut between characters. */
import { describe, expect, it } from 'vitest';
import { attributesBytes, stringAttribute } from '../../../functions/queue/outgoing-message.ts';
import { sqsTextOf, textMessages } from '../../../functions/queue/text-chunks.ts';

const NAMES = { id: 'archiveId', chunk: 'chunk', chunks: 'chunks' } as const;

describe('sqsTextOf', () => {
  it('takes valid UTF-8 of the characters SQS allows, emoji, tab, CR, LF and a BOM included', () => {
    const text = '\uFEFF{"text":"héllo 👋🏽 \u4F60\u597D\t\r\n","max":"\uD7FF\uE000\uFFFD\u{10FFFF}"}';
    expect(sqsTextOf(text)).toBe(text);
    expect(sqsTextOf(Buffer.from(text, 'utf8'))).toBe(text);
  });

  it('refuses control characters other than tab, CR and LF, U+FFFE and U+FFFF', () => {
    for (const character of [
      '\u0000',
      '\u0001',
      '\u0008',
      '\u000B',
      '\u000C',
      '\u001F',
      '\uFFFE',
      '\uFFFF',
    ]) {
      expect(sqsTextOf(`{"a":"${character}"}`)).toBeUndefined();
      expect(sqsTextOf(Buffer.from(`{"a":"${character}"}`, 'utf8'))).toBeUndefined();
    }
  });

  it('refuses a lone surrogate in a string, and bytes that are not UTF-8', () => {
    expect(sqsTextOf('a\uD83D')).toBeUndefined();
    expect(sqsTextOf('\uDC4Ba')).toBeUndefined();
    expect(sqsTextOf('\uDC4B\uD83D')).toBeUndefined();
    expect(sqsTextOf(Buffer.from([0x7b, 0xff, 0x7d]))).toBeUndefined();
    // An overlong encoding and an encoded surrogate are not UTF-8 either.
    expect(sqsTextOf(Buffer.from([0xc0, 0xaf]))).toBeUndefined();
    expect(sqsTextOf(Buffer.from([0xed, 0xa0, 0x80]))).toBeUndefined();
  });
});

describe('textMessages', () => {
  const attributes = { verdict: stringAttribute('accepted') };

  it('keeps a body that fits in one message, without chunk attributes', () => {
    const messages = textMessages('{"a":"👋"}', attributes, 1_024, NAMES);
    expect(messages).toEqual([
      {
        body: '{"a":"👋"}',
        attributes,
        bytes: Buffer.byteLength('{"a":"👋"}') + attributesBytes(attributes),
      },
    ]);
  });

  it('cuts between characters when the limit falls inside one, every chunk within the limit', () => {
    const maximum = 256;
    // Each offset of the 4-byte emoji lands on a chunk's end for one of these prefixes.
    for (const prefix of ['', 'a', 'ab', 'abc']) {
      const text = `${prefix}${'👋é'.repeat(200)}`;
      const messages = textMessages(text, attributes, maximum, NAMES, () => 'id-1');
      expect(messages.length).toBeGreaterThan(1);
      for (const message of messages) {
        expect(message.bytes).toBeLessThanOrEqual(maximum);
        expect(message.bytes).toBe(Buffer.byteLength(message.body) + attributesBytes(message.attributes));
        expect(sqsTextOf(message.body)).toBe(message.body);
        expect(Buffer.from(message.body, 'utf8').toString('utf8')).toBe(message.body);
      }
      expect(messages.map((message) => message.body).join('')).toBe(text);
      expect(messages.map((message) => message.attributes.chunk?.StringValue)).toEqual(
        messages.map((_, index) => String(index + 1)),
      );
    }
  });

  it('refuses a limit that cannot hold one character beside the chunk attributes', () => {
    const widest = attributesBytes({
      ...attributes,
      archiveId: stringAttribute('id-1'),
      chunk: stringAttribute(String(Number.MAX_SAFE_INTEGER)),
      chunks: stringAttribute(String(Number.MAX_SAFE_INTEGER)),
    });
    expect(() => textMessages('👋'.repeat(100), attributes, widest + 3, NAMES, () => 'id-1')).toThrow(
      RangeError,
    );
  });
});
