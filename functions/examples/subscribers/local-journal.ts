/**
 * Local stack only: the example subscribers record each effect in the file `LOCAL_EFFECTS_JOURNAL` names, as
 * `functions/webhook-handlers.ts` does, so that `GET /local/effects` can show it. Deployed, the variable is
 * not set and nothing is written.
 */
import { appendFileSync } from 'node:fs';
import { ENV } from '../../../contract/environment.ts';

/** Appends `key` to the local effects journal; false when there is none (deployed). */
export function journalLocalEffect(key: string): boolean {
  const journal = process.env[ENV.effectsJournal];
  if (!journal) return false;
  // Synchronous on purpose: once this returns the line is in the file, even if the process is killed next.
  appendFileSync(journal, `${key}\n`);
  return true;
}
