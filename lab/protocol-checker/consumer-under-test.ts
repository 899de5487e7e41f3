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
 * Three mutants break the consumer's own dead-lettering of the records a handler gives up on (`DeadLetter`),
 * through the SQS client it is given (`ConsumerDependencies.sqs`), or the handlers:
 *
 * - `dead-letter-dropped`: the lane DLQ never gets the records a handler gave up on, yet the consumer is told
 *   they were stored: it counts them as handled, SQS deletes them, and their events are lost;
 * - `dead-letter-failure-ignored`: a send to the lane DLQ that failed (an error, or an entry refused) is taken
 *   for a success, so the consumer counts its records as handled instead of keeping them in the lane;
 * - `dead-letter-receives-ignored`: every `DeadLetter` is read as `afterReceives: 1`, so a record goes to the
 *   DLQ on the first receive a handler gives up on, where the handler asked for more tries.
 *
 * One mutant changes the receiver instead (lane-pieces.ts), the consumers staying the product's:
 *
 * - `conversation-from-phone`: the receiver reads a message's conversation from `from` alone, the rule before
 *   BSUIDs, so that a customer whose phone number comes and goes has their messages in two FIFO groups
 *   (`<phone_number_id>:<phone>` and `<phone_number_id>:-`), which run in parallel.
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import {
  SendMessageBatchCommand,
  type SendMessageBatchCommandOutput,
  type SQSClient,
} from '@aws-sdk/client-sqs';
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
import {
  DeadLetter,
  type WebhookHandler,
  type WebhookHandlers,
} from '../../functions/consumer/handler-api.ts';
import { StatusLedger, type StatusLedgerChange } from '../../functions/ledger/status-ledger.ts';
import { DEAD_LETTER_REASON_ATTRIBUTE } from '../../functions/queue/sqs-conversation-dead-letters.ts';
import type { BatchFunction } from './lambda-event-source.ts';
import type { ConversationRule } from './lane-pieces.ts';

type Mutation = Pick<ConsumerDependencies, 'claimStore' | 'statusLedger'> & {
  /** Changes the configuration the consumer is built with. */
  readonly config?: (config: ConsumerConfig) => ConsumerConfig;
  /** Wraps the SQS client the consumer is given (built with `config`). */
  readonly sqs?: (sqs: SQSClient, config: ConsumerConfig) => SQSClient;
  /** Wraps the handlers the consumer is given. */
  readonly handlers?: (handlers: WebhookHandlers) => WebhookHandlers;
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
  'dead-letter-dropped': { sqs: (sqs, config) => laneDeadLetterSends(sqs, config, droppingGivenUp) },
  'dead-letter-failure-ignored': { sqs: (sqs, config) => laneDeadLetterSends(sqs, config, ignoringFailure) },
  'dead-letter-receives-ignored': { handlers: givingUpOnFirstReceive },
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
  const {
    config: mutateConfig,
    sqs: wrapSqs,
    handlers: wrapHandlers,
    receiverConversation: _receiver,
    ...mutation
  }: Mutation = MUTATIONS[variant];
  const config = mutateConfig?.(ports.config) ?? ports.config;
  return createConsumerHandler(config, {
    documentClient: ports.documentClient,
    sqs: wrapSqs?.(ports.sqs, config) ?? ports.sqs,
    handlers: wrapHandlers?.(ports.handlers) ?? ports.handlers,
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

type SendMessageBatch = (
  command: SendMessageBatchCommand,
  send: (command: SendMessageBatchCommand) => Promise<SendMessageBatchCommandOutput>,
) => Promise<SendMessageBatchCommandOutput>;

/** The consumer's SQS client, its sends to the lane's DLQ (`config.laneDeadLetters`) going through `intercept`. */
function laneDeadLetterSends(sqs: SQSClient, config: ConsumerConfig, intercept: SendMessageBatch): SQSClient {
  const queueUrl = config.laneDeadLetters?.queueUrl;
  const send = (command: Parameters<SQSClient['send']>[0]) =>
    command instanceof SendMessageBatchCommand &&
    queueUrl !== undefined &&
    command.input.QueueUrl === queueUrl
      ? intercept(command, (forwarded) => sqs.send(forwarded))
      : sqs.send(command);
  return new Proxy(sqs, {
    get: (target, property, receiver) =>
      property === 'send' ? send : Reflect.get(target, property, receiver),
  });
}

/** Sends on only the entries no handler gave up on; answers that every entry was stored. */
const droppingGivenUp: SendMessageBatch = async (command, send) => {
  const entries = command.input.Entries ?? [];
  const kept = entries.filter(
    (entry) => entry.MessageAttributes?.[DEAD_LETTER_REASON_ATTRIBUTE] === undefined,
  );
  if (kept.length > 0) await send(new SendMessageBatchCommand({ ...command.input, Entries: kept }));
  return {
    Successful: entries.map((entry) => ({ Id: entry.Id, MessageId: 'dropped', MD5OfMessageBody: '' })),
    Failed: [],
    $metadata: {},
  };
};

/** Answers a send that failed, as a whole or an entry, as if every entry had been stored. */
const ignoringFailure: SendMessageBatch = async (command, send) => {
  try {
    return { ...(await send(command)), Failed: [] };
  } catch {
    return { Successful: [], Failed: [], $metadata: {} };
  }
};

/** Every handler, its `DeadLetter` rethrown with `afterReceives: 1`. */
function givingUpOnFirstReceive(handlers: WebhookHandlers): WebhookHandlers {
  const wrap =
    (handler: WebhookHandler<never>): WebhookHandler<never> =>
    async (context) => {
      try {
        await handler(context);
      } catch (error) {
        if (!(error instanceof DeadLetter)) throw error;
        throw new DeadLetter({ reason: error.reason, details: error.details, afterReceives: 1 });
      }
    };
  return Object.fromEntries(
    Object.entries(handlers).map(([name, value]) => [
      name,
      typeof value === 'function' ? wrap(value as WebhookHandler<never>) : value,
    ]),
  ) as WebhookHandlers;
}
