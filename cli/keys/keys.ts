/**
 * `npm run keys -- FILE`: prints the docs/design.md §1 keys of one webhook body file, one per line, in order.
 * A file that is not a WhatsApp webhook body (not JSON, or not its envelope) says so on stderr and exits 1;
 * a missing or unreadable FILE exits 2.
 */
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { extractEvents } from 'whatsapp-webhook-dedup/functions/events/extract-events';
import type { BodyRejection, EventExtraction } from 'whatsapp-webhook-dedup/functions/events/types';

/** How this repository's script runs it; the bin passes its own (`whatsapp-webhook-dedup keys`). */
export const KEYS_PROGRAM = 'npm run keys --';

export function keysUsage(program: string = KEYS_PROGRAM): string {
  return `usage: ${program} FILE`;
}

export interface CliStreams {
  readonly stdout: { write(text: string): unknown };
  readonly stderr: { write(text: string): unknown };
}

/** Runs the command and returns its exit code; `program` is how it was invoked, for the usage line. */
export function runKeysCli(
  args: readonly string[],
  streams: CliStreams,
  program: string = KEYS_PROGRAM,
): number {
  const usage = keysUsage(program);
  const [file, ...extra] = args;
  if (file === undefined || extra.length > 0) {
    streams.stderr.write(`${usage}\n`);
    return 2;
  }
  let extraction: EventExtraction;
  try {
    extraction = extractEventsOfFile(file);
  } catch (error) {
    if (!(error instanceof BodyFileError)) throw error;
    streams.stderr.write(`${error.message}\n${usage}\n`);
    return 2;
  }
  if (!extraction.ok) {
    streams.stderr.write(`${file} is not a WhatsApp webhook body: ${NOT_A_BODY[extraction.reason]}\n`);
    return 1;
  }
  if (extraction.events.length > 0) {
    streams.stdout.write(`${extraction.events.map((event) => event.key).join('\n')}\n`);
  }
  return 0;
}

const NOT_A_BODY: Record<BodyRejection, string> = {
  'invalid-json': 'it is not UTF-8 JSON',
  'not-whatsapp-envelope': 'it is JSON, but not {"object": "whatsapp_business_account", "entry": [...]}',
};

export class BodyFileError extends Error {
  constructor(file: string, reason: string) {
    super(`cannot read ${file} (${reason})`);
    this.name = 'BodyFileError';
  }
}

/**
 * The events of one webhook body file, in order, or why it has none (`npm run keys`, `npm run ops -- keys`).
 * Throws `BodyFileError` for a missing or unreadable file.
 */
export function extractEventsOfFile(file: string): EventExtraction {
  let body: Buffer;
  try {
    body = readFileSync(file);
  } catch (error) {
    throw new BodyFileError(file, (error as NodeJS.ErrnoException).code ?? 'unreadable');
  }
  return extractEvents(body);
}

const invokedDirectly =
  process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href;
if (invokedDirectly) {
  process.exitCode = runKeysCli(process.argv.slice(2), process);
}
