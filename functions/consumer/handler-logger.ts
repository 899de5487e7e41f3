import type { Logger } from '@aws-lambda-powertools/logger';
import type { WebhookEvent } from '../events/types.ts';
import type { HandlerLogger, LogDetails } from './handler-api.ts';
import { loggableKey } from './loggable-key.ts';

/**
 * The logger handed to user handlers: each line carries the event's key, field and kind; details that are
 * not scalars are dropped at runtime too (JavaScript callers bypass the types), so a payload or a contact
 * object never reaches the logs through it.
 */
export function createHandlerLogger(
  logger: Logger,
  event: WebhookEvent,
  fixed: LogDetails = {},
): HandlerLogger {
  const line = (details: LogDetails | undefined) => ({
    ...scalarsOnly(details),
    ...scalarsOnly(fixed),
    key: loggableKey(event),
    field: event.field,
    kind: event.kind,
  });
  return {
    debug: (message, details) => logger.debug(message, line(details)),
    info: (message, details) => logger.info(message, line(details)),
    warn: (message, details) => logger.warn(message, line(details)),
    error: (message, details) => logger.error(message, line(details)),
  };
}

function scalarsOnly(details: LogDetails | undefined): Record<string, string | number | boolean> {
  const kept: Record<string, string | number | boolean> = {};
  for (const [name, value] of Object.entries(details ?? {})) {
    if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean')
      kept[name] = value;
  }
  return kept;
}

/**
 * What is logged about an error: its name (and an AWS SDK error's HTTP status), not its message. A message
 * can quote its input (a CRM echoing a phone number, a parser quoting text), so it stays out by default.
 */
export function describeError(error: unknown): { errorName: string; httpStatusCode?: number } {
  if (!(error instanceof Error)) return { errorName: typeof error };
  const status = (error as { $metadata?: { httpStatusCode?: unknown } }).$metadata?.httpStatusCode;
  return typeof status === 'number'
    ? { errorName: error.name, httpStatusCode: status }
    : { errorName: error.name };
}
