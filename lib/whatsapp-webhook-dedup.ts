/**
 * `WhatsAppWebhookDedup`: the whole pipeline of docs/design.md §2–§5 as one construct. HTTP API → receiver Lambda
 * (verifies the signature, enqueues) → SQS → consumer Lambda (claims each event in DynamoDB, runs the side
 * effect once) → DLQ for what cannot be processed; plus a dashboard and alarms.
 *
 * The props are checked in one call before anything is built (`validate-props.ts`); each part is then built
 * by its own builder (`builders/`) from the secure defaults of `defaults.ts`.
 */
import { Aws, type RemovalPolicy } from 'aws-cdk-lib';
import type { HttpApi } from 'aws-cdk-lib/aws-apigatewayv2';
import type { Dashboard } from 'aws-cdk-lib/aws-cloudwatch';
import type { TableV2 } from 'aws-cdk-lib/aws-dynamodb';
import type { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import type { ITopic } from 'aws-cdk-lib/aws-sns';
import type { Queue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import type { StatusLedgerMode } from '../contract/environment.ts';
import type { PipelineSettings } from '../contract/settings.ts';
import { buildClaimTable } from './builders/claim-table.ts';
import { buildConsumer } from './builders/consumer.ts';
import { buildQueues } from './builders/queues.ts';
import { buildReceiver } from './builders/receiver.ts';
import { buildWebhookApi } from './builders/webhook-api.ts';
import { buildWebhookSecret } from './builders/webhook-secret.ts';
import { DEFAULT_LOG_LEVEL, DEFAULT_LOG_RETENTION } from './defaults.ts';
import type { WebhookAlarms, WebhookAlarmThresholds } from './monitoring/alarms.ts';
import { WebhookMonitoring } from './monitoring/webhook-monitoring.ts';
import { validateProps } from './validate-props.ts';

export interface WhatsAppWebhookDedupProps {
  /**
   * Days a done claim keeps blocking redeliveries of the same event. Meta retries for up to 7 days; values
   * below 7 are refused.
   * @default 8
   */
  readonly retentionDays?: number;
  /**
   * Margin added to the consumer invocation's remaining time to form the processing lease. Refused when
   * consumerTimeoutSeconds + maxBatchingWindowSeconds + this margin reaches visibilityTimeoutSeconds (a
   * redelivery would meet its own live lease).
   * @default 10000
   */
  readonly leaseMarginMs?: number;
  /**
   * Consumer timeout in seconds: the longest a batch of side effects may run. The visibility timeout and the
   * lease follow from it.
   * @default 30
   */
  readonly consumerTimeoutSeconds?: number;
  /**
   * Receiver timeout in seconds: reading the secret, verifying and enqueueing with SDK retries. At most 29,
   * so the receiver's own 5xx reaches Meta before API Gateway's 30 s integration timeout.
   * @default 10
   */
  readonly receiverTimeoutSeconds?: number;
  /**
   * SQS records per consumer invocation.
   * @default 10
   */
  readonly batchSize?: number;
  /**
   * Seconds the event source may wait to fill a batch.
   * @default 1
   */
  readonly maxBatchingWindowSeconds?: number;
  /**
   * Most concurrent consumer invocations the SQS event source starts (the event source mapping's
   * `ScalingConfig.MaximumConcurrency`, not reserved concurrency, so throttling cannot push records to the
   * DLQ). At least 2.
   * @default 5
   */
  readonly maxConcurrency?: number;
  /**
   * Visibility timeout of the delivery queue in seconds; values below 6 × consumerTimeoutSeconds +
   * maxBatchingWindowSeconds are refused.
   * @default 6 × consumerTimeoutSeconds + maxBatchingWindowSeconds (181)
   */
  readonly visibilityTimeoutSeconds?: number;
  /**
   * Receives before a record moves to the DLQ; values below 5 are refused.
   * @default 5
   */
  readonly maxReceiveCount?: number;
  /**
   * Largest SQS message the receiver writes (set explicitly on both queues); bigger deliveries are split on
   * event boundaries. 1,024 to 1,048,576.
   * @default 262144
   */
  readonly maximumMessageSizeBytes?: number;
  /**
   * Days an unprocessed delivery stays in the delivery queue. Once Meta got its 200 the queue holds the only
   * copy, so values below 7 are refused (SQS maximum: 14).
   * @default 14
   */
  readonly queueRetentionDays?: number;
  /**
   * Days a message stays in the dead-letter queue (SQS maximum: 14).
   * @default 14
   */
  readonly deadLetterRetentionDays?: number;
  /**
   * Prefix of the claim keys (`<ns>#<key>`), so that several consumers can share one table.
   * Letters, digits, `_`, `.`, `-`.
   * @default - no prefix
   */
  readonly keyNamespace?: string;
  /**
   * What happens to the claim table when it leaves the stack.
   * @default RemovalPolicy.RETAIN
   */
  readonly tableRemovalPolicy?: RemovalPolicy;
  /**
   * DynamoDB deletion protection on the claim table.
   * @default true
   */
  readonly tableDeletionProtection?: boolean;
  /**
   * Name of an existing Secrets Manager secret holding `{"appSecrets": [...], "verifyToken": "..."}`.
   * @default - a secret is created with a generated verify token and an empty list of app secrets
   */
  readonly existingSecretName?: string;
  /**
   * Steady-state request rate limit of the webhook routes (requests per second).
   * @default 1000
   */
  readonly throttlingRateLimit?: number;
  /**
   * Burst limit of the webhook routes (requests).
   * @default 2000
   */
  readonly throttlingBurstLimit?: number;
  /**
   * Alarm thresholds.
   * @default - see `WebhookAlarmThresholds`
   */
  readonly alarmThresholds?: WebhookAlarmThresholds;
  /**
   * SNS topic notified when an alarm fires and when it recovers.
   * @default - alarms have no actions
   */
  readonly alarmTopic?: ITopic;
  /**
   * Retention of the functions' and the API's log groups.
   * @default RetentionDays.ONE_MONTH
   */
  readonly logRetention?: RetentionDays;
  /**
   * Application log level of both functions (Powertools `POWERTOOLS_LOG_LEVEL`).
   * @default 'INFO'
   */
  readonly logLevel?: 'DEBUG' | 'INFO' | 'WARN' | 'ERROR';
  /**
   * Receiver memory in MB (CPU grows with it; the receiver hashes and parses bodies of up to 3 MB).
   * @default 512
   */
  readonly receiverMemorySize?: number;
  /**
   * Consumer memory in MB.
   * @default 512
   */
  readonly consumerMemorySize?: number;
  /**
   * Path of the consumer's entry file (exporting `handler`), for users who wire their own side effects.
   * @default - `functions/consumer.ts` of this project
   */
  readonly consumerEntry?: string;
  /**
   * Name of the CloudWatch dashboard.
   * @default - generated by CloudFormation
   */
  readonly dashboardName?: string;
  /**
   * When the consumer records message statuses in the status ledger (docs/design.md §3): `'with-handler'`
   * only when its handlers include `onStatus`; `'always'` for every status, for the ledger view alone (each
   * status then costs a claim, a ledger write and a completion).
   * @default 'with-handler'
   */
  readonly statusLedger?: StatusLedgerMode;
  /**
   * Whether the consumer claims events whose kind has no handler. `true` records each as done with one write,
   * so that its duplicates are still classified and counted (the duplicate rate per field is the early
   * warning of slow acknowledgements); `false` skips them: no write, and no duplicate counts for them.
   * @default true
   */
  readonly claimUnhandledEvents?: boolean;
}

export class WhatsAppWebhookDedup extends Construct {
  /** The resolved, validated pipeline settings. */
  public readonly settings: PipelineSettings;
  public readonly httpApi: HttpApi;
  /** `https://<api-id>.execute-api.<region>.amazonaws.com/webhook`: the callback URL for the Meta app. */
  public readonly webhookUrl: string;
  public readonly receiverFunction: NodejsFunction;
  public readonly consumerFunction: NodejsFunction;
  public readonly deliveryQueue: Queue;
  public readonly deadLetterQueue: Queue;
  public readonly claimTable: TableV2;
  public readonly webhookSecret: ISecret;
  /** The value the receiver passes as `SecretId`: the created secret's ARN, or the imported secret's name. */
  public readonly webhookSecretId: string;
  /** The secret's name, as users pass it to `aws secretsmanager put-secret-value --secret-id`. */
  public readonly webhookSecretName: string;
  public readonly dashboard: Dashboard;
  public readonly alarms: WebhookAlarms;

  constructor(scope: Construct, id: string, props: WhatsAppWebhookDedupProps = {}) {
    super(scope, id);
    this.settings = validateProps(props);
    const logs = {
      logRetention: props.logRetention ?? DEFAULT_LOG_RETENTION,
      logLevel: props.logLevel ?? DEFAULT_LOG_LEVEL,
    };

    const queues = buildQueues(this, this.settings);
    this.deliveryQueue = queues.deliveryQueue;
    this.deadLetterQueue = queues.deadLetterQueue;

    this.claimTable = buildClaimTable(this, {
      removalPolicy: props.tableRemovalPolicy,
      deletionProtection: props.tableDeletionProtection,
    });

    const secret = buildWebhookSecret(this, props.existingSecretName);
    this.webhookSecret = secret.secret;
    this.webhookSecretId = secret.secretId;
    this.webhookSecretName = secret.secretName;

    this.receiverFunction = buildReceiver(this, {
      ...logs,
      settings: this.settings,
      queues,
      secret,
      memorySize: props.receiverMemorySize,
    });

    this.consumerFunction = buildConsumer(this, {
      ...logs,
      settings: this.settings,
      queues,
      claimTable: this.claimTable,
      entry: props.consumerEntry,
      memorySize: props.consumerMemorySize,
      keyNamespace: props.keyNamespace,
      statusLedger: props.statusLedger,
      claimUnhandledEvents: props.claimUnhandledEvents,
    });

    const api = buildWebhookApi(this, {
      receiverFunction: this.receiverFunction,
      logRetention: logs.logRetention,
      throttlingRateLimit: props.throttlingRateLimit,
      throttlingBurstLimit: props.throttlingBurstLimit,
    });
    this.httpApi = api.httpApi;
    this.webhookUrl = api.webhookUrl;

    const monitoring = new WebhookMonitoring(this, 'Monitoring', {
      httpApi: this.httpApi,
      receiverFunction: this.receiverFunction,
      consumerFunction: this.consumerFunction,
      deliveryQueue: this.deliveryQueue,
      deadLetterQueue: this.deadLetterQueue,
      claimTable: this.claimTable,
      thresholds: props.alarmThresholds,
      alarmTopic: props.alarmTopic,
      dashboardName: props.dashboardName,
    });
    this.dashboard = monitoring.dashboard;
    this.alarms = monitoring.alarms;
  }

  /** Console URL of the dashboard (commercial partition). */
  public get dashboardUrl(): string {
    return `https://console.aws.amazon.com/cloudwatch/home?region=${Aws.REGION}#dashboards/dashboard/${this.dashboard.dashboardName}`;
  }
}
