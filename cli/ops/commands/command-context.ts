/** What every ops command gets: the resolved target, where to write, and the time. */
import type { Output } from '../output.ts';
import type { OpsTarget, SubscriberTarget } from '../target/ops-target.ts';

export interface CommandContext {
  readonly target: OpsTarget;
  readonly output: Output;
  /** Epoch ms. */
  readonly clock: () => number;
  /** Waits between the polls of a long operation (tests pass one that does not wait). */
  readonly sleep: (ms: number) => Promise<void>;
  /** The environment the command reads its secrets and switches from (a test passes its own). */
  readonly env: NodeJS.ProcessEnv;
  /** The subscriber the command works on: `--subscriber`, or the only one (else a usage error). */
  subscriber(): SubscriberTarget;
}
