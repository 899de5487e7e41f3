/**
 * When a failed record comes back: the delay the consumer sets on it with ChangeMessageVisibility, from its
 * receive count and the retry settings (contract/retry-budget.ts has the bounds and why). Pure.
 */
import {
  type BackoffSettings,
  backoffCeilingSeconds,
  backoffFloorSeconds,
} from '../../contract/retry-budget.ts';

/**
 * The backoff after failed receive `receiveCount`: a whole number of seconds drawn uniformly between the
 * receive's floor and ceiling. `random` returns [0, 1), as Math.random does.
 */
export function backoffDelaySeconds(
  receiveCount: number,
  settings: BackoffSettings,
  random: () => number = Math.random,
): number {
  const floor = backoffFloorSeconds(receiveCount, settings);
  const ceiling = backoffCeilingSeconds(receiveCount, settings);
  return Math.min(ceiling, floor + Math.floor(random() * (ceiling - floor + 1)));
}

/**
 * The delay a handler asked for with `RetryLater`, in whole seconds, at most `retryMaxDelaySeconds`: the
 * budget that keeps every record's retries inside the queue's retention assumes no delay is longer.
 */
export function deferredDelaySeconds(afterSeconds: number, settings: BackoffSettings): number {
  return Math.min(settings.retryMaxDelaySeconds, Math.max(0, Math.ceil(afterSeconds)));
}

/** A record's `ApproximateReceiveCount` (1 on its first receive); 1 when absent or unreadable. */
export function receiveCountOf(
  attributes: { readonly ApproximateReceiveCount?: string } | undefined,
): number {
  const count = Number(attributes?.ApproximateReceiveCount);
  return Number.isInteger(count) && count >= 1 ? count : 1;
}
