/**
 * `WhatsAppWebhookDedup`: the whole pipeline of docs/design.md §2–§5 as one construct. HTTP API → receiver Lambda
 * (verifies the signature, enqueues) → SQS → consumer Lambda (claims each event in DynamoDB, runs the side
 * effect once) → DLQ for what cannot be processed; plus a dashboard and alarms.
 */
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Aws, Duration, type RemovalPolicy, Stack, Token, Validations } from 'aws-cdk-lib';
import { AccessLogFormat } from 'aws-cdk-lib/aws-apigateway';
import { HttpApi, HttpMethod, HttpStage, LogGroupLogDestination } from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import type { Dashboard } from 'aws-cdk-lib/aws-cloudwatch';
import { AttributeType, TableV2 } from 'aws-cdk-lib/aws-dynamodb';
import { Effect, PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import { type ISecret, Secret } from 'aws-cdk-lib/aws-secretsmanager';
import type { ITopic } from 'aws-cdk-lib/aws-sns';
import { Queue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { CLAIM_TABLE_SCHEMA } from '../contract/claim-table-schema.ts';
import { consumerEnvironment, receiverEnvironment } from '../contract/environment.ts';
import { type PipelineSettings, resolveSettings, UnsafeSettingsError } from '../contract/settings.ts';
import {
  BUNDLING,
  CLAIM_TABLE_DEFAULTS,
  DEFAULT_CONSUMER_MEMORY_MB,
  DEFAULT_LOG_LEVEL,
  DEFAULT_LOG_RETENTION,
  DEFAULT_RECEIVER_MEMORY_MB,
  DEFAULT_THROTTLING_BURST_LIMIT,
  DEFAULT_THROTTLING_RATE_LIMIT,
  LAMBDA_ARCHITECTURE,
  LAMBDA_LOGGING,
  LAMBDA_RUNTIME,
  NODE_OPTIONS,
  QUEUE_DEFAULTS,
} from './defaults.ts';
import { resolveThresholds, type WebhookAlarms, type WebhookAlarmThresholds } from './monitoring/alarms.ts';
import { WebhookMonitoring } from './monitoring/dashboard.ts';

const PROJECT_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/**
 * API Gateway HTTP APIs stop waiting for an integration after 30 s; the receiver must answer (even a 5xx that
 * makes Meta retry) before that, or API Gateway answers 503 while the receiver may still enqueue.
 */
const HTTP_API_INTEGRATION_TIMEOUT_SECONDS = 30;

/** Namespace characters: it prefixes claim keys as `<ns>#<key>`, so `#` and `:` would make keys ambiguous. */
const KEY_NAMESPACE_PATTERN = /^[A-Za-z0-9_.-]{1,64}$/;

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
    this.settings = resolveSettings({
      retentionDays: props.retentionDays,
      leaseMarginMs: props.leaseMarginMs,
      consumerTimeoutSeconds: props.consumerTimeoutSeconds,
      receiverTimeoutSeconds: props.receiverTimeoutSeconds,
      batchSize: props.batchSize,
      maxBatchingWindowSeconds: props.maxBatchingWindowSeconds,
      maxConcurrency: props.maxConcurrency,
      visibilityTimeoutSeconds: props.visibilityTimeoutSeconds,
      maxReceiveCount: props.maxReceiveCount,
      maximumMessageSizeBytes: props.maximumMessageSizeBytes,
      queueRetentionDays: props.queueRetentionDays,
      deadLetterRetentionDays: props.deadLetterRetentionDays,
    });
    validateInfrastructureProps(this.settings, props);
    const s = this.settings;
    const logRetention = props.logRetention ?? DEFAULT_LOG_RETENTION;
    const logLevel = props.logLevel ?? DEFAULT_LOG_LEVEL;

    this.deadLetterQueue = new Queue(this, 'DeadLetterQueue', {
      ...QUEUE_DEFAULTS,
      retentionPeriod: Duration.days(s.deadLetterRetentionDays),
      // Redrive moves whole messages here, and quarantined bodies are written here directly.
      maxMessageSizeBytes: s.maximumMessageSizeBytes,
    });
    this.deliveryQueue = new Queue(this, 'DeliveryQueue', {
      ...QUEUE_DEFAULTS,
      retentionPeriod: Duration.days(s.queueRetentionDays),
      visibilityTimeout: Duration.seconds(s.visibilityTimeoutSeconds),
      maxMessageSizeBytes: s.maximumMessageSizeBytes,
      deadLetterQueue: { queue: this.deadLetterQueue, maxReceiveCount: s.maxReceiveCount },
    });

    this.claimTable = new TableV2(this, 'ClaimTable', {
      ...CLAIM_TABLE_DEFAULTS,
      partitionKey: { name: CLAIM_TABLE_SCHEMA.partitionKey, type: AttributeType.STRING },
      timeToLiveAttribute: CLAIM_TABLE_SCHEMA.timeToLiveAttribute,
      deletionProtection: props.tableDeletionProtection ?? CLAIM_TABLE_DEFAULTS.deletionProtection,
      removalPolicy: props.tableRemovalPolicy ?? CLAIM_TABLE_DEFAULTS.removalPolicy,
    });

    if (props.existingSecretName !== undefined) {
      this.webhookSecret = Secret.fromSecretNameV2(this, 'WebhookSecret', props.existingSecretName);
      // A secret imported by name has a partial ARN (no random suffix), so the receiver asks for it by name.
      this.webhookSecretId = props.existingSecretName;
      this.webhookSecretName = props.existingSecretName;
    } else {
      this.webhookSecretName = defaultSecretName(this);
      this.webhookSecret = new Secret(this, 'WebhookSecret', {
        secretName: this.webhookSecretName,
        description:
          'WhatsApp webhook: {"appSecrets": ["<Meta app secret>", ...], "verifyToken": "<token typed in the Meta app>"}',
        generateSecretString: {
          secretStringTemplate: JSON.stringify({ appSecrets: [] }),
          generateStringKey: 'verifyToken',
          excludePunctuation: true,
          passwordLength: 32,
        },
      });
      this.webhookSecretId = this.webhookSecret.secretArn;
      Validations.of(this.webhookSecret).acknowledge({
        id: 'AwsSolutions-SMG4',
        reason:
          'The secret holds Meta app secrets and a verify token, which are issued and rotated in the Meta app dashboard, not by an AWS rotation function; the receiver accepts several app secrets at once so rotation is a manual two-step update (docs/deploy.md).',
      });
    }

    const receiverLogGroup = new LogGroup(this, 'ReceiverLogGroup', { retention: logRetention });
    const receiverRole = lambdaRole(this, 'ReceiverRole', receiverLogGroup);
    this.receiverFunction = new NodejsFunction(this, 'Receiver', {
      description: 'WhatsApp webhook receiver: verifies the signature, enqueues the delivery, answers Meta.',
      entry: path.join(PROJECT_ROOT, 'functions', 'receiver.ts'),
      handler: 'handler',
      projectRoot: PROJECT_ROOT,
      depsLockFilePath: path.join(PROJECT_ROOT, 'package-lock.json'),
      runtime: LAMBDA_RUNTIME,
      architecture: LAMBDA_ARCHITECTURE,
      memorySize: props.receiverMemorySize ?? DEFAULT_RECEIVER_MEMORY_MB,
      timeout: Duration.seconds(s.receiverTimeoutSeconds),
      role: receiverRole,
      logGroup: receiverLogGroup,
      ...LAMBDA_LOGGING,
      bundling: BUNDLING,
      environment: {
        NODE_OPTIONS,
        ...receiverEnvironment({
          logLevel,
          deliveryQueueUrl: this.deliveryQueue.queueUrl,
          deadLetterQueueUrl: this.deadLetterQueue.queueUrl,
          maximumMessageSizeBytes: s.maximumMessageSizeBytes,
          webhookSecrets: { secretId: this.webhookSecretId },
        }),
      },
    });
    // Explicit grants: SendMessage only (SendMessageBatch is authorised by the same action), no reads.
    receiverRole.addToPrincipalPolicy(
      new PolicyStatement({
        sid: 'EnqueueDeliveriesAndQuarantine',
        effect: Effect.ALLOW,
        actions: ['sqs:SendMessage'],
        resources: [this.deliveryQueue.queueArn, this.deadLetterQueue.queueArn],
      }),
    );
    receiverRole.addToPrincipalPolicy(
      new PolicyStatement({
        sid: 'ReadWebhookSecret',
        effect: Effect.ALLOW,
        actions: ['secretsmanager:GetSecretValue'],
        // A secret imported by name has no full ARN; its real ARN ends in a random `-XXXXXX` suffix.
        resources: [this.webhookSecret.secretFullArn ?? `${this.webhookSecret.secretArn}-??????`],
      }),
    );

    const consumerLogGroup = new LogGroup(this, 'ConsumerLogGroup', { retention: logRetention });
    const consumerRole = lambdaRole(this, 'ConsumerRole', consumerLogGroup);
    this.consumerFunction = new NodejsFunction(this, 'Consumer', {
      description: 'WhatsApp webhook consumer: claims each event once in DynamoDB and runs its side effect.',
      entry: props.consumerEntry ?? path.join(PROJECT_ROOT, 'functions', 'consumer.ts'),
      handler: 'handler',
      projectRoot: PROJECT_ROOT,
      depsLockFilePath: path.join(PROJECT_ROOT, 'package-lock.json'),
      runtime: LAMBDA_RUNTIME,
      architecture: LAMBDA_ARCHITECTURE,
      memorySize: props.consumerMemorySize ?? DEFAULT_CONSUMER_MEMORY_MB,
      timeout: Duration.seconds(s.consumerTimeoutSeconds),
      role: consumerRole,
      logGroup: consumerLogGroup,
      ...LAMBDA_LOGGING,
      bundling: BUNDLING,
      environment: {
        NODE_OPTIONS,
        ...consumerEnvironment({
          logLevel,
          tableName: this.claimTable.tableName,
          keyNamespace: props.keyNamespace,
          deadLetterQueueUrl: this.deadLetterQueue.queueUrl,
          deliveryQueueUrl: this.deliveryQueue.queueUrl,
          retentionDays: s.retentionDays,
          leaseMarginMs: s.leaseMarginMs,
          maximumMessageSizeBytes: s.maximumMessageSizeBytes,
        }),
      },
    });
    // Claim (conditional Put), complete (conditional Update), release (conditional Delete), and the status
    // ledger's Update; a failed condition returns the old item, so no read permission is needed.
    consumerRole.addToPrincipalPolicy(
      new PolicyStatement({
        sid: 'ClaimAndLedgerWrites',
        effect: Effect.ALLOW,
        actions: ['dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem'],
        resources: [this.claimTable.tableArn],
      }),
    );
    consumerRole.addToPrincipalPolicy(
      new PolicyStatement({
        sid: 'QuarantineRecords',
        effect: Effect.ALLOW,
        actions: ['sqs:SendMessage'],
        resources: [this.deadLetterQueue.queueArn],
      }),
    );
    // The event source mapping grants itself Receive/Delete/ChangeMessageVisibility/GetQueueAttributes on the
    // delivery queue (Queue.grantConsumeMessages), scoped to that queue.
    this.consumerFunction.addEventSource(
      new SqsEventSource(this.deliveryQueue, {
        batchSize: s.batchSize,
        maxBatchingWindow: Duration.seconds(s.maxBatchingWindowSeconds),
        maxConcurrency: s.maxConcurrency,
        reportBatchItemFailures: true,
      }),
    );

    this.httpApi = new HttpApi(this, 'HttpApi', {
      description: 'WhatsApp Cloud API webhook',
      createDefaultStage: false,
    });
    const accessLogGroup = new LogGroup(this, 'ApiAccessLogGroup', { retention: logRetention });
    const stage = new HttpStage(this, 'DefaultStage', {
      httpApi: this.httpApi,
      stageName: '$default',
      autoDeploy: true,
      throttle: {
        rateLimit: props.throttlingRateLimit ?? DEFAULT_THROTTLING_RATE_LIMIT,
        burstLimit: props.throttlingBurstLimit ?? DEFAULT_THROTTLING_BURST_LIMIT,
      },
      accessLogSettings: {
        destination: new LogGroupLogDestination(accessLogGroup),
        // `$context.path` and `routeKey` exclude the query string, which carries hub.verify_token on GET.
        format: AccessLogFormat.custom(
          JSON.stringify({
            requestId: '$context.requestId',
            requestTime: '$context.requestTimeEpoch',
            sourceIp: '$context.identity.sourceIp',
            routeKey: '$context.routeKey',
            status: '$context.status',
            responseLength: '$context.responseLength',
            latencyMs: '$context.responseLatency',
            integrationLatencyMs: '$context.integrationLatency',
            integrationError: '$context.integrationErrorMessage',
          }),
        ),
      },
    });
    this.httpApi.addRoutes({
      path: '/webhook',
      methods: [HttpMethod.GET, HttpMethod.POST],
      integration: new HttpLambdaIntegration('ReceiverIntegration', this.receiverFunction),
    });
    this.webhookUrl = `${stage.url}webhook`;
    Validations.of(this.httpApi).acknowledge({
      id: 'AwsSolutions-APIG4',
      reason:
        'Meta calls the webhook without AWS credentials. The receiver authenticates every POST by the X-Hub-Signature-256 HMAC of the raw body (which an API Gateway authorizer cannot see) and the GET handshake by the verify token; unsigned requests get 401 and enqueue nothing.',
    });

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

/** An execution role that may write to its own log group and nothing else until grants are added. */
function lambdaRole(scope: Construct, id: string, logGroup: LogGroup): Role {
  const role = new Role(scope, id, { assumedBy: new ServicePrincipal('lambda.amazonaws.com') });
  role.addToPrincipalPolicy(
    new PolicyStatement({
      sid: 'WriteOwnLogs',
      effect: Effect.ALLOW,
      actions: ['logs:CreateLogStream', 'logs:PutLogEvents'],
      resources: [logGroup.logGroupArn],
    }),
  );
  return role;
}

/**
 * `<stack name>/<construct path below the stack>`, e.g. `WhatsAppWebhookDedup/Webhook`: readable, stable across
 * deploys, and unique per stack and construct. Characters Secrets Manager refuses become `-`.
 */
function defaultSecretName(construct: Construct): string {
  const stack = Stack.of(construct);
  const relativePath = construct.node.path.slice(stack.node.path.length + 1);
  return `${stack.stackName}/${relativePath}`.replace(/[^A-Za-z0-9/_+=.@-]/g, '-');
}

/** Checks that only matter in AWS (the local stack has no API Gateway or throttling). */
function validateInfrastructureProps(s: PipelineSettings, props: WhatsAppWebhookDedupProps): void {
  if (s.receiverTimeoutSeconds >= HTTP_API_INTEGRATION_TIMEOUT_SECONDS) {
    throw new UnsafeSettingsError(
      `receiverTimeoutSeconds is ${s.receiverTimeoutSeconds}, but API Gateway gives up after ${HTTP_API_INTEGRATION_TIMEOUT_SECONDS} s and answers 503 while the receiver may still enqueue: use at most ${HTTP_API_INTEGRATION_TIMEOUT_SECONDS - 1}.`,
    );
  }
  if (s.deadLetterRetentionDays < s.queueRetentionDays) {
    throw new UnsafeSettingsError(
      `deadLetterRetentionDays (${s.deadLetterRetentionDays}) is shorter than queueRetentionDays (${s.queueRetentionDays}): SQS keeps a redriven message's original enqueue time, so it could expire in the DLQ before anyone sees it.`,
    );
  }
  if (props.keyNamespace !== undefined && !KEY_NAMESPACE_PATTERN.test(props.keyNamespace)) {
    throw new UnsafeSettingsError(
      `keyNamespace "${props.keyNamespace}" must be 1 to 64 letters, digits, "_", "." or "-": it prefixes claim keys as <ns>#<key>.`,
    );
  }
  const rate = props.throttlingRateLimit;
  const burst = props.throttlingBurstLimit;
  if (
    (rate !== undefined && !(rate > 0)) ||
    (burst !== undefined && !(burst > 0 && Number.isInteger(burst)))
  ) {
    throw new UnsafeSettingsError(
      'throttlingRateLimit must be > 0 and throttlingBurstLimit a positive integer: 0 would reject every webhook.',
    );
  }
  // Alarm thresholds are checked here too, so that a bad value fails before anything is bundled.
  resolveThresholds(props.alarmThresholds);
  if (props.existingSecretName !== undefined && !Token.isUnresolved(props.existingSecretName)) {
    if (props.existingSecretName.trim() === '') {
      throw new UnsafeSettingsError('existingSecretName is empty: omit it to create a secret.');
    }
  }
}
