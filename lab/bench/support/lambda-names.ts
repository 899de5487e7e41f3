/**
 * Function names as long as the ones CloudFormation generates for the construct's functions (stack name,
 * logical id with its hash, a random suffix): Powertools writes the name and the ARN on every log line, so a
 * short made-up name would make the measured log volume smaller than in AWS.
 */
export const RECEIVER_FUNCTION_NAME = 'WhatsAppWebhook-WebhookReceiverFunction1A2B3C4D-AbCdEfGhIjKl';
export const CONSUMER_FUNCTION_NAME = 'WhatsAppWebhook-WebhookConsumerFunction5E6F7A8B-MnOpQrStUvWx';
