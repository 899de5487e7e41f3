/**
 * The switch of a subscriber's consumers, per lane: what `ops pause` and `ops resume` turn, an event source
 * mapping on AWS (event-source-mappings.ts) or the local stack's poller (local-stack-api.ts). A target
 * (cli/ops/target/) hands one to the commands.
 */
import type { LaneName } from 'whatsapp-webhook-dedup/contract/lanes';

/** What a switch needs of a lane (cli/ops/target's `LaneTarget` is one). */
export interface SwitchedLane {
  readonly lane: LaneName;
  /** A deployed stack's event source mapping of the lane; absent locally. */
  readonly eventSourceMappingId?: string;
}

/**
 * Lambda's event source mapping states (`Enabled`, `Disabling`, `Disabled`, `Enabling`, `Updating`, …); the
 * local poller reports the same words.
 */
export type ConsumerState = string;

export interface ConsumerSwitch {
  /** Asks for the change and returns the lane's state right after (often `Disabling` / `Enabling`). */
  setEnabled(subscriber: string, lane: SwitchedLane, enabled: boolean): Promise<ConsumerState>;
  state(subscriber: string, lane: SwitchedLane): Promise<ConsumerState>;
}
