/**
 * The generated regions that show recorded runs and the model's worked example, which `npm run docs:runs`
 * (write-run-regions.ts) writes: docs/outage-drill.md's from cli/outage-drill/runs/*.json
 * (`npm run outage-drill -- --save PATH`) and contract/erlang-c.ts, docs/consumer.md's kill test from its
 * recorded runs (lab/docs/kill-run-record.ts), docs/reliability.md's DynamoDB-fault, SIGKILL, enqueue-fault
 * and fuzzing runs from theirs (lab/docs/reliability-run-record.ts). Nothing is run here;
 * lab/test/docs/generated-figures.test.ts fails when a page and its records disagree.
 */

import {
  KILL_RUN_PAGE,
  KILL_RUN_REGION,
  KILL_RUNS_PATH,
  killRunsMarkdown,
  readKillRuns,
} from './kill-run-record.ts';
import { outageDrillRegions } from './outage-drill-markdown.ts';
import { reliabilityRegions } from './reliability-run-record.ts';

/** Every region this command writes, by page. */
export function runRegions(root: URL): Record<string, Record<string, string>> {
  return {
    ...outageDrillRegions(root),
    [KILL_RUN_PAGE]: { [KILL_RUN_REGION]: killRunsMarkdown(readKillRuns(new URL(KILL_RUNS_PATH, root))) },
    ...reliabilityRegions(root),
  };
}
