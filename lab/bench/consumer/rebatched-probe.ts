/**
 * Not timed: what each consumer does when Meta re-batches events into bodies with other companions, which
 * the timed workload leaves out (there every body holds one message). Originals come in bodies of 1–3
 * messages, one change each; then a third of the messages come again, regrouped with other repeats and with
 * fresh messages. A per-event consumer effects each message once; a per-body key (Powertools keyed on the
 * body's first wamid) skips the fresh companions of a repeated first message and repeats the effects of
 * already-seen companions of a fresh first message.
 */
import type { SQSRecord } from 'aws-lambda';
import { seededRandom, shuffled } from '../../../cli/local/seeded-random.ts';
import {
  type InboundTextMessage,
  inboundTextMessage,
  multiMessageBody,
} from '../../../cli/meta-traffic/webhook-bodies.ts';
import { toQueueRecord } from './workload.ts';

export interface RebatchedWorkload {
  readonly records: readonly SQSRecord[];
  readonly distinctWamids: ReadonlySet<string>;
}

export function buildRebatchedWorkload(distinct = 300, seed = 11): RebatchedWorkload {
  const random = seededRandom(seed);
  const messages = Array.from({ length: distinct }, (_, i) => inboundTextMessage(2_000_000 + i, random));
  const originals = messages.slice(0, Math.floor(distinct * 0.8));
  const late = messages.slice(originals.length);
  const groups = (pool: InboundTextMessage[]) => {
    const bodies: InboundTextMessage[][] = [];
    for (let at = 0; at < pool.length; ) {
      const size = 1 + Math.floor(random() * 3);
      bodies.push(pool.slice(at, at + size));
      at += size;
    }
    return bodies;
  };
  const repeats = shuffled(originals, random).slice(0, Math.floor(distinct / 3));
  const records = [
    ...groups(originals),
    // Repeats regrouped among themselves and with messages not seen yet.
    ...groups(shuffled([...repeats, ...late], random)),
  ].map((group) => toQueueRecord(multiMessageBody(group)));
  return { records, distinctWamids: new Set(messages.map((message) => message.id)) };
}
