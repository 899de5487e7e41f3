/**
 * A forward definition's options beyond its destination (contract/forwarding.ts): `batch` (meta shape only),
 * `headersSecretName` and the headers its secret may hold, and `maxInFlight`, split between the subscriber's
 * lanes into each lane's concurrency cap and each invocation's POSTs.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type ForwardDefinition,
  forwardHeadersProblem,
  forwardInFlightProblem,
  forwardInFlightShare,
  forwardLaneInFlight,
  isReservedForwardHeader,
  MIN_FORWARD_IN_FLIGHT_PER_LANE,
  resolveForward,
} from '../../../contract/forwarding.ts';

const URL_ = 'https://hooks.example.com/wa';
const resolve = (definition: Omit<ForwardDefinition, 'url'>) =>
  resolveForward({ url: URL_, ...definition }, { loopbackHttp: false });

describe('batch', () => {
  it('is off by default, and taken with the meta shape', () => {
    expect(resolve({})).toMatchObject({ batch: false });
    expect(resolve({ batch: true })).toMatchObject({ batch: true, shape: 'meta' });
  });

  it('is refused with the event shape, whose webhook-id names one event', () => {
    expect(resolve({ batch: true, shape: 'event', secretName: 'hooks' })).toMatch(
      /forward\.batch needs shape "meta"/,
    );
    expect(resolve({ batch: 'yes' as never })).toMatch(/forward\.batch is "yes"/);
  });
});

describe('headersSecretName', () => {
  it('names a secret, or nothing', () => {
    expect(resolve({})).toMatchObject({ headersSecretName: undefined });
    expect(resolve({ headersSecretName: 'crm-headers' })).toMatchObject({ headersSecretName: 'crm-headers' });
    expect(resolve({ headersSecretName: '' })).toMatch(
      /headersSecretName must name a Secrets Manager secret/,
    );
  });

  it('holds an object of header names and one-line string values', () => {
    expect(forwardHeadersProblem({ Authorization: 'Bearer abc', 'X-Api-Key': 'k' })).toBeUndefined();
    expect(forwardHeadersProblem({})).toBeUndefined();
    expect(forwardHeadersProblem(['Authorization'])).toMatch(/JSON object/);
    expect(forwardHeadersProblem('Authorization: x')).toMatch(/JSON object/);
    expect(forwardHeadersProblem({ 'Bad Name': 'x' })).toMatch(/"Bad Name" is not an HTTP field name/);
    expect(forwardHeadersProblem({ 'X-Count': 3 })).toMatch(/X-Count must have a string value on one line/);
    expect(forwardHeadersProblem({ 'X-Split': 'a\r\nHost: evil' })).toMatch(/X-Split must have a string/);
  });

  it.each([
    'X-Hub-Signature-256',
    'idempotency-key',
    'Webhook-Id',
    'webhook-signature',
    'webhook-timestamp',
    'Content-Type',
    'CONTENT-LENGTH',
    'Host',
  ])('refuses %s, a header the consumer sets itself', (name) => {
    expect(isReservedForwardHeader(name)).toBe(true);
    const problem = forwardHeadersProblem({ Authorization: 'Bearer secret-value', [name]: 'x' });
    expect(problem).toContain(`may not set ${name}`);
    expect(problem).not.toContain('secret-value');
  });

  it('takes headers that only resemble ours', () => {
    for (const name of ['Authorization', 'X-Webhook-Token', 'Content-Language', 'X-Idempotency']) {
      expect(isReservedForwardHeader(name)).toBe(false);
    }
  });
});

describe('maxInFlight', () => {
  it('is a whole number of at least the per-lane minimum', () => {
    expect(resolve({})).toMatchObject({ maxInFlight: undefined });
    expect(resolve({ maxInFlight: 10 })).toMatchObject({ maxInFlight: 10 });
    for (const bad of [0, 1, 2.5, Number.NaN]) {
      expect(resolve({ maxInFlight: bad })).toMatch(/forward\.maxInFlight is/);
    }
  });

  it('is refused below the minimum of two lanes, naming it', () => {
    const least = 2 * MIN_FORWARD_IN_FLIGHT_PER_LANE;
    expect(forwardInFlightProblem(least - 1, 2)).toContain(
      `the minimum with a message lane and a status lane is ${least}`,
    );
    expect(forwardInFlightProblem(least, 2)).toBeUndefined();
    expect(forwardInFlightProblem(MIN_FORWARD_IN_FLIGHT_PER_LANE, 1)).toBeUndefined();
  });

  it('is split between the lanes, the message lane taking the odd one', () => {
    expect(forwardInFlightShare(9, 'message', true)).toBe(5);
    expect(forwardInFlightShare(9, 'status', true)).toBe(4);
    expect(forwardInFlightShare(9, 'status', false)).toBe(9);
  });

  it('caps the lane concurrency at its share, and each invocation at the share over it', () => {
    expect(forwardLaneInFlight(10, 8)).toEqual({ share: 10, maxConcurrency: 8, postsPerInvocation: 1 });
    expect(forwardLaneInFlight(10, 40)).toEqual({ share: 10, maxConcurrency: 10, postsPerInvocation: 1 });
    expect(forwardLaneInFlight(100, 8)).toEqual({ share: 100, maxConcurrency: 8, postsPerInvocation: 12 });
    expect(forwardLaneInFlight(2, 8)).toEqual({ share: 2, maxConcurrency: 2, postsPerInvocation: 1 });
  });

  it('never lets the lanes together exceed it, at any concurrency they would have had', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 2 * MIN_FORWARD_IN_FLIGHT_PER_LANE, max: 5_000 }),
        fc.boolean(),
        fc.integer({ min: 2, max: 1_000 }),
        fc.integer({ min: 2, max: 1_000 }),
        (maxInFlight, hasMessageLane, statusConcurrency, messageConcurrency) => {
          const lanes = hasMessageLane
            ? ([
                ['status', statusConcurrency],
                ['message', messageConcurrency],
              ] as const)
            : ([['status', statusConcurrency]] as const);
          let total = 0;
          for (const [lane, concurrency] of lanes) {
            const bound = forwardLaneInFlight(
              forwardInFlightShare(maxInFlight, lane, hasMessageLane),
              concurrency,
            );
            expect(bound.maxConcurrency).toBeGreaterThanOrEqual(MIN_FORWARD_IN_FLIGHT_PER_LANE);
            expect(bound.maxConcurrency).toBeLessThanOrEqual(concurrency);
            expect(bound.postsPerInvocation).toBeGreaterThanOrEqual(1);
            total += bound.maxConcurrency * bound.postsPerInvocation;
          }
          expect(total).toBeLessThanOrEqual(maxInFlight);
        },
      ),
    );
  });
});
