/**
 * The defaults docs/forwarding.md states are the code's: the shape, the timeout and its bound, what a refusal
 * keeps out of the logs, and where the local stack reads the secret; decisions.md's forwarding records; and
 * handlers.md's `DeadLetter`.
 */
import { describe, expect, it } from 'vitest';
import { ENV } from '../../../contract/environment.ts';
import {
  DEFAULT_FORWARD_TIMEOUT_SECONDS,
  FORWARD_SHAPES,
  forwardInFlightShare,
  forwardLaneInFlight,
  MAX_FORWARD_TIMEOUT_SECONDS,
  MIN_FORWARD_IN_FLIGHT_PER_LANE,
  RESERVED_FORWARD_HEADERS,
  resolveForward,
} from '../../../contract/forwarding.ts';
import { DeadLetter, MAX_DEAD_LETTER_DETAILS_BYTES } from '../../../functions/consumer/handler-api.ts';
import { FORWARD_REFUSALS_BEFORE_DEAD_LETTER } from '../../../functions/forward/forward-handlers.ts';
import { KEPT_ANSWER_BYTES } from '../../../functions/forward/forwarder.ts';
import { SECRETS_MAX_AGE_SECONDS } from '../../../functions/receiver/webhook-secrets.ts';
import { prose } from './stated-defaults-support.ts';

const page = prose('docs/forwarding.md');

describe("docs/forwarding.md's stated defaults", () => {
  const resolved = resolveForward({ url: 'https://example.com/hook' }, { loopbackHttp: false });

  it('states the default shape and the shapes there are', () => {
    expect(typeof resolved === 'string' ? resolved : resolved.shape).toBe('meta');
    expect(FORWARD_SHAPES).toEqual(['meta', 'event']);
    expect(page).toContain('| `shape` | `meta` (the default) or `event`, below |');
  });

  it('states the timeout default and bound', () => {
    expect(typeof resolved === 'string' ? resolved : resolved.timeoutSeconds).toBe(
      DEFAULT_FORWARD_TIMEOUT_SECONDS,
    );
    expect(page).toContain(
      `abandoned and retried; default ${DEFAULT_FORWARD_TIMEOUT_SECONDS}, at most ${MAX_FORWARD_TIMEOUT_SECONDS} |`,
    );
  });

  it('states on which receive a refusal goes to the DLQ, and what it keeps', () => {
    const ordinal = ['', 'first', 'second', 'third', 'fourth', 'fifth'][FORWARD_REFUSALS_BEFORE_DEAD_LETTER];
    expect(page).toContain(`on its ${ordinal} receive the consumer moves it to the subscriber's DLQ`);
    expect(page).toContain(`the status and the answer's first ${KEPT_ANSWER_BYTES} bytes`);
    expect(page).toContain(
      `reaches the destination at most ${['', 'once', 'twice', 'three times'][FORWARD_REFUSALS_BEFORE_DEAD_LETTER]}`,
    );
  });

  it('states that batch is off by default', () => {
    expect(typeof resolved === 'string' ? resolved : resolved.batch).toBe(false);
    expect(page).toContain('instead of one per event (`meta` only, [below](#batches)); default `false` |');
  });

  it('names the headers a secret may not set, and how long a read value is kept', () => {
    const shown = RESERVED_FORWARD_HEADERS.filter((name) => !name.endsWith('*')).map(
      (name) =>
        `\`${name.replace(/(^|-)([a-z])/g, (_, dash: string, letter: string) => dash + letter.toUpperCase())}\``,
    );
    const prefixes = RESERVED_FORWARD_HEADERS.filter((name) => name.endsWith('*')).map(
      (name) => `\`${name}\``,
    );
    expect(prefixes).toHaveLength(1);
    expect(page).toContain(
      `may not name a header the consumer sets itself: ${shown.join(', ')} or any ${prefixes[0]} header, in any case`,
    );
    expect(page).toContain(
      `through Powertools Parameters, cached for ${SECRETS_MAX_AGE_SECONDS / 60} minutes, so a rotated value`,
    );
  });

  it("states maxInFlight's minimum per lane and how it is split", () => {
    const least = MIN_FORWARD_IN_FLIGHT_PER_LANE;
    expect(page).toContain(`at least ${least} per lane: ${2 * least} with a message lane, ${least} without;`);
    expect(page).toContain(
      `cannot be held below ${least} concurrent invocations of a lane, so a lane needs a share of ${least}: a \`maxInFlight\` below ${2 * least} (${least} for a subscriber without a message lane) is refused`,
    );
    expect([forwardInFlightShare(9, 'message', true), forwardInFlightShare(9, 'status', true)]).toEqual([
      5, 4,
    ]);
    expect(page).toContain('the message lane gets half, rounded up, the status lane the rest');
    const ten = forwardLaneInFlight(forwardInFlightShare(10, 'status', true), 1_000);
    expect(forwardInFlightShare(10, 'message', true)).toBe(ten.share);
    expect(page).toContain(
      `With \`maxInFlight: 10\` both lanes run at most ${ten.maxConcurrency} invocations of ${ten.postsPerInvocation} POST;`,
    );
    const sixty = forwardLaneInFlight(forwardInFlightShare(60, 'status', true), 10);
    expect(page).toContain(
      `\`settings: { maxConcurrency: 10 }\`, ${sixty.maxConcurrency} invocations of ${sixty.postsPerInvocation} POSTs each`,
    );
  });

  it("names the local stack's app secret variable", () => {
    expect(page).toContain(`signs with the local app secret (\`${ENV.appSecrets}\`, the first)`);
  });
});

describe("docs/decisions.md's forwarding records", () => {
  const decisions = prose('docs/decisions.md');

  it('state the secret cache and the kept answer as the code has them', () => {
    expect(decisions).toContain(`cached for ${SECRETS_MAX_AGE_SECONDS / 60} minutes like the receiver's`);
    expect(decisions).toContain(`(the status and the first ${KEPT_ANSWER_BYTES} bytes of the answer)`);
    expect(decisions).toContain(`with \`afterReceives: ${FORWARD_REFUSALS_BEFORE_DEAD_LETTER}\``);
    expect(decisions).toContain(
      `through Powertools Parameters, cached for ${SECRETS_MAX_AGE_SECONDS / 60} minutes, and only its role`,
    );
    const eight = forwardLaneInFlight(30, 8);
    expect(decisions).toContain(
      `(60 over two lanes at concurrency ${eight.maxConcurrency}: ${eight.postsPerInvocation} POSTs per invocation, so ${eight.maxConcurrency * eight.postsPerInvocation} in flight of each ${eight.share})`,
    );
    expect(decisions).toContain(
      `Lambda's SQS event source cannot be held below ${MIN_FORWARD_IN_FLIGHT_PER_LANE} concurrent invocations of a lane`,
    );
  });
});

describe("docs/handlers.md's DeadLetter", () => {
  it('states the default receive and the room for details as the code has them', () => {
    const handlers = prose('docs/handlers.md');
    expect(new DeadLetter({ reason: 'x' }).afterReceives).toBe(1);
    expect(handlers).toContain('until its `afterReceives`-th receive (default 1)');
    expect(handlers).toContain(`at most ${MAX_DEAD_LETTER_DETAILS_BYTES / 1024} KiB of JSON`);
  });
});
