/**
 * The consumer a schedule drives: always `createConsumerHandler` (the WebhookConsumer, ClaimStore,
 * StatusLedger, quarantine, SQS redelivery and the Powertools batch handler, as the Lambda runs them) over
 * the simulated clients, with a silent logger, metrics that publish nowhere, and the virtual clock and sleep.
 * `product` is that wiring as it ships. A mutant is the same wiring with one port wrapped through
 * `ConsumerDependencies.claimStore` or `.statusLedger`, to break one rule of the protocol:
 *
 * - `in-flight-acknowledged`: every claim found in flight is reported as done, so the consumer acknowledges the
 *   duplicate instead of keeping it until the holder's lease ends;
 * - `ledger-repeated`: a status that an earlier attempt already made current is reported as `repeated`, the
 *   ledger's answer before it stored each status's first change (docs/decisions.md, "The ledger remembers the
 *   change per status", reverted);
 * - `lease-at-claim`: the lease ends one margin after the claim instead of one margin after the invocation's
 *   deadline, far shorter than a slow effect, so a second worker takes the claim over while the first still
 *   effects;
 * - `rank-any-change`: the ledger's advance condition compares ranks with `<>` instead of `<`, so a late
 *   lower-ranked status becomes current;
 * - `fifo-in-parallel`: the message lane's consumer is configured `ordered: false` on its FIFO queue, so that
 *   a batch's records run in parallel, a conversation's as well, as the status lane's do.
 *
 * One mutant changes the receiver instead (lane-pieces.ts), the consumers staying the product's:
 *
 * - `conversation-from-phone`: the receiver reads a message's conversation from `from` alone, the rule before
 *   BSUIDs, so that a customer whose phone number comes and goes has their messages in two FIFO groups
 *   (`<phone_number_id>:<phone>` and `<phone_number_id>:-`), which run in parallel.
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import type { SQSClient } from '@aws-sdk/client-sqs';
import { type DynamoDBDocumentClient, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { PHONE_NUMBER_ID } from '../../cli/meta-traffic/webhook-bodies.ts';
import { conversationId } from '../../contract/lanes.ts';
import { METRICS_NAMESPACE, SERVICE_NAME } from '../../contract/metric-names.ts';
import { ClaimStore } from '../../functions/claims/claim-store.ts';
import type { ConsumerClaims, StatusRecorder } from '../../functions/consumer/consumer-ports.ts';
import {
  type ConsumerConfig,
  type ConsumerDependencies,
  createConsumerHandler,
} from '../../functions/consumer/create-consumer.ts';
import type { WebhookHandlers } from '../../functions/consumer/handler-api.ts';
import { StatusLedger, type StatusLedgerChange } from '../../functions/ledger/status-ledger.ts';
import type { BatchFunction } from './lambda-event-source.ts';
import type { ConversationRule } from './lane-pieces.ts';

type Mutation = Pick<ConsumerDependencies, 'claimStore' | 'statusLedger'> & {
  /** Changes the configuration the consumer is built with. */
  readonly config?: (config: ConsumerConfig) => ConsumerConfig;
  /** The receiver groups inbound messages into conversations by this rule, not by the product's. */
  readonly receiverConversation?: ConversationRule;
};

const MUTATIONS = {
  product: {},
  'in-flight-acknowledged': { claimStore: (options) => acknowledgingEveryInFlight(new ClaimStore(options)) },
  'ledger-repeated': { statusLedger: (options) => repeatedOnRetry(new StatusLedger(options)) },
  'lease-at-claim': {
    claimStore: (options) => leaseEndingAtClaim(new ClaimStore(options), options.clock ?? Date.now),
  },
  'rank-any-change': {
    statusLedger: (options) =>
      new StatusLedger({ ...options, documentClient: advancingOnAnyRank(options.documentClient) }),
  },
  'fifo-in-parallel': {
    config: (config) => (config.lane === 'message' ? { ...config, ordered: false } : config),
  },
  'conversation-from-phone': {
    receiverConversation: (message) => conversationId(PHONE_NUMBER_ID, message.from),
  },
} as const satisfies Record<string, Mutation>;

