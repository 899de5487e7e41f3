/**
 * The outage drill's conclusion: every distinct event of the run must have been effected exactly once, by
 * every subscriber that should have it, and by no other.
 */
import { wantsEvent } from 'whatsapp-webhook-dedup/contract/event-origin';
import { isGroupField } from 'whatsapp-webhook-dedup/functions/events/group-item';
import type { EventKind } from 'whatsapp-webhook-dedup/functions/events/types';
import type { EffectsView } from '../local/stack/effects-journal.ts';

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
  /** Each subscriber's own verdict over the events it should have. */
  readonly bySubscriber?: Readonly<Record<string, SubscriberVerdict>>;
}

export interface SubscriberVerdict extends Verdict {
  /** Events of this run it effected although its fields, numbers, wabas or handlers exclude them. */
  readonly unexpected: readonly string[];
}

/**
 * What a subscriber should effect: events of its fields, numbers and wabas (each null or absent: no limit)
 * that one of its handlers takes.
 */
export interface SubscriberExpectation {
  readonly name: string;
  readonly fields: readonly string[] | null;
  readonly numbers?: readonly string[] | null;
  readonly wabas?: readonly string[] | null;
  /**
   * The handlers its module defines (`onMessage`, `onStatus`, `onError`, `onManagementEvent`, `onGroupEvent`,
   * or `onRecord`, which takes every kind).
   */
  readonly handlers: readonly string[];
  readonly effects: EffectsView;
}

export interface JudgedEvent {
  readonly key: string;
  readonly kind: EventKind;
  readonly change: { readonly field: string };
  /** The event's phone number and WABA, as the extractor read them (what `numbers` and `wabas` select). */
  readonly phoneNumberId: string | undefined;
  readonly wabaId: string | undefined;
}

const HANDLER_OF_KIND: Readonly<Record<EventKind, string>> = {
  message: 'onMessage',
  status: 'onStatus',
  error: 'onError',
  management: 'onManagementEvent',
};

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

export function expects(subscriber: Omit<SubscriberExpectation, 'effects'>, event: JudgedEvent): boolean {
  return (
    wantsEvent(
      {
        fields: subscriber.fields ?? undefined,
        numbers: subscriber.numbers ?? undefined,
        wabas: subscriber.wabas ?? undefined,
      },
      { field: event.change.field, phoneNumberId: event.phoneNumberId, wabaId: event.wabaId },
    ) &&
    (subscriber.handlers.includes('onRecord') ||
      subscriber.handlers.includes(HANDLER_OF_KIND[event.kind]) ||
      (isGroupField(event.change.field) && subscriber.handlers.includes('onGroupEvent')))
  );
}

/**
 * Judges each subscriber over the events it should have, then the run: an event counts as effected once when
 * every subscriber that should have it effected it exactly once and no other effected it at all.
 */
export function judgeSubscribers(
  events: readonly { event: JudgedEvent }[],
  subscribers: readonly SubscriberExpectation[],
): Verdict {
  const bySubscriber: Record<string, SubscriberVerdict> = {};
  const missing = new Set<string>();
  const duplicated = new Map<string, number>();
  const unexpected = new Set<string>();
  const expectedByAny = new Set<string>();
  for (const subscriber of subscribers) {
    const expected = events.filter(({ event }) => expects(subscriber, event));
    const verdict = judge(expected, subscriber.effects);
    const expectedKeys = new Set(expected.map(({ event }) => event.key));
    const effected = new Set(subscriber.effects.effects.filter((e) => e.count > 0).map((e) => e.key));
    const strays = [
      ...new Set(events.map(({ event }) => event.key).filter((k) => !expectedKeys.has(k) && effected.has(k))),
    ];
    bySubscriber[subscriber.name] = {
      ...verdict,
      exactlyOnce: verdict.exactlyOnce && strays.length === 0,
      unexpected: strays,
    };
    for (const key of expectedKeys) expectedByAny.add(key);
    for (const key of verdict.missing) missing.add(key);
    for (const { key, count } of verdict.duplicated)
      duplicated.set(key, Math.max(count, duplicated.get(key) ?? 0));
    for (const key of strays) unexpected.add(key);
  }
  const keys = new Set([...expectedByAny, ...unexpected]);
  const wrong = new Set([...missing, ...duplicated.keys(), ...unexpected]);
  return {
    exactlyOnce: Object.values(bySubscriber).every((verdict) => verdict.exactlyOnce),
    distinctEvents: keys.size,
    effectedOnce: keys.size - wrong.size,
    missing: [...missing],
    duplicated: [...duplicated].map(([key, count]) => ({ key, count })),
    bySubscriber,
  };
}

/**
 * One line per subscriber (`bot: EXACTLY ONCE — …`), or none with a single subscriber, whose verdict is the
 * run's.
 */
export function subscriberVerdictLines(verdict: Verdict): string[] {
  const entries = Object.entries(verdict.bySubscriber ?? {});
  if (entries.length < 2) return [];
  const examples = (keys: readonly string[]) => (keys.length ? ` (e.g. ${keys.slice(0, 3).join(', ')})` : '');
  return entries.map(([name, v]) =>
    v.exactlyOnce
      ? `${name}: EXACTLY ONCE — ${v.distinctEvents} event${v.distinctEvents === 1 ? '' : 's'} of its own, each effected exactly once; no other.`
      : `${name}: ${verdict.inconclusive ? 'INCONCLUSIVE' : 'FAILED'} — ${v.effectedOnce}/${v.distinctEvents} effected once; ${v.missing.length} never effected${examples(v.missing)}; ${v.duplicated.length} effected more than once${examples(v.duplicated.map((d) => `${d.key} ×${d.count}`))}; ${v.unexpected.length} effected though not its own${examples(v.unexpected)}.`,
  );
}
