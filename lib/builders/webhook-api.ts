import { Validations } from 'aws-cdk-lib';
import { AccessLogFormat } from 'aws-cdk-lib/aws-apigateway';
import { HttpApi, HttpMethod, HttpStage, LogGroupLogDestination } from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import {
  DEFAULT_THROTTLING_BURST_LIMIT,
  DEFAULT_THROTTLING_RATE_LIMIT,
  HTTP_API_ACCESS_LOG_FIELDS,
} from '../defaults.ts';

export interface WebhookApiOptions {
  readonly receiverFunction: IFunction;
  readonly logRetention: RetentionDays;
  /** @default DEFAULT_THROTTLING_RATE_LIMIT */
  readonly throttlingRateLimit?: number;
  /** @default DEFAULT_THROTTLING_BURST_LIMIT */
  readonly throttlingBurstLimit?: number;
}

export interface WebhookApi {
  readonly httpApi: HttpApi;
  /** `https://<api-id>.execute-api.<region>.amazonaws.com/webhook`: the callback URL for the Meta app. */
  readonly webhookUrl: string;
}

/** The HTTP API Meta calls: `GET` and `POST /webhook` to the receiver, throttled, with an access log. */
export function buildWebhookApi(scope: Construct, options: WebhookApiOptions): WebhookApi {
  const httpApi = new HttpApi(scope, 'HttpApi', {
    description: 'WhatsApp Cloud API webhook',
    createDefaultStage: false,
  });
  const accessLogGroup = new LogGroup(scope, 'ApiAccessLogGroup', { retention: options.logRetention });
  const stage = new HttpStage(scope, 'DefaultStage', {
    httpApi,
    stageName: '$default',
    autoDeploy: true,
    throttle: {
      rateLimit: options.throttlingRateLimit ?? DEFAULT_THROTTLING_RATE_LIMIT,
      burstLimit: options.throttlingBurstLimit ?? DEFAULT_THROTTLING_BURST_LIMIT,
    },
    accessLogSettings: {
      destination: new LogGroupLogDestination(accessLogGroup),
      format: AccessLogFormat.custom(JSON.stringify(HTTP_API_ACCESS_LOG_FIELDS)),
    },
  });
  httpApi.addRoutes({
    path: '/webhook',
    methods: [HttpMethod.GET, HttpMethod.POST],
    integration: new HttpLambdaIntegration('ReceiverIntegration', options.receiverFunction),
  });
  Validations.of(httpApi).acknowledge({
    id: 'AwsSolutions-APIG4',
    reason:
      'Meta calls the webhook without AWS credentials. The receiver authenticates every POST by the X-Hub-Signature-256 HMAC of the raw body (which an API Gateway authorizer cannot see) and the GET handshake by the verify token; unsigned requests get 401 and enqueue nothing.',
  });
  return { httpApi, webhookUrl: `${stage.url}webhook` };
}
