import { defaultPipeline } from '../../cli/capacity/pipeline.ts';
import { capacityReport, reportMarkdown } from '../../cli/capacity/report.ts';
import { markdownTable } from '../../cli/tools/markdown-table.ts';
import {
  ACTIVE_CONVERSATION_SECONDS,
  API_GATEWAY_ACCOUNT_RPS,
  BURST_SECONDS_OF_PEAK,
  DYNAMODB_NEW_TABLE_WARM_WRITE_UNITS,
  DYNAMODB_PARTITION_WRITE_UNITS,
  DYNAMODB_TABLE_WRITE_UNITS_QUOTA,
  EVENT_SOURCE_CONCURRENCY_ADDED_PER_MINUTE,
  EVENT_SOURCE_INITIAL_CONCURRENCY,
  EVENT_SOURCE_MAX_CONCURRENCY,
  type ExpectedPeak,
  LAMBDA_ACCOUNT_CONCURRENCY,
  LAMBDA_MIN_UNRESERVED_CONCURRENCY,
  LAMBDA_REQUESTS_PER_SECOND_PER_CONCURRENCY,
  META_DEFAULT_MESSAGES_PER_SECOND,
  META_UPGRADED_MESSAGES_PER_SECOND,
  P99_WAIT_TARGET_SECONDS,
  POSTS_PER_INBOUND_MESSAGE,
  POSTS_PER_OUTBOUND_MESSAGE,
  RECEIVER_BLOCKING_TARGET,
} from '../../contract/capacity.ts';
import { simulationMarkdown } from '../capacity-simulation/simulation-markdown.ts';

export const CAPACITY_PAGE = 'docs/capacity.md';

/**
 * The three shapes of docs/capacity.md, "The defaults against three shapes": a number at Meta's default tier,
 * one at its top tier, ten at the top tier.
 */
export const CAPACITY_SHAPES: Readonly<Record<string, ExpectedPeak>> = {
  'capacity-default-tier': { messagesPerSecond: META_DEFAULT_MESSAGES_PER_SECOND },
  'capacity-top-tier': { messagesPerSecond: META_UPGRADED_MESSAGES_PER_SECOND },
  'capacity-ten-numbers': { messagesPerSecond: META_UPGRADED_MESSAGES_PER_SECOND, numbers: 10 },
};

/** The top tier again behind the other front door (docs/capacity.md, "Behind a function URL"). */
export const FUNCTION_URL_SHAPES: Readonly<Record<string, ExpectedPeak>> = {
  'capacity-top-tier-function-url': { messagesPerSecond: META_UPGRADED_MESSAGES_PER_SECOND },
};

const n = (value: number) => value.toLocaleString('en-US');

export function limitsMarkdown(): string {
  const rows: [string, string, string][] = [
    [
      'Messages per business phone number',
      `${n(META_DEFAULT_MESSAGES_PER_SECOND)}/s by default, ${n(META_UPGRADED_MESSAGES_PER_SECOND)}/s after the automatic upgrade`,
      'https://developers.facebook.com/docs/whatsapp/cloud-api/overview#throughput',
    ],
    [
      'Webhook POSTs per message (as BSPs quote Meta)',
      `${POSTS_PER_OUTBOUND_MESSAGE} per outbound (sent, delivered, read), ${POSTS_PER_INBOUND_MESSAGE} per inbound; one update per POST`,
      'https://developers.facebook.com/docs/whatsapp/cloud-api/guides/set-up-webhooks',
    ],
    [
      'API Gateway, per account and Region',
      `${n(API_GATEWAY_ACCOUNT_RPS)} requests/s`,
      'https://docs.aws.amazon.com/apigateway/latest/developerguide/limits.html',
    ],
    [
      'Lambda concurrency, per account and Region',
      `${n(LAMBDA_ACCOUNT_CONCURRENCY)} executions`,
      'https://docs.aws.amazon.com/lambda/latest/dg/gettingstarted-limits.html',
    ],
    [
      'Lambda reserved concurrency, per account and Region',
      `all but ${n(LAMBDA_MIN_UNRESERVED_CONCURRENCY)} executions, which stay unreserved`,
      'https://docs.aws.amazon.com/lambda/latest/dg/configuration-concurrency.html',
    ],
    [
      'Lambda function URL, per function',
      `${n(LAMBDA_REQUESTS_PER_SECOND_PER_CONCURRENCY)} requests/s per unit of reserved concurrency, and no more requests at once than it; beyond either, 429`,
      'https://docs.aws.amazon.com/lambda/latest/dg/urls-configuration.html',
    ],
    [
      'SQS event source scaling',
      `starts at ${EVENT_SOURCE_INITIAL_CONCURRENCY} concurrent batches, adds up to ${EVENT_SOURCE_CONCURRENCY_ADDED_PER_MINUTE} per minute; \`maxConcurrency\` at most ${n(EVENT_SOURCE_MAX_CONCURRENCY)}`,
      'https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-scaling.html',
    ],
    [
      'DynamoDB on-demand, a new table',
      `${n(DYNAMODB_NEW_TABLE_WARM_WRITE_UNITS)} write units/s warm; may throttle above twice the previous peak within 30 minutes`,
      'https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/on-demand-capacity-mode.html',
    ],
    [
      'DynamoDB on-demand, per table',
      `${n(DYNAMODB_TABLE_WRITE_UNITS_QUOTA)} write units/s (default quota)`,
      'https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/ServiceQuotas.html',
    ],
    [
      'DynamoDB, per partition',
      `${n(DYNAMODB_PARTITION_WRITE_UNITS)} write units/s`,
      'https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/bp-partition-key-design.html',
    ],
  ];
  return [
    markdownTable(['limit', 'value', 'source'], rows),
    '',
    `The planner's own rules: the route's burst holds ${BURST_SECONDS_OF_PEAK} s of the peak; a conversation is active for ${ACTIVE_CONVERSATION_SECONDS} s after its customer wrote; a lane carries its peak when its p99 wait stays within ${P99_WAIT_TARGET_SECONDS.message} s (message lane) or ${P99_WAIT_TARGET_SECONDS.status} s (status lane); a function URL's reservation keeps Lambda's request rate a fifth spare and turns away at most ${RECEIVER_BLOCKING_TARGET * 100} % of the POSTs (Erlang B).`,
  ].join('\n');
}

/** Region name → content, for docs/capacity.md. */
export function capacityRegions(): Record<string, Record<string, string>> {
  const regions: Record<string, string> = {
    'capacity-limits': limitsMarkdown(),
    'capacity-simulation': simulationMarkdown(),
  };
  for (const [name, peak] of Object.entries(CAPACITY_SHAPES)) {
    regions[name] = reportMarkdown(capacityReport(peak, defaultPipeline()));
  }
  for (const [name, peak] of Object.entries(FUNCTION_URL_SHAPES)) {
    regions[name] = reportMarkdown(capacityReport(peak, defaultPipeline(1, 'function-url')));
  }
  return { [CAPACITY_PAGE]: regions };
}
