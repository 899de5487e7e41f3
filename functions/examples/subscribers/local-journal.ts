/**
 * Local stack only: the example subscribers record each effect in the file `LOCAL_EFFECTS_JOURNAL` names, as
 * `functions/webhook-handlers.ts` does, so that `GET /local/effects` can show it. Deployed, the variable is
 * not set and nothing is written.
 *
 * The examples import the package as an app does (`whatsapp-webhook-dedup/handlers`, their own files, node
 * built-ins), so the variable's name is written out here: the package does not export it, as it is the local
 * stack's hook for these examples and not part of the handler API (test/unit/consumer/subscriber-modules.test.ts
 * checks it is the name the local stack sets).
 */
import { appendFileSync } from 'node:fs';

/** The variable the local stack sets to its effects journal file. */
export const EFFECTS_JOURNAL_VARIABLE = 'LOCAL_EFFECTS_JOURNAL';

/** Appends `key` to the local effects journal; false when there is none (deployed). */
export function journalLocalEffect(key: string): boolean {
  const journal = process.env[EFFECTS_JOURNAL_VARIABLE];
  if (!journal) return false;
  // Synchronous on purpose: once this returns the line is in the file, even if the process is killed next.
  appendFileSync(journal, `${key}\n`);
  return true;
}
