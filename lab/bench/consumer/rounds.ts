/** How the consumer parts order their runs and when they have run enough rounds. */
import { median, medianInterval } from '../../../cli/tools/statistics.ts';

/** Ours between the two others, the order flipped every round: ours is adjacent to both in every round. */
export function roundOrder<T>(contestants: readonly T[], round: number): T[] {
  return round % 2 === 0 ? [...contestants] : [...contestants].reverse();
}

/** Whether the distribution-free 95% interval of the median lies within ±halfWidth of the median. */
export function narrowEnough(ratios: readonly number[], halfWidth: number): boolean {
  const middle = median(ratios);
  const interval = medianInterval(ratios);
  return (
    interval.confidence >= 0.95 &&
    interval.low >= middle * (1 - halfWidth) &&
    interval.high <= middle * (1 + halfWidth)
  );
}
