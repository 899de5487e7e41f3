/**
 * The steady part of the live phase (after a short warm-up, before the outage) against Erlang C: the
 * measured mean wait, and the prediction from the configured and from the measured λ and S.
 */

import {
  allenCunneenWaitSeconds,
  meanWaitSeconds,
  recommendServers,
  type ServerRecommendation,
  utilisation,
} from 'whatsapp-webhook-dedup/contract/erlang-c';
import type { StatsBucket } from '../local/observe/pipeline-stats.ts';
import { sumBuckets } from './bucket-sums.ts';

export interface QueueingComparison {
  readonly windowSeconds: readonly [number, number];
  readonly records: number;
  readonly measuredMeanWaitMs: number | undefined;
  readonly measuredServiceMs: number | undefined;
  readonly measuredArrivalsPerSecond: number;
  /** Erlang C with the configured λ and S. */
  readonly predictedMeanWaitMs: number;
  /** Erlang C with the λ and S measured in the window. */
  readonly predictedFromMeasuredMs: number | undefined;
  /** Squared coefficient of variation of the measured service time (1 for exponential). */
  readonly measuredServiceCv2: number | undefined;
  /** Allen–Cunneen (M/G/c) with the measured λ, S and service variability. */
  readonly predictedMgcMs: number | undefined;
  readonly utilisation: number;
  readonly recommendation: (ServerRecommendation & { readonly targetWaitMs: number }) | undefined;
}

/** The configured queue: λ, S, c, when the outage starts, and the wait the recommendation aims at. */
export interface ConfiguredQueue {
  readonly ratePerSecond: number;
  readonly effectMeanMs: number;
  readonly workers: number;
  readonly outageStartSeconds: number;
  readonly targetWaitMs: number;
}

export function compareWithModel(
  configured: ConfiguredQueue,
  startedAt: number,
  series: readonly StatsBucket[],
  events: readonly { readonly acceptedAt: number | undefined }[],
): QueueingComparison {
  const warmUp = Math.min(5, configured.outageStartSeconds * 0.2);
  const from = startedAt + warmUp * 1000;
  const to = startedAt + configured.outageStartSeconds * 1000;
  const seconds = Math.max(0.001, (to - from) / 1000);
  const sum = sumBuckets(series.filter((b) => b.t * 1000 >= from && b.t * 1000 + 1000 <= to));
  const arrivals = events.filter(
    (s) => s.acceptedAt !== undefined && s.acceptedAt >= from && s.acceptedAt < to,
  );
  const measuredArrivalsPerSecond = arrivals.length / seconds;
  const measuredServiceMs = sum.invocations === 0 ? undefined : sum.invocationMsSum / sum.invocations;
  const measuredServiceCv2 =
    measuredServiceMs === undefined || sum.invocations < 2
      ? undefined
      : Math.max(0, sum.invocationMsSquaredSum / sum.invocations - measuredServiceMs ** 2) /
        measuredServiceMs ** 2;
  const nominal = {
    arrivalRatePerSecond: configured.ratePerSecond,
    meanServiceSeconds: configured.effectMeanMs / 1000,
    servers: configured.workers,
  };
  const measuredModel =
    measuredServiceMs === undefined
      ? undefined
      : {
          arrivalRatePerSecond: measuredArrivalsPerSecond,
          meanServiceSeconds: measuredServiceMs / 1000,
          servers: configured.workers,
        };
  let recommendation: QueueingComparison['recommendation'];
  try {
    const basis = measuredModel ?? nominal;
    recommendation = {
      ...recommendServers(
        basis.arrivalRatePerSecond,
        basis.meanServiceSeconds,
        configured.targetWaitMs / 1000,
      ),
      targetWaitMs: configured.targetWaitMs,
    };
  } catch {
    recommendation = undefined;
  }
  return {
    windowSeconds: [warmUp, configured.outageStartSeconds],
    records: sum.records,
    measuredMeanWaitMs: sum.records === 0 ? undefined : sum.waitMsSum / sum.records,
    measuredServiceMs,
    measuredArrivalsPerSecond,
    predictedMeanWaitMs: meanWaitSeconds(nominal) * 1000,
    predictedFromMeasuredMs: measuredModel === undefined ? undefined : meanWaitSeconds(measuredModel) * 1000,
    measuredServiceCv2,
    predictedMgcMs:
      measuredModel === undefined || measuredServiceCv2 === undefined
        ? undefined
        : allenCunneenWaitSeconds(measuredModel, measuredServiceCv2) * 1000,
    utilisation: utilisation(nominal),
    recommendation,
  };
}
