/**
 * The consumer a schedule drives. `product` is exactly what the Lambda runs: `createConsumerHandler` (the
 * WebhookConsumer, ClaimStore, StatusLedger, dead-letter quarantine, SQS redelivery and the Powertools batch
 * handler) over the simulated clients, with a silent logger, metrics that publish nowhere, and the virtual
 * clock and sleep.
 *
 * The mutants put back, without touching product code, the behaviour of one of the two lost-event bugs of
 * issue 10, by wrapping one port of the same real consumer:
 *
 * - `in-flight-acknowledged`: every claim found in flight is reported as held by another queue message, so the
 *   consumer acknowledges it, as it did before it compared message ids (§1);
 * - `ledger-repeated`: a status that an earlier attempt already made current is reported as `repeated`, the
 *   ledger's answer before it stored each status's first change (§2).
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import type { SQSClient } from '@aws-sdk/client-sqs';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { METRICS_NAMESPACE, SERVICE_NAME } from '../../contract/metric-names.ts';
import { ClaimStore } from '../../functions/claims/claim-store.ts';
import { createConsumerQuarantine } from '../../functions/consumer/consumer-quarantine.ts';
import { type ConsumerConfig, createConsumerHandler } from '../../functions/consumer/create-consumer.ts';
import type { WebhookHandlers } from '../../functions/consumer/handler-api.ts';
import { createSqsBatchHandler } from '../../functions/consumer/sqs-batch-handler.ts';
import {
  type ConsumerClaims,
  type StatusRecorder,
  WebhookConsumer,
} from '../../functions/consumer/webhook-consumer.ts';
import { StatusLedger, type StatusLedgerChange } from '../../functions/ledger/status-ledger.ts';
import { SqsQuarantineQueue } from '../../functions/queue/sqs-quarantine-queue.ts';
import { SqsRedeliveryScheduler } from '../../functions/queue/sqs-redelivery-scheduler.ts';
import type { BatchFunction } from './lambda-event-source.ts';

export const CONSUMER_VARIANTS = ['product', 'in-flight-acknowledged', 'ledger-repeated'] as const;
export type ConsumerVariant = (typeof CONSUMER_VARIANTS)[number];

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

export function buildConsumer(variant: ConsumerVariant, ports: SimulatedPorts): BatchFunction {
  if (variant === 'product') {
    return createConsumerHandler(ports.config, {
      documentClient: ports.documentClient,
      sqs: ports.sqs,
      handlers: ports.handlers,
      logger,
      metrics: new UnpublishedMetrics({ namespace: METRICS_NAMESPACE, serviceName: SERVICE_NAME }),
      clock: ports.clock,
      sleep: ports.sleep,
    });
  }
  const { config } = ports;
  const claims = new ClaimStore({
    documentClient: ports.documentClient,
    tableName: config.tableName,
    retentionDays: config.retentionDays,
    leaseMarginMs: config.leaseMarginMs,
    clock: ports.clock,
  });
  const ledger = new StatusLedger({
    documentClient: ports.documentClient,
    tableName: config.tableName,
    keyNamespace: config.keyNamespace,
    retentionDays: config.retentionDays,
    clock: ports.clock,
  });
  const deadLetters = new SqsQuarantineQueue({
    sqs: ports.sqs,
    quarantineQueueUrl: config.quarantineQueueUrl,
    maximumMessageSizeBytes: config.maximumMessageSizeBytes,
  });
  const consumer = new WebhookConsumer({
    claims: variant === 'in-flight-acknowledged' ? acknowledgingEveryInFlight(claims) : claims,
    ledger: variant === 'ledger-repeated' ? repeatedOnRetry(ledger) : ledger,
    quarantine: createConsumerQuarantine(deadLetters),
    redelivery: new SqsRedeliveryScheduler({ sqs: ports.sqs, deliveryQueueUrl: config.deliveryQueueUrl }),
    handlers: ports.handlers,
    statusLedger: config.statusLedger,
    claimUnhandledEvents: config.claimUnhandledEvents,
    retry: {
      retryBaseDelaySeconds: config.retryBaseDelaySeconds,
      retryMaxDelaySeconds: config.retryMaxDelaySeconds,
    },
    logger,
    clock: ports.clock,
    sleep: ports.sleep,
  });
  return createSqsBatchHandler({
    consumer,
    metrics: new UnpublishedMetrics({ namespace: METRICS_NAMESPACE, serviceName: SERVICE_NAME }),
    logger,
  });
}

function acknowledgingEveryInFlight(claims: ClaimStore): ConsumerClaims {
  return {
    claimMany: async (requests, options) =>
      (await claims.claimMany(requests, options)).map((result) =>
        result.outcome === 'duplicate-in-flight'
          ? { ...result, existing: { ...result.existing, messageId: 'mutant:another-message' } }
          : result,
      ),
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
