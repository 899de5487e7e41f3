/**
 * The M/M/c queue (Poisson arrivals at rate λ, exponential service times of mean S, c servers), used to
 * predict how long a webhook event waits in SQS before a consumer starts on it, and to size the
 * consumer's `maxConcurrency`. Pure functions, no I/O.
 *
 * Offered load a = λ·S (Erlangs); utilisation ρ = a / c. The queue is stable only for ρ < 1.
 */

export interface QueueModel {
  /** λ: events arriving per second. */
  readonly arrivalRatePerSecond: number;
  /** S: mean time one server needs per event, in seconds. */
  readonly meanServiceSeconds: number;
  /** c: servers working in parallel (consumer invocations). */
  readonly servers: number;
}

export function offeredLoad(model: QueueModel): number {
  return model.arrivalRatePerSecond * model.meanServiceSeconds;
}

/** ρ = λ·S / c. */
export function utilisation(model: QueueModel): number {
  return offeredLoad(model) / model.servers;
}

/** Erlang B (blocking probability) by the stable recursion B(k) = a·B(k−1) / (k + a·B(k−1)). */
export function erlangB(servers: number, load: number): number {
  assertServers(servers);
  if (load < 0) throw new RangeError('The offered load must be >= 0.');
  let b = 1;
  for (let k = 1; k <= servers; k++) b = (load * b) / (k + load * b);
  return b;
}

/** Erlang C: the probability that an arriving event has to wait. 1 when the queue is unstable (a >= c). */
export function erlangC(servers: number, load: number): number {
  assertServers(servers);
  if (load >= servers) return 1;
  if (load === 0) return 0;
  const b = erlangB(servers, load);
  return (servers * b) / (servers - load * (1 - b));
}

/** Mean wait before service, Wq = C(c, a) / (c·μ − λ); Infinity when unstable. */
export function meanWaitSeconds(model: QueueModel): number {
  const spareRate = spareServiceRate(model);
  if (spareRate <= 0) return Number.POSITIVE_INFINITY;
  return erlangC(model.servers, offeredLoad(model)) / spareRate;
}

/**
 * The wait that a fraction `p` of events do not exceed: P(Wq > t) = C·e^(−(cμ−λ)t), so
 * t_p = ln(C / (1 − p)) / (cμ − λ), and 0 when fewer than 1 − p of the events wait at all.
 */
export function waitPercentileSeconds(model: QueueModel, p: number): number {
  if (!(p > 0 && p < 1)) throw new RangeError('The percentile must be between 0 and 1 (exclusive).');
  const spareRate = spareServiceRate(model);
  if (spareRate <= 0) return Number.POSITIVE_INFINITY;
  const c = erlangC(model.servers, offeredLoad(model));
  return c <= 1 - p ? 0 : Math.log(c / (1 - p)) / spareRate;
}

/**
 * The Allen–Cunneen approximation for M/G/c (and G/G/c): the M/M/c wait scaled by (Ca² + Cs²) / 2, where
 * Cs² is the squared coefficient of variation of the service time (1 for exponential, 0 for constant) and
 * Ca² that of the inter-arrival time (1 for Poisson arrivals). Exact for M/G/1 (Pollaczek–Khinchine).
 */
export function allenCunneenWaitSeconds(model: QueueModel, serviceCv2: number, arrivalCv2 = 1): number {
  if (serviceCv2 < 0 || arrivalCv2 < 0) throw new RangeError('Squared coefficients of variation are >= 0.');
  return meanWaitSeconds(model) * ((arrivalCv2 + serviceCv2) / 2);
}

export interface ServerRecommendation {
  readonly servers: number;
  readonly meanWaitSeconds: number;
  readonly utilisation: number;
}

/**
 * The fewest servers (from `minServers`, 2 by default: Lambda's smallest `maxConcurrency`) whose predicted
 * mean wait is at most `targetMeanWaitSeconds`.
 */
export function recommendServers(
  arrivalRatePerSecond: number,
  meanServiceSeconds: number,
  targetMeanWaitSeconds: number,
  options: { minServers?: number; maxServers?: number } = {},
): ServerRecommendation {
  const minServers = options.minServers ?? 2;
  const maxServers = options.maxServers ?? 1000;
  if (targetMeanWaitSeconds < 0) throw new RangeError('The target wait must be >= 0.');
  for (let servers = Math.max(1, minServers); servers <= maxServers; servers++) {
    const model = { arrivalRatePerSecond, meanServiceSeconds, servers };
    const wait = meanWaitSeconds(model);
    if (wait <= targetMeanWaitSeconds)
      return { servers, meanWaitSeconds: wait, utilisation: utilisation(model) };
  }
  throw new RangeError(`No server count up to ${maxServers} meets a mean wait of ${targetMeanWaitSeconds}s.`);
}

function spareServiceRate(model: QueueModel): number {
  assertServers(model.servers);
  if (model.meanServiceSeconds <= 0) throw new RangeError('The mean service time must be > 0.');
  return model.servers / model.meanServiceSeconds - model.arrivalRatePerSecond;
}

function assertServers(servers: number): void {
  if (!Number.isInteger(servers) || servers < 1)
    throw new RangeError('The server count must be an integer >= 1.');
}
