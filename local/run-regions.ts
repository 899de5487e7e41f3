/**
 * The generated regions that show recorded runs and the model's worked example, which `npm run docs:runs`
 * (write-run-regions.ts) writes: docs/simulator.md's from local/simulator/runs/*.json (`npm run simulate --
 * --save PATH`) and contract/erlang-c.ts, docs/consumer.md's kill test from its recorded runs
 * (test/support/kill-run-record.ts), docs/reliability.md's DynamoDB-fault, SIGKILL, enqueue-fault and fuzzing runs from theirs
 * (test/reliability/run-record.ts). Nothing is run here; test/unit/docs/generated-figures.test.ts fails when
 * a page and its records disagree.
 */

import { reliabilityRegions } from '../test/reliability/run-record.ts';
import {
  KILL_RUN_PAGE,
  KILL_RUN_REGION,
  KILL_RUNS_PATH,
  killRunsMarkdown,
  readKillRuns,
} from '../test/support/kill-run-record.ts';
import { simulatorRegions } from './simulator/simulator-markdown.ts';

/** Every region this command writes, by page. */
export function runRegions(root: URL): Record<string, Record<string, string>> {
  return {
    ...simulatorRegions(root),
    [KILL_RUN_PAGE]: { [KILL_RUN_REGION]: killRunsMarkdown(readKillRuns(new URL(KILL_RUNS_PATH, root))) },
    ...reliabilityRegions(root),
  };
}
