/**
 * What a forward subscriber costs per million events it forwards (docs/cost.md, "Forwarding"; docs/design.md
 * §12): what any subscriber spends on its copy of a delivery (the receiver's send to its queue, its event
 * source's receives and deletes, its consumer, its claims, its logs; fan-out-cost.ts), with the consumer billed
 * while it waits for the destination's answer, and the bytes of each POST sent out to the internet. The
 * destination's answer time decides the Lambda line, so the table gives three.
 */
import { PRICES } from '../../../cli/cost/prices.ts';
import { ASSUMPTIONS, MILLION, referenceShape } from '../../../cli/cost/stack-cost.ts';
import { fanOutCostPerMillion, subscriberCostPerMillion } from './fan-out-cost.ts';

/** Assumed, each with its reason; everything else is the construct's settings and the price table. */
export const FORWARD_ASSUMPTIONS = {
  /** A forwarded body: Meta's envelope of one event, about the size of the delivery it was cut from. */
  bodyBytes: 1_500,
  /**
   * What else one POST sends: the request line and headers (host, content type and length, the signature or
   * the Standard Webhooks headers, `Idempotency-Key`), and TLS and TCP framing; a reused connection's share of
   * its handshake.
   */
  requestOverheadBytes: 700,
} as const;

/** The destination's answer times the table is computed for, in milliseconds. */
export const FORWARD_ANSWER_MS = [50, 200, 1_000] as const;

const GB = 1e9;

export interface ForwardCost {
  readonly answerMs: number;
  readonly batchSize: number;
  /** The receiver's send into its queue, and its event source's receives and deletes. */
  readonly sqs: number;
  readonly lambda: number;
  readonly dynamoDb: number;
  readonly logs: number;
  readonly dataOut: number;
  readonly total: number;
}

/**
 * Dollars per million events forwarded, one event per delivery, every event fresh. A batch's records are
 * handled together, so an invocation lasts the consumer's own time for its batch plus one answer, not one per
 * event (`maxInFlight` below the batch size would queue them).
 */
export function forwardCostPerMillion(answerMs: number, traffic: 'quiet' | 'busy'): ForwardCost {
  const reference = referenceShape(traffic);
  const shape = {
    ...reference,
    consumerMsPerInvocation: ASSUMPTIONS[traffic].consumerMs + answerMs,
  };
  const own = subscriberCostPerMillion(shape);
  const send = fanOutCostPerMillion('receiverSends', 1, shape);
  const a = FORWARD_ASSUMPTIONS;
  const dataOut =
    ((MILLION * (a.bodyBytes + a.requestOverheadBytes)) / GB) * PRICES.dataTransfer.outToInternetPerGb;
  const parts = {
    sqs: send + own.sqsReceiveAndDelete,
    lambda: own.consumer,
    dynamoDb: own.dynamoDb,
    logs: own.logs,
    dataOut,
  };
  return {
    answerMs,
    batchSize: ASSUMPTIONS[traffic].batchSize,
    ...parts,
    total: Object.values(parts).reduce((sum, value) => sum + value, 0),
  };
}
