import { FunctionUrl, type IFunction } from 'aws-cdk-lib/aws-lambda';
import type { Construct } from 'constructs';
import { FUNCTION_URL_DEFAULTS } from '../defaults.ts';

export interface WebhookFunctionUrl {
  readonly functionUrl: FunctionUrl;
  /** `https://<url-id>.lambda-url.<region>.on.aws/webhook`: the callback URL for the Meta app. */
  readonly webhookUrl: string;
}

/**
 * The receiver's own URL as the webhook's front door (`FUNCTION_URL_DEFAULTS`: auth type `NONE`, the HMAC
 * authenticates). A function URL answers on every path; the callback URL keeps `/webhook`, as the HTTP API's.
 */
export function buildWebhookFunctionUrl(scope: Construct, receiverFunction: IFunction): WebhookFunctionUrl {
  const functionUrl = new FunctionUrl(scope, 'ReceiverFunctionUrl', {
    function: receiverFunction,
    ...FUNCTION_URL_DEFAULTS,
  });
  return { functionUrl, webhookUrl: `${functionUrl.url}webhook` };
}