export type ConsumerVariant = keyof typeof MUTATIONS;
export const CONSUMER_VARIANTS = Object.keys(MUTATIONS) as readonly ConsumerVariant[];

export interface SimulatedPorts {
  readonly config: ConsumerConfig;
  readonly documentClient: DynamoDBDocumentClient;
  readonly sqs: SQSClient;
  readonly handlers: WebhookHandlers;
  readonly clock: () => number;
  readonly sleep: (ms: number) => Promise<void>;
}

/** Metrics kept in memory and dropped: nothing reaches stdout. */
class UnpublishedMetrics extends Metrics {
  override publishStoredMetrics(): this {
    this.clearMetrics();
    this.clearDimensions();
    this.clearMetadata();
    return this;
  }
}

// Shared by every schedule: it keeps nothing from one invocation to the next. The metrics are not: each
// consumer sets its subscriber as a default dimension, which Powertools warns about on a second setting.
const logger = new Logger({ serviceName: SERVICE_NAME, logLevel: 'SILENT' });

/** The receiver's conversation rule of a variant that changes it (lane-pieces.ts), else the product's. */
export function receiverConversationRule(variant: ConsumerVariant): ConversationRule | undefined {
  const mutation: Mutation = MUTATIONS[variant];
  return mutation.receiverConversation;
}

export function buildConsumer(variant: ConsumerVariant, ports: SimulatedPorts): BatchFunction {
  const { config: mutateConfig, receiverConversation: _receiver, ...mutation }: Mutation = MUTATIONS[variant];
  return createConsumerHandler(mutateConfig?.(ports.config) ?? ports.config, {
    documentClient: ports.documentClient,
    sqs: ports.sqs,
    handlers: ports.handlers,
    logger,
    metrics: new UnpublishedMetrics({ namespace: METRICS_NAMESPACE, serviceName: SERVICE_NAME }),
    clock: ports.clock,
    sleep: ports.sleep,
    ...mutation,
  });
}

function acknowledgingEveryInFlight(claims: ClaimStore): ConsumerClaims {
  return {
    claimMany: async (requests, options) =>
      (await claims.claimMany(requests, options)).map((result) =>
        result.outcome === 'duplicate-in-flight' ? { ...result, outcome: 'duplicate-done' as const } : result,
      ),
    complete: (claim) => claims.complete(claim),
    release: (claim) => claims.release(claim),
  };
}

/** The store is told the invocation ends as it claims: `leaseUntil` is then the claim time plus the margin. */
function leaseEndingAtClaim(claims: ClaimStore, clock: () => number): ConsumerClaims {
  return {
    claimMany: (requests) => claims.claimMany(requests, { deadlineMs: clock() }),
    complete: (claim) => claims.complete(claim),
    release: (claim) => claims.release(claim),
  };
}

function repeatedOnRetry(ledger: StatusLedger): StatusRecorder {
  return {
    record: async (observation) => {
      const before = await ledger.view(observation.wamid, observation.recipientParticipantId);
      const update = await ledger.record(observation);
      if (before?.current !== observation.status) return update;
      return { ...update, change: 'repeated' as StatusLedgerChange };
    },
  };
}

const ADVANCE_COMPARISON = 'currentRank < :rank';

/** The ledger's own client, whose advance condition (`currentRank < :rank`) is sent as `currentRank <> :rank`. */
function advancingOnAnyRank(documentClient: DynamoDBDocumentClient): DynamoDBDocumentClient {
  const send = (command: Parameters<DynamoDBDocumentClient['send']>[0]) => {
    if (!(command instanceof UpdateCommand) || command.input.ConditionExpression === undefined) {
      return documentClient.send(command);
    }
    const condition = command.input.ConditionExpression;
    if (!condition.includes(ADVANCE_COMPARISON)) {
      throw new Error(`The ledger's advance condition no longer reads "${ADVANCE_COMPARISON}": ${condition}`);
    }
    const mutated = new UpdateCommand({
      ...command.input,
      ConditionExpression: condition.replace(ADVANCE_COMPARISON, 'currentRank <> :rank'),
    });
    return documentClient.send(mutated);
  };
  return new Proxy(documentClient, {
    get: (target, property, receiver) =>
      property === 'send' ? send : Reflect.get(target, property, receiver),
  });
}
