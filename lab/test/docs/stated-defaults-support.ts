/**
 * What the stated-defaults tests share (lab/test/docs/stated-defaults-*.test.ts): a page read as one line, the
 * values the code keeps where no module exports them, and numbers in the words the pages write them in. Every
 * expected sentence is built from the code's value, so changing the value fails the test until the page follows.
 */
import { readFileSync } from 'node:fs';
import {
  DEFAULT_SETTINGS,
  minimumRetentionDays,
  minimumVisibilityTimeoutSeconds,
} from '../../../contract/settings.ts';
import { messageGroupIdOf } from '../../../functions/queue/outgoing-message.ts';
import { DEDUPLICATION_INTERVAL_MS } from '../../protocol-checker/fifo-queue.ts';

const ROOT = new URL('../../../', import.meta.url);

/** A file of the repository, from its root. */
export const readFile = (path: string) => readFileSync(new URL(path, ROOT), 'utf8');

/**
 * A page's prose: its generated regions left out (generated-figures.test.ts compares those with their
 * generators), every run of whitespace one space, so that a sentence wrapped across lines or a table cell
 * padded to its column reads as written.
 */
export function prose(path: string): string {
  return readFile(path)
    .replace(/<!-- generated:([\w-]+) -->[\s\S]*?<!-- \/generated:\1 -->/g, ' ')
    .replace(/\s+/g, ' ');
}

/**
 * The first group of `pattern` in a source file: a value the code sets where no module exports it (a
 * module-private constant, an option's default in `parseArgs`, a fallback after `??`).
 */
export function sourceMatch(path: string, pattern: RegExp): string {
  const value = pattern.exec(readFile(path))?.[1];
  if (value === undefined) throw new Error(`${path} no longer matches ${pattern}: read the value anew.`);
  return value;
}

/** `const NAME = 60_000;` (or `10 * 1024 * 1024`) in a source file, as a number. */
export function sourceNumber(path: string, name: string): number {
  const expression = sourceMatch(path, new RegExp(`\\bconst ${name} = ([\\d_]+(?: \\* [\\d_]+)*);`));
  return expression.split(' * ').reduce((product, factor) => product * Number(factor.replaceAll('_', '')), 1);
}

/** The stack name `cdk deploy` uses without `-c stackName` (bin/app.ts). */
export const DEFAULT_STACK_NAME = sourceMatch('bin/app.ts', /contextString\('stackName'\) \?\? '([^']+)'/);

/** SQS's FIFO deduplication interval, in minutes, as the protocol checker's FIFO model has it. */
export const FIFO_DEDUPLICATION_MINUTES = DEDUPLICATION_INTERVAL_MS / 60_000;

const UNITS =
  'zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen'.split(
    ' ',
  );
const TENS = ['', '', 'twenty', 'thirty', 'forty', 'fifty', 'sixty', 'seventy', 'eighty', 'ninety'];

/** A whole number below 100 as the pages spell it (`seven`, `twenty-seven`). */
export function inWords(count: number): string {
  if (!Number.isInteger(count) || count < 0 || count > 99) return `${count} (no word for it in this test)`;
  if (count < 20) return UNITS[count] as string;
  const unit = count % 10;
  return `${TENS[Math.floor(count / 10)]}${unit === 0 ? '' : `-${UNITS[unit]}`}`;
}

const DURATIONS: Readonly<Record<number, string>> = {
  1: 'a second',
  30: 'half a minute',
  60: 'a minute',
  3600: 'an hour',
  86400: 'a day',
};

/** A duration the pages write in words (`half a minute`, `an hour`, `a day`); any other fails its sentence. */
export function durationInWords(seconds: number): string {
  return DURATIONS[seconds] ?? `${seconds} s (no words for it in this test)`;
}

/** The same without its article: `every second`, `the last minute`. */
export const unitOf = (seconds: number) => durationInWords(seconds).replace(/^an? /, '');

/** A share as a whole percentage (`0.15` → `15`), free of floating-point tails. */
export const percent = (share: number) => Math.round(share * 100);

/** The longest conversation id SQS takes as a message group id as it is (a longer one is hashed). */
export function longestGroupId(): number {
  let length = 1;
  while (messageGroupIdOf('1'.repeat(length + 1)) === '1'.repeat(length + 1)) length++;
  return length;
}

/** The retention floor of the default status lane's budget, rounded up to whole days: the default retention. */
export function defaultRetentionFloorDays(): number {
  const { visibilityTimeoutSeconds: _, retentionDays: __, ...rest } = DEFAULT_SETTINGS;
  const stay = { ...rest, visibilityTimeoutSeconds: minimumVisibilityTimeoutSeconds(rest) };
  return Math.ceil(minimumRetentionDays({ 'status lane': stay }));
}
