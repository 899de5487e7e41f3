import type { LaneName } from 'whatsapp-webhook-dedup/contract/lanes';

/**
 * The switch of one subscriber's pollers, per lane as Lambda's event source mappings are, in the words of their
 * states (`Enabled`, `Disabling`, `Disabled`).
 */
export interface ConsumerPoller {
  /** Whether the subscriber has this lane. */
  has(lane: LaneName): boolean;
  pause(lane: LaneName): void;
  resume(lane: LaneName): void;
  state(lane: LaneName): string;
}
