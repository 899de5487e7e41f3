import { describe, expect, it } from 'vitest';
import { terminalLines } from '../../../local/observe/terminal-lines.ts';

const refused = JSON.stringify({
  level: 'WARN',
  message: 'Delivery refused: bad signature',
  timestamp: '2026-12-03T12:00:00.000Z',
  service: 'whatsapp-webhook-dedup',
  requestId: 'r-1',
  bodyBytes: 512,
  problem: 'mismatch',
  xray_trace_id: 'x'.repeat(400),
});
const handlerError = JSON.stringify({
  level: 'ERROR',
  message: 'Handler failed, claim released',
  error: { name: 'Error', message: 'CRM is down', stack: 'Error: CRM is down\n    at …' },
});

describe("the local stack's terminal", () => {
  it('shows a warning or an error as one line saying what and why, the first with the LOCAL_VERBOSE hint', () => {
    const show = terminalLines(false);
    expect(show(refused)).toBe(
      'warn: Delivery refused: bad signature (mismatch) [LOCAL_VERBOSE=1 prints every log entry whole]',
    );
    expect(show(handlerError)).toBe('error: Handler failed, claim released (CRM is down)');
  });

  it('keeps EMF, INFO and DEBUG off the terminal and other lines as they are', () => {
    const show = terminalLines(false);
    expect(show('{"_aws":{"Timestamp":1}}')).toBeUndefined();
    expect(show('{"level":"INFO","message":"Delivery accepted"}')).toBeUndefined();
    expect(show('{"level":"DEBUG","message":"x"}')).toBeUndefined();
    expect(show('plain console.log from a handler')).toBe('plain console.log from a handler');
    expect(show('{"level":"WARN"')).toBe('{"level":"WARN"');
  });

  it('with LOCAL_VERBOSE prints every line whole', () => {
    const show = terminalLines(true);
    for (const line of [refused, '{"_aws":{}}', '{"level":"INFO","message":"m"}'])
      expect(show(line)).toBe(line);
  });
});
