/** The simulator's conclusion: every distinct event of the run must have been effected exactly once. */
import type { EffectsView } from '../stack/effects-journal.ts';

export interface Verdict {
  readonly exactlyOnce: boolean;
  readonly distinctEvents: number;
  readonly effectedOnce: number;
  /** Events never effected (never accepted, or lost). */
  readonly missing: readonly string[];
  /** Events effected more than once. */
  readonly duplicated: readonly { key: string; count: number }[];
  /** The queue did not drain in time: missing effects may still be queued, not lost. */
  readonly inconclusive?: boolean;
}

export function judge(events: readonly { event: { key: string } }[], effects: EffectsView): Verdict {
  const counts = new Map(effects.effects.map((e) => [e.key, e.count]));
  const keys = [...new Set(events.map((s) => s.event.key))];
  const missing = keys.filter((key) => (counts.get(key) ?? 0) === 0);
  const duplicated = keys
    .filter((key) => (counts.get(key) ?? 0) > 1)
    .map((key) => ({ key, count: counts.get(key) as number }));
  return {
    exactlyOnce: missing.length === 0 && duplicated.length === 0,
    distinctEvents: keys.length,
    effectedOnce: keys.length - missing.length - duplicated.length,
    missing,
    duplicated,
  };
}
