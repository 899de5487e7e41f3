/** The table `npm run bench` prints. */
import { CONTESTANT_LABELS, CONTESTANTS } from './consumer/contestant-names.ts';
import type { BenchResults } from './results.ts';

function table(headers: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = headers.map((header, i) =>
    Math.max(header.length, ...rows.map((row) => (row[i] ?? '').length)),
  );
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, i) => (i === 0 ? cell.padEnd(widths[i] ?? 0) : cell.padStart(widths[i] ?? 0)))
      .join('  ');
  return [line(headers), widths.map((width) => '-'.repeat(width)).join('  '), ...rows.map(line)].join('\n');
}

const fixed = (value: number, digits: number) => value.toFixed(digits);

function operations(byOperation: Record<string, number>): string {
  return Object.entries(byOperation)
    .map(([operation, count]) => `${operation} ${Math.round(count)}`)
    .join(', ');
}

export function formatReport(results: BenchResults): string {
  const sections: string[] = [];
  const { consumer, receiver, bundles, endToEnd } = results;
  if (consumer) {
    const row = (name: string, c: typeof consumer.ours) => [
      name,
      fixed(c.eventsPerSec, 0),
      `${fixed(c.eventsPerSecMin, 0)}–${fixed(c.eventsPerSecMax, 0)}`,
      fixed(c.requestsPerEvent, 3),
      operations(c.requestsByOperation),
      fixed(c.nodeCpuMsPerEvent, 2),
      String(c.redeliveries),
      String(c.effects),
    ];
    sections.push(
      `Consumer: ${consumer.events} records (${consumer.distinctEvents} distinct events, ${consumer.duplicateRatio * 100}% duplicates), ` +
        `batch ${consumer.batchSize}, ${consumer.concurrency} containers, median of ${consumer.runsPerContestant} alternating runs\n` +
        table(
          [
            '',
            'events/s',
            'range',
            'requests/event',
            'requests per run',
            'CPU ms/event',
            'redeliveries',
            'effects',
          ],
          CONTESTANTS.map((name) => row(CONTESTANT_LABELS[name], consumer[name])),
        ) +
        `\nspeedup ×${fixed(consumer.speedup, 2)} (×${fixed(consumer.speedupInterval.low, 2)}–×${fixed(consumer.speedupInterval.high, 2)}, ${fixed(consumer.speedupInterval.confidence * 100, 0)}% interval${consumer.speedupWithin5Percent ? ', within ±5%' : ', WIDER than ±5%'}): median of the rounds' ours/Powertools (${consumer.pairedSpeedups.map((s) => fixed(s, 2)).join(', ')}); ` +
        `ratio of the medians ×${fixed(consumer.speedupOfMedians, 2)}; Powertools uses ×${fixed(consumer.cpuPerEventRatio, 2)} our Node CPU per event` +
        `\nceiling ×${fixed(consumer.speedupCeiling, 2)}: contract floor/Powertools, the most any consumer writing docs/design.md §2's requests shows here; ` +
        `ours runs at ${fixed(consumer.shareOfFloor * 100, 0)}% of the floor`,
    );
    const trip = consumer.withAddedRoundTrip;
    if (trip) {
      const tripRow = (name: string, c: typeof trip.ours) => [
        name,
        fixed(c.eventsPerSec, 0),
        fixed(c.medianInvocationMs, 1),
        String(c.invocations),
        fixed(c.nodeCpuMsPerEvent, 2),
      ];
      sections.push(
        `Consumer with ${trip.addedRoundTripMs} ms added to every DynamoDB request (AWS-like round trip), median of ${trip.runsPerContestant} rounds\n` +
          table(
            ['', 'events/s', 'median invocation ms', 'invocations', 'CPU ms/event'],
            CONTESTANTS.map((name) => tripRow(CONTESTANT_LABELS[name], trip[name])),
          ) +
          `\nspeedup ×${fixed(trip.speedup, 2)}; ceiling ×${fixed(trip.speedupCeiling, 2)}; ours at ${fixed(trip.shareOfFloor * 100, 0)}% of the floor`,
      );
    }
    const probe = consumer.rebatchedProbe;
    sections.push(
      `Re-batched probe (untimed): ${probe.records} multi-message bodies, ${probe.distinctEvents} distinct events, repeats regrouped with other messages\n` +
        table(
          ['', 'effects', 'missing', 'repeated'],
          (['ours', 'powertools', 'powertoolsPerMessage', 'powertoolsAllWamids'] as const).map((name) => [
            {
              ours: 'ours',
              powertools: 'Powertools, first wamid',
              powertoolsPerMessage: 'Powertools, per message',
              powertoolsAllWamids: 'Powertools, all wamids',
            }[name],
            String(probe[name].effects),
            String(probe[name].missing),
            String(probe[name].repeated),
          ]),
        ),
    );
  }
  const botMix = results.botMix;
  if (botMix) {
    sections.push(
      `Bot mix: ${botMix.turns} turns, ${botMix.events} events in ${botMix.deliveries} deliveries, median of ${botMix.rounds} rounds; floor ${fixed(botMix.floorWruPerTurn, 2)} WRU/turn\n` +
        table(
          [
            '',
            'WRU/turn',
            'RRU/turn',
            'requests/turn',
            'ms/event',
            'records/s',
            '$/M events',
            '$/M at measured ms',
            'effects',
          ],
          (['ours', 'oursNoUnhandledClaims', 'powertools', 'powertoolsPerMessage'] as const).map((name) => {
            const c = botMix[name];
            return [
              name,
              fixed(c.wruPerTurn, 2),
              fixed(c.rruPerTurn, 2),
              fixed(c.requestsPerTurn, 2),
              fixed(c.lambdaMsPerEvent, 1),
              fixed(c.recordsPerSec, 0),
              fixed(c.dollarsPerMillionEvents, 2),
              fixed(c.dollarsPerMillionEventsAtMeasuredMs, 2),
              `${c.effects} (-${c.missingEffects}, +${c.repeatedEffects})`,
            ];
          }),
        ) +
        `\nDynamoDB cost ours/Powertools ×${fixed(botMix.dynamoDbCostRatio, 2)}, ours/Powertools per message ×${fixed(botMix.dynamoDbCostRatioPerMessage, 2)} (like for like ×${fixed(botMix.dynamoDbCostRatioLikeForLike, 2)})`,
    );
  }
  if (receiver) {
    sections.push(
      "Receiver: Lambda handler per delivery vs floor (HMAC-SHA256 + JSON.parse), SQS answered at the SDK's request handler, medians\n" +
        table(
          ['updates', 'body KiB', 'queue msgs', 'ms/delivery', 'floor ms', 'ratio'],
          receiver.bodies.map((body) => [
            String(body.updates),
            fixed(body.bodyBytes / 1024, 1),
            String(body.queueMessages),
            fixed(body.msPerDelivery, 3),
            fixed(body.floorMs, 3),
            `×${fixed(body.ratio, 2)}`,
          ]),
        ) +
        (receiver.fanOut
          ? `\n${receiver.fanOut.updates} updates to ${receiver.fanOut.subscribers} subscriber queues: ${fixed(receiver.fanOut.msPerDelivery, 3)} ms per delivery, ` +
            `×${fixed(receiver.fanOut.ratioToOneSubscriber, 2)} the same body to one (${fixed(receiver.fanOut.oneSubscriberMs, 3)} ms, same iterations), ` +
            `${receiver.fanOut.queueMessages} queue messages`
          : ''),
    );
  }
  if (bundles) {
    sections.push(
      `Bundles: esbuild with the construct's options; init = median ready time of ${bundles.spawns} fresh processes minus an empty module's (${fixed(bundles.baselineReadyMs, 0)} ms)\n` +
        table(
          ['bundle', 'KiB', 'map KiB', 'init ms', 'import() ms'],
          (['receiver', 'consumer'] as const).map((name) => [
            name,
            fixed(bundles[name].bytes / 1024, 1),
            fixed(bundles[name].sourceMapBytes / 1024, 1),
            fixed(bundles[name].initMs, 1),
            fixed(bundles[name].importMs, 1),
          ]),
        ),
    );
  }
  if (endToEnd) {
    sections.push(
      `End to end: local stack, autocannon ${endToEnd.connections} connections for ${endToEnd.durationSeconds} s, 30% retried deliveries\n` +
        table(
          [
            'deliveries/s',
            'ack p50 ms',
            'ack p99 ms',
            'acked',
            'distinct events',
            'effects',
            'repeated',
            'missing',
            'drain ms',
          ],
          [
            [
              fixed(endToEnd.deliveriesPerSec, 1),
              fixed(endToEnd.ackP50Ms, 0),
              fixed(endToEnd.ackP99Ms, 0),
              String(endToEnd.deliveriesAcked),
              String(endToEnd.distinctEventsAcked),
              String(endToEnd.effects),
              String(endToEnd.repeatedEffects),
              String(endToEnd.missingEffects),
              String(endToEnd.drainMs),
            ],
          ],
        ),
    );
  }
  const { conversations } = results;
  if (conversations) {
    const { replyLatency: reply, storm, order } = conversations;
    const spread = (x: typeof reply.ours) => `${fixed(x.p25Ms, 1)}–${fixed(x.p75Ms, 1)}`;
    sections.push(
      `Conversations: local stack with its defaults (load average ${conversations.machine.loadAverageAtStart.join(', ')} → ${conversations.machine.loadAverageAtEnd.join(', ')})\n` +
        table(
          ['figure', 'ms', 'p25–p75', 'from the 200'],
          [
            [
              'lone reply, median',
              fixed(reply.ours.medianMs, 1),
              spread(reply.ours),
              fixed(reply.oursAfterAnswer.medianMs, 1),
            ],
            [
              'pass-through floor, median',
              fixed(reply.floor.medianMs, 1),
              spread(reply.floor),
              fixed(reply.floorAfterAnswer.medianMs, 1),
            ],
            [
              `storm: ${storm.live.count} live messages, p99 (${fixed(storm.statusesPerSec, 1)} statuses/s)`,
              fixed(storm.live.p99Ms, 1),
              spread(storm.live),
              fixed(storm.liveAfterAnswer.maxMs, 1),
            ],
          ],
        ) +
        `\norder: ${order.inversions} inversions in ${order.judged} of ${order.pairs} pairs, ${order.missing} messages never handled`,
    );
  }
  const { consumerOverhead: overhead, stormIsolation: storm } = results;
  if (overhead) {
    const row = (name: string, x: typeof overhead.toHandler) => [
      name,
      fixed(x.medianMs, 3),
      `${fixed(x.p25Ms, 3)}–${fixed(x.p75Ms, 3)}`,
    ];
    sections.push(
      `Consumer overhead: ${overhead.invocations} invocations of one fresh message (${overhead.lane} lane${overhead.ordered ? ', ordered' : ''}), interleaved with as many bare PutItems\n` +
        table(
          ['', 'median ms', 'p25–p75'],
          [
            row('invocation → handler start', overhead.toHandler),
            row('bare conditional PutItem', overhead.barePut),
            row('whole invocation', overhead.invocation),
          ],
        ) +
        `\nadded before the handler beyond one PutItem: ${fixed(overhead.addedMs, 3)} ms`,
    );
  }
  if (storm) {
    const row = (name: string, x: typeof storm.withCampaign) => [
      name,
      String(x.messages),
      String(x.messageP50Ms),
      String(x.messageP99Ms),
      String(x.statusP99Ms),
    ];
    sections.push(
      `Storm isolation: capacity simulation, ${storm.scenario}${storm.short ? ' (short)' : ''}, seed ${storm.seed}, ${storm.campaignMessages} campaign messages\n` +
        table(
          ['', 'messages', 'message p50 ms', 'message p99 ms', 'status p99 ms'],
          [row('with the campaign', storm.withCampaign), row('without', storm.withoutCampaign)],
        ),
    );
  }
  const goals = Object.entries(results.goals)
    .filter(([, met]) => met !== null)
    .map(([goal, met]) => `${met ? 'met    ' : 'NOT met'}  ${goal}`);
  if (goals.length > 0) sections.push(`Goals\n${goals.join('\n')}`);
  return `\n${sections.join('\n\n')}\n`;
}
