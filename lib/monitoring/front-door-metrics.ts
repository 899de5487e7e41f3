/**
 * What the alarms and the dashboard read of the webhook's front door (docs/design.md §4), whichever it is: its
 * requests, its 4xx and 5xx answers and its latency, from API Gateway's metrics for an HTTP API or from Lambda's
 * function URL metrics (`UrlRequestCount`, `Url4xxCount`, `Url5xxCount`, `UrlRequestLatency`,
 * https://docs.aws.amazon.com/lambda/latest/dg/urls-monitoring.html) for the receiver's URL; and what an
 * operator does when the receiver is throttled, which differs by door.
 */
import type { IHttpApi } from 'aws-cdk-lib/aws-apigatewayv2';
import { type IMetric, Metric, type MetricOptions } from 'aws-cdk-lib/aws-cloudwatch';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import type { WebhookEndpoint } from '../../contract/capacity.ts';

export interface FrontDoorMetrics {
  readonly endpoint: WebhookEndpoint;
  /** In dashboard titles: `HTTP API`, `Function URL`. */
  readonly name: string;
  /** Who answers in front of the receiver, in titles and alarm texts: `API Gateway`, `Lambda`. */
  readonly answeredBy: string;
  /** What the receiver's throttles mean and what to raise (the ReceiverThrottles alarm's advice). */
  readonly throttleAdvice: string;
  requests(options: MetricOptions): IMetric;
  clientErrors(options: MetricOptions): IMetric;
  serverErrors(options: MetricOptions): IMetric;
  latency(options: MetricOptions): IMetric;
}

export function httpApiFrontDoor(httpApi: IHttpApi): FrontDoorMetrics {
  return {
    endpoint: 'http-api',
    name: 'HTTP API',
    answeredBy: 'API Gateway',
    throttleAdvice:
      'The receiver was throttled: deliveries were refused and Meta will retry them late. Check the account concurrency.',
    requests: (options) => httpApi.metricCount(options),
    clientErrors: (options) => httpApi.metricClientError(options),
    serverErrors: (options) => httpApi.metricServerError(options),
    latency: (options) => httpApi.metricLatency(options),
  };
}

/** The URL metrics of the receiver's function URL: Lambda publishes them per function (`FunctionName`). */
export function functionUrlFrontDoor(receiver: IFunction): FrontDoorMetrics {
  const url = (metricName: string, options: MetricOptions) =>
    new Metric({
      namespace: 'AWS/Lambda',
      metricName,
      dimensionsMap: { FunctionName: receiver.functionName },
      ...options,
    });
  return {
    endpoint: 'function-url',
    name: 'Function URL',
    answeredBy: 'Lambda',
    throttleAdvice:
      "The receiver's reserved concurrency, the function URL's throttle, was full: Lambda answered 429 and Meta will retry those deliveries late. Raise receiverReservedConcurrency (npm run capacity -- --endpoint function-url sizes it) within the account's concurrency.",
    requests: (options) => url('UrlRequestCount', options),
    clientErrors: (options) => url('Url4xxCount', options),
    serverErrors: (options) => url('Url5xxCount', options),
    latency: (options) => url('UrlRequestLatency', options),
  };
}
