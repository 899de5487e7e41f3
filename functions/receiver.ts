/**
 * The receiver Lambda, behind an API Gateway HTTP API or its own function URL (both payload format 2.0, the
 * same fields; `endpoint` in lib/): maps the event to a `WebhookRequest`, runs `receiveWebhook`, maps the
 * answer back. Configuration comes from the environment only, so the local stack
 * runs this same handler behind its API Gateway v2 event adapter.
 */
import { Metrics } from '@aws-lambda-powertools/metrics';
import { SecretsProvider } from '@aws-lambda-powertools/parameters/secrets';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { SQSClient } from '@aws-sdk/client-sqs';
import type { APIGatewayProxyEventV2, APIGatewayProxyResultV2, Context } from 'aws-lambda';
import { ENV, getNumberFromEnv, getStringFromEnv } from '../contract/environment.ts';
import { METRICS_NAMESPACE, SERVICE_NAME } from '../contract/metric-names.ts';
import { DEFAULT_SETTINGS } from '../contract/settings.ts';
import { decodeSubscriberQueues, type SubscriberQueue } from '../contract/subscribers.ts';
import { createFunctionLogger } from './commons/function-logger.ts';
import { createProofSigner, type ProofSigner } from './commons/provenance.ts';
import { sdkClientConfig } from './commons/sdk-client-config.ts';
import { SqsArchiveQueue } from './queue/sqs-archive-queue.ts';
import { SqsQuarantineQueue } from './queue/sqs-quarantine-queue.ts';
import { SubscriberFanOut } from './queue/subscriber-fan-out.ts';
import {
  type ReceiverDependencies,
  receiveWebhook,
  type WebhookRequest,
} from './receiver/receive-webhook.ts';
import { SECRETS_MAX_AGE_SECONDS, webhookSecretsSource } from './receiver/webhook-secrets.ts';

const logger = createFunctionLogger();
const metrics = new Metrics({ namespace: METRICS_NAMESPACE, serviceName: SERVICE_NAME });

const INTERNAL_ERROR: APIGatewayProxyResultV2 = {
  statusCode: 500,
  headers: { 'content-type': 'text/plain; charset=utf-8' },
  body: 'internal error',
};

function errorText(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}

export interface ReceiverConfig {
  readonly subscriberQueues: readonly SubscriberQueue[];
  readonly quarantineQueueUrl: string;
  readonly maximumMessageSizeBytes: number;
  /** Absent: the stack has no archive (`archive: false`). */
  readonly archiveQueueUrl: string | undefined;
}

/**
 * Reads the receiver's queue configuration from the variables `receiverEnvironment` writes; the secrets are
 * read by `webhookSecretsSource`.
 */
export function receiverConfigFromEnv(env: NodeJS.ProcessEnv = process.env): ReceiverConfig {
  const maximumMessageSizeBytes = getNumberFromEnv(
    ENV.maximumMessageSizeBytes,
    DEFAULT_SETTINGS.maximumMessageSizeBytes,
    env,
  );
  return {
    subscriberQueues: decodeSubscriberQueues(getStringFromEnv(ENV.subscriberQueues, env)),
    quarantineQueueUrl: getStringFromEnv(ENV.quarantineQueueUrl, env),
    maximumMessageSizeBytes,
    archiveQueueUrl: env[ENV.archiveQueueUrl] || undefined,
  };
}

