import type { LogLevel } from '@aws-lambda-powertools/logger/types';
import type { TableV2 } from 'aws-cdk-lib/aws-dynamodb';
import type { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import type { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { type ISecret, Secret } from 'aws-cdk-lib/aws-secretsmanager';
import type { IQueue, Queue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { subscriberIdPart } from '../../contract/stack-outputs.ts';
import { DEFAULT_SUBSCRIBER_NAME, type ResolvedSubscriber } from '../../contract/subscribers.ts';
import { buildConsumer, type ForwardSecret } from './consumer.ts';
import { buildMessageLaneQueues, buildSubscriberQueues } from './queues.ts';

/** A subscriber's message lane (contract/lanes.ts): inbound messages, apart from its status lane. */
export interface WebhookMessageLane {
  /** A FIFO queue grouped by conversation; `false`: a standard queue. */
  readonly ordered: boolean;
  readonly queue: Queue;
  readonly deadLetterQueue: Queue;
  readonly consumerFunction: NodejsFunction;
  readonly eventSource: SqsEventSource;
}

/** One subscriber's resources, as the construct exposes them. */
export interface WebhookSubscriber {
  readonly name: string;
  /** The webhook fields it receives; `undefined`: every field. */
  readonly fields: readonly string[] | undefined;
  /** A forward subscriber: its consumers POST to a destination (`forward`), whose answers its dashboard counts. */
  readonly forwards: boolean;
  /** The phone number ids it receives; `undefined`: every number unless `wabas` limits it. */
  readonly numbers: readonly string[] | undefined;
  /** The WABA ids it receives; `undefined`: every account unless `numbers` limits it. */
  readonly wabas: readonly string[] | undefined;
  /** Prefix of its claim and ledger keys; `undefined`: unprefixed. */
  readonly keyNamespace: string | undefined;
  /** The status lane: statuses, errors and every other field (all of them without a message lane). */
  readonly deliveryQueue: Queue;
  readonly deadLetterQueue: Queue;
  /** The status lane's consumer. */
  readonly consumerFunction: NodejsFunction;
  /** The SQS event source of its status lane consumer (`eventSourceMappingId`, `eventSourceMappingArn`). */
  readonly eventSource: SqsEventSource;
  /** `undefined`: it does not want `messages`, so it has no message lane. */
  readonly messageLane: WebhookMessageLane | undefined;
}

/** What every subscriber's consumer shares. */
export interface SharedSubscriberResources {
  readonly claimTable: TableV2;
  readonly quarantineQueue: IQueue;
  /** The deployment's log digest key, which every consumer reads. */
  readonly logDigestSecret: ISecret;
  /** The webhook secret: a forward subscriber of the `meta` shape without its own secret signs with its app secret. */
  readonly webhookSecret: ISecret;
  readonly logRetention: RetentionDays;
  readonly logLevel: LogLevel;
}

/** `bot` → `SubscriberBot`: the child construct of a subscriber other than `default`. */
export function subscriberConstructId(name: string): string {
  return `Subscriber${subscriberIdPart(name)}`;
}

/**
 * Every subscriber's queue, DLQ, consumer and event source mapping, and those of its message lane when it has
 * one (`MessageQueue`, `MessageDeadLetterQueue`, `MessageConsumer`, …, beside them). The `default` subscriber
 * is built in the pipeline construct itself with the ids a single-consumer stack always had (`DeliveryQueue`,
 * `DeadLetterQueue`, `Consumer`, …), so that such a stack updates in place, and still does when subscribers
 * or lanes are added beside it: replacing a delivery queue would delete the deliveries it holds. Every other
 * subscriber gets its own child construct, `Subscriber<Name>`.
 */
export function buildSubscribers(
  pipeline: Construct,
  subscribers: readonly ResolvedSubscriber[],
  shared: SharedSubscriberResources,
): WebhookSubscriber[] {
  return subscribers.map((subscriber) => {
    const scope =
      subscriber.name === DEFAULT_SUBSCRIBER_NAME
        ? pipeline
        : new Construct(pipeline, subscriberConstructId(subscriber.name));
    const queues = buildSubscriberQueues(scope, subscriber.settings);
    const otherNamespaces = subscribers
      .filter((other) => other !== subscriber)
      .flatMap((other) => (other.keyNamespace === undefined ? [] : [other.keyNamespace]));
    const consumerOptions = {
      ...shared,
      subscriber,
      otherNamespaces,
      forwardSecret: forwardSecretOf(scope, subscriber, shared.webhookSecret),
      forwardHeadersSecret: importedSecret(
        scope,
        'ForwardHeadersSecret',
        subscriber.forward?.headersSecretName,
      ),
    };
    const { consumerFunction, eventSource } = buildConsumer(scope, {
      ...consumerOptions,
      lane: {
        name: 'status',
        queue: queues.deliveryQueue,
        settings: subscriber.settings,
        ordered: false,
        deadLetterQueue: queues.deadLetterQueue,
      },
    });
    return {
      name: subscriber.name,
      fields: subscriber.fields,
      forwards: subscriber.forward !== undefined,
      numbers: subscriber.numbers,
      wabas: subscriber.wabas,
      keyNamespace: subscriber.keyNamespace,
      ...queues,
      consumerFunction,
      eventSource,
      messageLane: buildMessageLane(scope, subscriber, consumerOptions),
    };
  });
}

/**
 * The secret a forward subscriber signs with: its `secretName`'s (imported once per subscriber, for both of
 * its consumers), else the webhook secret, whose first app secret signs. `undefined` for a code subscriber.
 */
function forwardSecretOf(
  scope: Construct,
  subscriber: ResolvedSubscriber,
  webhookSecret: ISecret,
): ForwardSecret | undefined {
  const secretName = subscriber.forward?.secretName;
  if (subscriber.forward === undefined) return undefined;
  if (secretName === undefined) return { secret: webhookSecret, appSecret: true };
  return { secret: importedSecret(scope, 'ForwardSecret', secretName) as ISecret, appSecret: false };
}

/** A secret the user names (a name, or an ARN), imported once per subscriber; `undefined` when not named. */
function importedSecret(scope: Construct, id: string, nameOrArn: string | undefined): ISecret | undefined {
  if (nameOrArn === undefined) return undefined;
  return nameOrArn.startsWith('arn:')
    ? Secret.fromSecretPartialArn(scope, id, nameOrArn)
    : Secret.fromSecretNameV2(scope, id, nameOrArn);
}

function buildMessageLane(
  scope: Construct,
  subscriber: ResolvedSubscriber,
  consumerOptions: Omit<Parameters<typeof buildConsumer>[1], 'lane'>,
): WebhookMessageLane | undefined {
  const lane = subscriber.messageLane;
  if (lane === undefined) return undefined;
  const { messageQueue, messageDeadLetterQueue } = buildMessageLaneQueues(scope, lane);
  const { consumerFunction, eventSource } = buildConsumer(scope, {
    ...consumerOptions,
    lane: {
      name: 'message',
      queue: messageQueue,
      settings: lane.settings,
      ordered: lane.ordered,
      deadLetterQueue: messageDeadLetterQueue,
    },
  });
  return {
    ordered: lane.ordered,
    queue: messageQueue,
    deadLetterQueue: messageDeadLetterQueue,
    consumerFunction,
    eventSource,
  };
}
