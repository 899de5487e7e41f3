/**
 * DynamoDB's TTL process, late and at times of the seed's choosing: a sweep deletes every item whose
 * `expiresAt` has passed. Sweeps are background timers: a schedule does not wait for them to end.
 */
import type { DynamoDbModel } from './dynamodb/dynamodb-model.ts';
import type { FaultTally } from './faults.ts';
import type { Prng } from './prng.ts';
import type { Scheduler } from './scheduler.ts';
import type { Trace } from './trace.ts';

const DAY_MS = 86_400_000;

export function scheduleTtlSweeps(
  sweeps: number,
  options: {
    scheduler: Scheduler;
    model: DynamoDbModel;
    tableName: string;
    random: Prng;
    faults: FaultTally;
    trace: Trace;
  },
): void {
  const { scheduler, model, tableName, random, faults, trace } = options;
  for (let sweep = 0; sweep < sweeps; sweep++) {
    scheduler.schedule({
      worker: 'ttl',
      label: 'TTL sweep',
      // Anywhere in the first nine days: Meta's retries and the claims' retention (7 days) both end in there.
      delayMs: random.int(0, 9 * DAY_MS),
      background: true,
      complete: () => {
        const deleted = model.expireItems(tableName, Math.floor(scheduler.now / 1000), 'expiresAt');
        faults.add('ttl-deletion', deleted.length);
        const keys = deleted.map((item) => item.pk?.S ?? '?');
        trace.add(
          scheduler.now,
          'ttl',
          'TTL sweep',
          keys.length === 0 ? 'nothing expired' : `deleted ${keys.join(' ')}`,
        );
      },
    });
  }
}
