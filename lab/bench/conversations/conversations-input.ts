/**
 * The conversations bench's parameters (docs/benchmarks.md, "Conversations"), in one place: `npm run bench`
 * runs them and docs/benchmarks.md prints them in its generated "Conversations" region, so that the page's
 * method and the run cannot disagree.
 */
import type { ConversationsInput } from './conversations.ts';

export function conversationsInput(quick = false): ConversationsInput {
  return {
    loneRuns: quick ? 4 : 24,
    warmupRuns: quick ? 1 : 3,
    loneGapMs: 300,
    storm: {
      statuses: quick ? 600 : 3000,
      perSec: 200,
      statusHandlerMs: 100,
      liveMessages: quick ? 5 : 14,
      maxInFlight: 64,
    },
    order: { pairs: quick ? 40 : 200, gapMs: 30, pairIntervalMs: 60, maxHandlerMs: 200, seed: 18 },
    settleTimeoutMs: 90_000,
  };
}
