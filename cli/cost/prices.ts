/**
 * AWS list prices, US East (N. Virginia), without free tiers or Savings Plans: the one place they are written.
 * docs/cost.md's tables and the benchmark's dollars per million events are both computed from them
 * (`npm run docs` regenerates the page; a unit test fails when it is stale).
 */

export const PRICES_COLLECTED_ON = '2026-11-30';
/** SNS was added for the fan-out comparison (docs/decisions.md), a day later than the others. */
export const SNS_PRICES_COLLECTED_ON = '2026-12-01';
/** S3 was added for the delivery archive (docs/cost.md, "The delivery archive"). */
export const S3_PRICES_COLLECTED_ON = '2026-12-02';
/** Data transfer out was added for forwarding (docs/cost.md, "Forwarding"). */
export const DATA_TRANSFER_PRICES_COLLECTED_ON = '2026-12-03';
export const PRICE_REGION = 'US East (N. Virginia), us-east-1';

export const PRICES = {
  apiGateway: {
    /** HTTP API, per request, first 300 million a month; a request is metered per 512 KB of body. */
    perRequest: 1.0 / 1e6,
    meteredKiB: 512,
  },
  lambda: {
    /** arm64 (the construct's architecture). */
    perRequest: 0.2 / 1e6,
    /** First 7.5 billion GB-s a month. */
    perGbSecond: 0.0000133334,
  },
  sqs: {
    /** Standard queue, first 100 billion requests a month; every 64 KB of a message is one request. */
    perRequest: 0.4 / 1e6,
    /** FIFO queue (the ordered message lane), first 100 billion requests a month (aws.amazon.com/sqs/pricing). */
    fifoPerRequest: 0.5 / 1e6,
    meteredKiB: 64,
  },
  sns: {
    /** Standard topic, per publish request (first million a month free); every 64 KB of a payload is one request. */
    perPublishRequest: 0.5 / 1e6,
    meteredKiB: 64,
    /** Deliveries to SQS queues carry no SNS charge (HTTP/S deliveries cost $0.60 per million). */
    perSqsDelivery: 0,
  },
  dynamoDb: {
    /** On-demand; 1 WRU writes up to 1 KB (halved on 1 November 2024 from $1.25 per million). */
    perWriteRequestUnit: 0.625 / 1e6,
    /** On-demand; 1 RRU reads up to 4 KB strongly consistent, or two eventually consistent reads. */
    perReadRequestUnit: 0.125 / 1e6,
    /** Standard table class, per GB-month; point-in-time recovery per GB-month on top. */
    storagePerGbMonth: 0.25,
    pitrPerGbMonth: 0.2,
  },
  cloudWatch: {
    /** Logs ingested (standard class; Lambda logs share the first tier since May 2025), per GB. */
    logsPerGbIngested: 0.5,
    logsPerGbMonthStored: 0.03,
    /** First 10,000 custom metrics. */
    perCustomMetricMonth: 0.3,
    perDashboardMonth: 3.0,
    perAlarmMetricMonth: 0.1,
  },
  secretsManager: {
    perSecretMonth: 0.4,
    per10kApiCalls: 0.05,
  },
  s3: {
    /** S3 Standard, PUT, COPY, POST and LIST requests: $0.005 per 1,000. */
    perPutRequest: 0.005 / 1000,
    /** S3 Standard, GET and other reads: $0.0004 per 1,000. */
    perGetRequest: 0.0004 / 1000,
    /** S3 Standard storage, first 50 TB a month, per GB-month. */
    storagePerGbMonth: 0.023,
  },
  dataTransfer: {
    /**
     * Out of AWS to the internet (what a forwarding consumer's POSTs send), per GB, after the first 100 GB a
     * month that AWS gives each account, up to 10 TB a month; answers coming in are free.
     */
    outToInternetPerGb: 0.09,
  },
} as const;

/** Where each price is published, for the table in docs/cost.md. */
export const PRICE_SOURCES = {
  apiGateway: 'aws.amazon.com/api-gateway/pricing',
  lambda: 'aws.amazon.com/lambda/pricing',
  sqs: 'aws.amazon.com/sqs/pricing',
  sns: 'aws.amazon.com/sns/pricing',
  dynamoDb: 'aws.amazon.com/dynamodb/pricing/on-demand',
  cloudWatch: 'aws.amazon.com/cloudwatch/pricing',
  secretsManager: 'aws.amazon.com/secrets-manager/pricing',
  s3: 'aws.amazon.com/s3/pricing',
  dataTransfer: 'aws.amazon.com/ec2/pricing/on-demand (Data Transfer)',
} as const;

/** What AWS gives away each month, for the note under the fixed costs. */
export const FREE_TIERS = {
  lambdaRequests: 1_000_000,
  lambdaGbSeconds: 400_000,
  sqsRequests: 1_000_000,
  /** For the first 12 months of an account. */
  apiGatewayRequests: 1_000_000,
  alarmMetrics: 10,
  customMetrics: 10,
  dashboards: 3,
} as const;
