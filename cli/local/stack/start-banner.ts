import { ENV } from 'whatsapp-webhook-dedup/contract/environment';
import type { LocalSubscriberInfo } from '../local-stack-api.ts';
import { SEND_SAMPLES } from '../sender/send-samples.ts';
import type { LocalStackConfig } from './local-config.ts';
import type { LocalStack } from './local-stack.ts';

/** What `npm start` prints once the stack is up: where things are, the settings, and what to try first. */
export function startBanner(options: {
  stack: LocalStack;
  config: LocalStackConfig;
  startedInMs: number;
  /**
   * How to send a body from where the user is. @default this repository's `npm run send` with its first two
   * samples: a customer with a phone number, and one with a username and no phone number
   */
  sendCommand?: string;
}): string {
  const { stack, config } = options;
  const { subscribers } = stack.info;
  const usedDefault = (name: string) => (config.defaultsUsed.includes(name) ? ' (dev default)' : '');
  const portFlag = stack.port === 3000 ? '' : ` --url ${stack.url}/webhook`;
  const challengeUrl = `${stack.url}/webhook?hub.mode=subscribe&hub.verify_token=${encodeURIComponent(config.verifyToken)}&hub.challenge=42`;
  const sendFlags = `${portFlag}${config.defaultsUsed.includes(ENV.appSecrets) ? '' : ` --secret ${config.appSecrets[0]}`}`;
  const sendLines =
    options.sendCommand === undefined
      ? SEND_SAMPLES.slice(0, 2).map(({ file, what }) => `  npm run send -- ${file}${sendFlags}    # ${what}`)
      : [`  ${options.sendCommand}${sendFlags}`];
  return [
    '',
    `Local stack ready in ${(options.startedInMs / 1000).toFixed(1)} s`,
    '',
    `  Webhook      ${stack.url}/webhook`,
    `  Dashboard    ${stack.url}/`,
    `  Inspect      ${stack.url}/local/info · /local/effects · /local/ledger/<wamid> · /local/stats · /local/faults · /local/drained`,
    `  DynamoDB     ${stack.info.dynamodbEndpoint}  table ${stack.info.tableName}`,
    `  SQS          ${stack.info.sqsEndpoint}`,
    `               quarantine ${stack.info.quarantineQueueUrl}`,
    '',
    `  ${subscribers.length === 1 ? 'Subscriber' : `${subscribers.length} subscribers`} from ${stack.info.subscribersSource}:`,
    ...subscribers.flatMap(subscriberLines),
    '',
    `  ${ENV.appSecrets}=${config.appSecrets.join(',')}${usedDefault(ENV.appSecrets)}`,
    `  ${ENV.verifyToken}=${config.verifyToken}${usedDefault(ENV.verifyToken)}`,
    '',
    'Try:',
    `  curl '${challengeUrl}'`,
    ...sendLines,
    `  curl ${stack.url}/local/effects`,
    '',
    'Ctrl-C stops everything.',
  ].join('\n');
}

function subscriberLines(subscriber: LocalSubscriberInfo): string[] {
  const origins = [
    subscriber.numbers === null ? '' : `numbers ${subscriber.numbers.join(', ')}`,
    subscriber.wabas === null ? '' : `wabas ${subscriber.wabas.join(', ')}`,
  ].filter((text) => text !== '');
  const fields = [
    subscriber.fields === null ? 'every field' : `fields ${subscriber.fields.join(', ')}`,
    ...origins,
  ].join(', ');
  const keys = subscriber.keyNamespace === null ? 'keys unprefixed' : `keys ${subscriber.keyNamespace}#…`;
  const head = `    ${subscriber.name}  ${subscriber.entry} (${subscriber.handlers.join(', ') || 'no handlers'}), ${fields}, ${keys}`;
  const status = { queueUrl: subscriber.queueUrl, dlqUrl: subscriber.dlqUrl, settings: subscriber.settings };
  const { messageQueueUrl, messageDlqUrl, messageLaneSettings } = subscriber;
  if (messageQueueUrl === undefined || messageDlqUrl === undefined || messageLaneSettings === undefined) {
    return [head, ...laneLines(status, '      ')];
  }
  const order = subscriber.messageLaneOrdered
    ? 'FIFO, in order per conversation'
    : 'standard queue, no order';
  return [
    head,
    `      message lane: inbound messages (${order})`,
    ...laneLines(
      { queueUrl: messageQueueUrl, dlqUrl: messageDlqUrl, settings: messageLaneSettings },
      '        ',
    ),
    '      status lane: statuses, errors and every other field',
    ...laneLines(status, '        '),
  ];
}

function laneLines(
  lane: { queueUrl: string; dlqUrl: string; settings: LocalSubscriberInfo['settings'] },
  indent: string,
): string[] {
  const s = lane.settings;
  return [
    `${indent}queue ${lane.queueUrl}`,
    `${indent}DLQ   ${lane.dlqUrl}`,
    `${indent}consumer: batch size ${s.batchSize}, batching window ${s.maxBatchingWindowSeconds} s, ${s.maxConcurrency} pollers (maxConcurrency), timeout ${s.consumerTimeoutSeconds} s`,
    `${indent}queue: visibility timeout ${s.visibilityTimeoutSeconds} s, maxReceiveCount ${s.maxReceiveCount}, then the DLQ`,
  ];
}
