/**
 * DynamoDB's TTL process, late and at times of the seed's choosing: a sweep deletes every item whose
 * `expiresAt` has passed. Some sweeps fall anywhere in the first nine days (Meta's retries end in there, and
 * so does the claims' retention, 7 days plus the schedule's longest queue stay, unless the schedule runs the
 * production budget), and two fall shortly before each body that arrives days late (one
 * of them less than a second before it), when a record that expired too early would make a difference.
 * Meta's last retries come near the end of its 7 days, when the claims of events first sent before them
 * have expired: those sweeps delete them, and each deletion is journalled. Sweeps are background timers: a schedule
 * does not wait for them.
 */

import type { SeededRandom } from '../../cli/local/seeded-random.ts';
import type { DynamoDbModel } from './dynamodb/dynamodb-model.ts';
import type { FaultTally } from './faults.ts';
import type { ProtocolJournal } from './protocol-journal.ts';
import type { Scheduler } from './scheduler.ts';
import type { Trace } from './trace.ts';

const DAY_MS = 86_400_000;

export function scheduleTtlSweeps(
  sweeps: number,
  arrivals: readonly number[],
  options: {
    scheduler: Scheduler;
    model: DynamoDbModel;
    tableName: string;
    random: SeededRandom;
    faults: FaultTally;
    journal: ProtocolJournal;
    trace: Trace;
  },
): void {
  const { scheduler, model, tableName, random, faults, journal, trace } = options;
  const sweep = () => {
    const deleted = model.expireItems(tableName, Math.floor(scheduler.now / 1000), 'expiresAt');
    faults.add('ttl-deletion', deleted.length);
    const keys = deleted.map((item) => item.pk?.S ?? '?');
    for (const key of keys) journal.recordTtlDeletion(key, scheduler.now);
    trace.add(
      scheduler.now,
      'ttl',
      'TTL sweep',
      keys.length === 0 ? 'nothing expired' : `deleted ${keys.join(' ')}`,
    );
  };
  const times = Array.from({ length: sweeps }, () => scheduler.now + random.int(0, 9 * DAY_MS));
  for (const arrival of arrivals) {
    if (arrival - scheduler.now <= DAY_MS) continue;
    times.push(arrival - random.int(1000, 30 * 60_000));
    // And one just before it, which deletes whatever has expired by the time it comes.
    times.push(arrival - random.int(1, 1000));
  }
  for (const at of times) {
    scheduler.schedule({
      worker: 'ttl',
      label: 'TTL sweep',
      delayMs: at - scheduler.now,
      background: true,
      complete: sweep,
    });
  }
}