/** Builds the clients and configuration once per container, on the first invocation. */
function buildDependencies(env: NodeJS.ProcessEnv): ReceiverDependencies {
  const config = receiverConfigFromEnv(env);
  const sqs = new SQSClient(sdkClientConfig('receiverSqs'));
  const { maximumMessageSizeBytes } = config;
  let provider: SecretsProvider | undefined;
  const secretsProvider = () => {
    provider ??= new SecretsProvider({
      awsSdkV3Client: new SecretsManagerClient(sdkClientConfig('receiverSecretsManager')),
    });
    return provider;
  };
  const proofs = provenanceSigner(env, secretsProvider);
  const fanOut = new SubscriberFanOut({ sqs, maximumMessageSizeBytes, proofs });
  const quarantine = new SqsQuarantineQueue({
    sqs,
    quarantineQueueUrl: config.quarantineQueueUrl,
    maximumMessageSizeBytes,
    proofs,
  });
  const secrets = webhookSecretsSource(env, secretsProvider);
  const archiveQueueUrl = config.archiveQueueUrl;
  return {
    secrets,
    subscribers: config.subscriberQueues,
    fanOut,
    quarantine,
    archive:
      archiveQueueUrl === undefined
        ? undefined
        : new SqsArchiveQueue({ sqs, archiveQueueUrl, maximumMessageSizeBytes, proofs }),
    metrics,
    logger,
  };
}

/**
 * Proves the bodies the receiver keeps: under `PROVENANCE_KEY` (the local stack), or the secret
 * `PROVENANCE_SECRET_ID` names, cached per container as the webhook secret is. A key that cannot be read
 * leaves the bodies unproven (kept all the same, with a warning), never a delivery refused.
 */
function provenanceSigner(env: NodeJS.ProcessEnv, secretsProvider: () => SecretsProvider): ProofSigner {
  const localKey = env[ENV.provenanceKey];
  const secretId = env[ENV.provenanceSecretId];
  return createProofSigner(
    async () => {
      if (localKey !== undefined && localKey !== '') return localKey;
      if (secretId === undefined || secretId === '') return undefined;
      const key = await secretsProvider().get(secretId, { maxAge: SECRETS_MAX_AGE_SECONDS });
      return typeof key === 'string' ? key : undefined;
    },
    (error) =>
      logger.warn('Provenance key not read: bodies kept without proof', {
        errorName: error instanceof Error ? error.name : typeof error,
      }),
  );
}

/**
 * Maps a payload 2.0 event (HTTP API or function URL) to the receiver's request; base64 bodies are decoded to
 * their bytes.
 */
export function toWebhookRequest(event: APIGatewayProxyEventV2): WebhookRequest {
  const rawBody = event.body ?? '';
  return {
    method: event.requestContext.http.method,
    path: event.rawPath,
    query: event.queryStringParameters ?? {},
    headers: event.headers ?? {},
    body: event.isBase64Encoded ? Buffer.from(rawBody, 'base64') : rawBody,
    requestId: event.requestContext.requestId,
  };
}

/**
 * A handler with its own container state (clients, cached secrets), built lazily from `env`. Tests create one
 * per simulated container; Lambda uses `handler`.
 */
export function createReceiverHandler(env: NodeJS.ProcessEnv = process.env) {
  let dependencies: ReceiverDependencies | undefined;
  return async (event: APIGatewayProxyEventV2, context?: Context): Promise<APIGatewayProxyResultV2> => {
    if (context !== undefined) logger.addContext(context);
    const requestId = event.requestContext.requestId;
    try {
      try {
        dependencies ??= buildDependencies(env);
      } catch (error) {
        // Built from the environment only, so the message names a variable, never request content.
        logger.error('Receiver misconfigured', { requestId, problem: errorText(error) });
        return INTERNAL_ERROR;
      }
      const response = await receiveWebhook(toWebhookRequest(event), dependencies);
      return { statusCode: response.statusCode, headers: { ...response.headers }, body: response.body };
    } catch (error) {
      // Messages of unexpected errors may quote the body (V8's JSON errors do): log the class only.
      logger.error('Receiver failed unexpectedly', {
        requestId,
        errorName: error instanceof Error ? error.name : 'UnknownError',
      });
      return INTERNAL_ERROR;
    } finally {
      // One EMF document per invocation, and none (not even Powertools' empty-metrics warning) for a GET.
      if (metrics.hasStoredMetrics()) metrics.publishStoredMetrics();
    }
  };
}

export const handler = createReceiverHandler();
