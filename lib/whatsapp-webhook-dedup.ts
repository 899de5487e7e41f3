/**
 * `WhatsAppWebhookDedup`: the whole pipeline of docs/design.md §2–§5 as one construct. HTTP API (or the
 * receiver's function URL, `endpoint: 'function-url'`) → receiver Lambda
 * (verifies the signature, enqueues to every subscriber's queue) → per subscriber: SQS → consumer Lambda (claims
 * each event in DynamoDB under the subscriber's namespace, runs the side effect once) → its DLQ for records that
 * keep failing; for a subscriber that wants `messages`, a message lane beside that status lane (its own FIFO
 * queue grouped by conversation, DLQ and consumer over the same entry, docs/design.md §8); one quarantine queue
 * for bodies that cannot be processed as they are; a dashboard and alarms.
 *
 * The props are checked in one call before anything is built (`validate-props.ts`); each part is then built
 * by its own builder (`builders/`) from the secure defaults of `defaults.ts`.
 */
import { Annotations, Aws } from 'aws-cdk-lib';
import type { HttpApi } from 'aws-cdk-lib/aws-apigatewayv2';
import type { Dashboard } from 'aws-cdk-lib/aws-cloudwatch';
import type { TableV2 } from 'aws-cdk-lib/aws-dynamodb';
import type { IRole } from 'aws-cdk-lib/aws-iam';
import type { FunctionUrl } from 'aws-cdk-lib/aws-lambda';
import type { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import type { ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import type { Queue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import type { PipelineSettings } from '../contract/settings.ts';
import { buildDeliveryArchive, type DeliveryArchive } from './builders/archive.ts';
import { buildClaimTable } from './builders/claim-table.ts';
import { buildLogDigestSecret, buildProvenanceSecret } from './builders/generated-keys.ts';
import { onlyTheseSend } from './builders/queue-senders.ts';
import { buildQuarantineQueue } from './builders/queues.ts';
import { buildReceiver } from './builders/receiver.ts';
import { buildSubscribers, type WebhookSubscriber } from './builders/subscriber.ts';
import { buildWebhookApi } from './builders/webhook-api.ts';
import { buildWebhookFunctionUrl } from './builders/webhook-function-url.ts';
import { buildWebhookSecret } from './builders/webhook-secret.ts';
import { DEFAULT_LOG_LEVEL, DEFAULT_LOG_RETENTION } from './defaults.ts';
import type { PipelineAlarms, SubscriberAlarms, WebhookAlarms } from './monitoring/alarms.ts';
import {
  type FrontDoorMetrics,
  functionUrlFrontDoor,
  httpApiFrontDoor,
} from './monitoring/front-door-metrics.ts';
import { WebhookMonitoring } from './monitoring/webhook-monitoring.ts';
import { validateProps } from './validate-props.ts';
import type { WhatsAppWebhookDedupProps } from './whatsapp-webhook-dedup-props.ts';

export type { WhatsAppWebhookDedupProps } from './whatsapp-webhook-dedup-props.ts';

/**
 * The whole pipeline as one construct: the webhook's front door (an HTTP API, or the receiver's function URL)
 * and receiver, each subscriber's queues and consumer,
 * the claim table, the quarantine queue, the archive, the dashboard and the alarms. Every prop is optional;
 * the defaults deploy one consumer over this package's default handlers, which only log each event
 * (`consumerEntry` or `subscribers` name yours). The props are checked before anything is built: a setting
 * that could lose or hide events fails synth with an `UnsafeSettingsError` naming what to change.
 *
 * @example
 * ```typescript
 * import { App, CfnOutput, Stack } from 'aws-cdk-lib';
 * import { WhatsAppWebhookDedup } from 'whatsapp-webhook-dedup';
 *
 * const stack = new Stack(new App(), 'SupportWebhook');
 * const webhook = new WhatsAppWebhookDedup(stack, 'Webhook', {
 *   subscribers: { support: { entry: 'src/support-handlers.ts', fields: ['messages'] } },
 * });
 * new CfnOutput(stack, 'WebhookUrl', { value: webhook.webhookUrl });
 * ```
 */
export class WhatsAppWebhookDedup extends Construct {
  /** The resolved, validated pipeline settings (each subscriber's own are in `subscribers`). */
  public readonly settings: PipelineSettings;
  /** The HTTP API in front of the receiver (`GET` and `POST /webhook`); `undefined` with a function URL. */
  public readonly httpApi: HttpApi | undefined;
  /** The receiver's function URL (auth type `NONE`); `undefined` with the HTTP API (the default). */
  public readonly functionUrl: FunctionUrl | undefined;
  /**
   * The callback URL for the Meta app: `https://<api-id>.execute-api.<region>.amazonaws.com/webhook`, or with a
   * function URL `https://<url-id>.lambda-url.<region>.on.aws/webhook`.
   */
  public readonly webhookUrl: string;
  /** The receiver Lambda: verifies the signature, enqueues the delivery, answers Meta. */
  public readonly receiverFunction: NodejsFunction;
  /** Every subscriber's resources, in definition order; one, `default`, without the `subscribers` prop. */
  public readonly subscribers: readonly WebhookSubscriber[];
  /** The first subscriber's consumer (the only one without the `subscribers` prop). */
  public readonly consumerFunction: NodejsFunction;
  /** The first subscriber's delivery queue. */
  public readonly deliveryQueue: Queue;
  /** The first subscriber's dead-letter queue. */
  public readonly deadLetterQueue: Queue;
  /** Bodies the receiver or a consumer quarantined, for every subscriber. */
  public readonly quarantineQueue: Queue;
  /** The DynamoDB table of the claims and the status ledger. */
  public readonly claimTable: TableV2;
  /** The secret holding `{"appSecrets": [...], "verifyToken": "..."}`: created, or `existingSecretName`'s. */
  public readonly webhookSecret: ISecret;
  /** The key of the digests that stand for event keys in the consumers' logs (`npm run ops -- key` reads it). */
  public readonly logDigestSecret: ISecret;
  /**
   * The key of the receiver's proofs of the bodies it keeps: `ops quarantine requeue` and `ops replay` send
   * back in only bodies whose proof holds. Read by the receiver and the operator, never by a consumer.
   */
  public readonly provenanceSecret: ISecret;
  /** The value the receiver passes as `SecretId`: the created secret's ARN, or the imported secret's name. */
  public readonly webhookSecretId: string;
  /** The secret's name, as users pass it to `aws secretsmanager put-secret-value --secret-id`. */
  public readonly webhookSecretName: string;
  /** The CloudWatch dashboard of the pipeline and its subscribers. */
  public readonly dashboard: Dashboard;
  /** The pipeline's alarms with the first subscriber's. */
  public readonly alarms: WebhookAlarms;
  /** The receiver, front door, claim-table and quarantine alarms. */
  public readonly pipelineAlarms: PipelineAlarms;
  /** Subscriber name → its alarms. */
  public readonly subscriberAlarms: Readonly<Record<string, SubscriberAlarms>>;
  /** The delivery archive (bucket, queue, DLQ, archiver); `undefined` with `archive: false`. */
  public readonly archive: DeliveryArchive | undefined;

  /**
   * @param scope - The construct to build the pipeline in (usually a `Stack`).
   * @param id - The construct id, part of every resource's logical id.
   * @param props - The pipeline's settings; each one's default is documented on `WhatsAppWebhookDedupProps`.
   * @throws UnsafeSettingsError when the props would lose or hide events (the message names what to change).
   */
  constructor(scope: Construct, id: string, props: WhatsAppWebhookDedupProps = {}) {
    super(scope, id);
    const validated = validateProps(props);
    const { archiveRetentionDays } = validated;
    this.settings = validated.settings;
    const logs = {
      logRetention: props.logRetention ?? DEFAULT_LOG_RETENTION,
      logLevel: props.logLevel ?? DEFAULT_LOG_LEVEL,
    };

    this.quarantineQueue = buildQuarantineQueue(this, this.settings);
    const { capacity } = validated;
    for (const warning of capacity.warnings) Annotations.of(this).addWarningV2(warning.id, warning.message);
    this.claimTable = buildClaimTable(this, {
      removalPolicy: props.tableRemovalPolicy,
      deletionProtection: props.tableDeletionProtection,
      warmWriteUnitsPerSecond: capacity.warmWriteUnitsPerSecond,
    });

    this.logDigestSecret = buildLogDigestSecret(this);
    this.provenanceSecret = buildProvenanceSecret(this);
    const secret = buildWebhookSecret(this, props.existingSecretName);
    this.webhookSecret = secret.secret;
    this.webhookSecretId = secret.secretId;
    this.webhookSecretName = secret.secretName;

    this.subscribers = buildSubscribers(this, validated.subscribers, {
      ...logs,
      claimTable: this.claimTable,
      quarantineQueue: this.quarantineQueue,
      logDigestSecret: this.logDigestSecret,
      webhookSecret: this.webhookSecret,
    });
    const first = this.subscribers[0] as WebhookSubscriber;
    this.consumerFunction = first.consumerFunction;
    this.deliveryQueue = first.deliveryQueue;
    this.deadLetterQueue = first.deadLetterQueue;

    this.archive =
      archiveRetentionDays === undefined
        ? undefined
        : buildDeliveryArchive(this, {
            ...logs,
            settings: this.settings,
            retentionDays: archiveRetentionDays,
          });

    this.receiverFunction = buildReceiver(this, {
      ...logs,
      archiveQueue: this.archive?.queue,
      settings: this.settings,
      subscribers: this.subscribers,
      quarantineQueue: this.quarantineQueue,
      secret,
      provenanceSecret: this.provenanceSecret,
      memorySize: props.receiverMemorySize,
      reservedConcurrentExecutions: capacity.receiverReservedConcurrency,
    });

    const roleOf = (fn: NodejsFunction): IRole => fn.role as IRole;
    const receiverRole = roleOf(this.receiverFunction);
    onlyTheseSend(this.quarantineQueue, [
      receiverRole,
      ...this.subscribers.flatMap((subscriber) => [
        roleOf(subscriber.consumerFunction),
        ...(subscriber.messageLane === undefined ? [] : [roleOf(subscriber.messageLane.consumerFunction)]),
      ]),
    ]);
    if (this.archive !== undefined) {
      onlyTheseSend(this.archive.queue, [receiverRole]);
      // The archiver reads every encoding a receiver sends; a receiver updated first could send one an old
      // archiver misreads (docs/decisions.md, the archive copy's record), so CloudFormation updates it last.
      this.receiverFunction.node.addDependency(this.archive.archiverFunction);
    }

    let frontDoor: FrontDoorMetrics;
    if (capacity.endpoint === 'function-url') {
      const door = buildWebhookFunctionUrl(this, this.receiverFunction);
      this.httpApi = undefined;
      this.functionUrl = door.functionUrl;
      this.webhookUrl = door.webhookUrl;
      frontDoor = functionUrlFrontDoor(this.receiverFunction);
    } else {
      const api = buildWebhookApi(this, {
        receiverFunction: this.receiverFunction,
        logRetention: logs.logRetention,
        throttlingRateLimit: capacity.throttlingRateLimit,
        throttlingBurstLimit: capacity.throttlingBurstLimit,
      });
      this.httpApi = api.httpApi;
      this.functionUrl = undefined;
      this.webhookUrl = api.webhookUrl;
      frontDoor = httpApiFrontDoor(api.httpApi);
    }

    const monitoring = new WebhookMonitoring(this, 'Monitoring', {
      frontDoor,
      receiverFunction: this.receiverFunction,
      claimTable: this.claimTable,
      quarantineQueue: this.quarantineQueue,
      subscribers: this.subscribers,
      thresholds: props.alarmThresholds,
      alarmTopic: props.alarmTopic,
      dashboardName: props.dashboardName,
      archive: this.archive,
    });
    this.dashboard = monitoring.dashboard;
    this.pipelineAlarms = monitoring.pipelineAlarms;
    this.subscriberAlarms = monitoring.subscriberAlarms;
    this.alarms = {
      ...this.pipelineAlarms,
      ...(monitoring.subscriberAlarms[first.name] as SubscriberAlarms),
    };
  }

  /**
   * Console URL of the dashboard (commercial partition).
   *
   * @example
   * ```typescript
   * import { App, CfnOutput, Stack } from 'aws-cdk-lib';
   * import { WhatsAppWebhookDedup } from 'whatsapp-webhook-dedup';
   *
   * const stack = new Stack(new App(), 'SupportWebhook');
   * const webhook = new WhatsAppWebhookDedup(stack, 'Webhook');
   * new CfnOutput(stack, 'DashboardUrl', { value: webhook.dashboardUrl });
   * ```
   */
  public get dashboardUrl(): string {
    return `https://console.aws.amazon.com/cloudwatch/home?region=${Aws.REGION}#dashboards/dashboard/${this.dashboard.dashboardName}`;
  }
}
