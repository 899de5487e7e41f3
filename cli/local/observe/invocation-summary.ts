/**
 * The local stack's one terminal line per consumer invocation (`bot-message: 1 record, 1 duplicate in 12 ms,
 * success`), with the events the consumer's own metrics counted while it ran: a repeat a claim caught shows as
 * a duplicate, not as a bare "success".
 */
import { ConsumerFieldMetric } from 'whatsapp-webhook-dedup/contract/metric-names';
import type { InvocationReport } from '../sqs-event-source.ts';
import type { MetricPoint } from './emf.ts';

export interface InvocationEvents {
  fresh: number;
  /** A done event's repeats and those of an event still in flight. */
  duplicates: number;
}

export function countInvocationEvents(
  events: InvocationEvents,
  point: Pick<MetricPoint, 'name' | 'value'>,
): void {
  if (point.name === ConsumerFieldMetric.EventsFresh) events.fresh += point.value;
  if (
    point.name === ConsumerFieldMetric.EventsDuplicate ||
    point.name === ConsumerFieldMetric.EventsDuplicateInFlight
  )
    events.duplicates += point.value;
}

export function summariseInvocation(
  functionName: string,
  report: Pick<InvocationReport, 'records' | 'durationMs' | 'outcome' | 'failedMessageIds'>,
  events: InvocationEvents | undefined,
): string {
  const plural = (count: number, noun: string) => `${count} ${noun}${count === 1 ? '' : 's'}`;
  const counted = [plural(report.records.length, 'record')];
  if (events !== undefined && events.fresh > 0) counted.push(`${events.fresh} fresh`);
  if (events !== undefined && events.duplicates > 0) counted.push(plural(events.duplicates, 'duplicate'));
  const failed = report.failedMessageIds.length;
  const retry = failed > 0 ? ` (${failed} left for retry)` : '';
  return `${functionName}: ${counted.join(', ')} in ${report.durationMs} ms, ${report.outcome}${retry}`;
}
