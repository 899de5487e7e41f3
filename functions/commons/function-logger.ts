import { LogFormatter, Logger, LogItem } from '@aws-lambda-powertools/logger';
import type { LogAttributes, UnformattedAttributes } from '@aws-lambda-powertools/logger/types';
import { SERVICE_NAME } from '../../contract/metric-names.ts';

/**
 * Powertools' line, less the Lambda context that the log group already states: below DEBUG, a line keeps the
 * invocation's request id and cold start, and drops the function's name, ARN and memory size (about 200
 * bytes a line with the names CloudFormation generates, ingested for nothing: every line of a log group comes
 * from the function the group is named after) and the sampling rate (always 0 here). A logger at DEBUG writes
 * them all, as Powertools does.
 */
export class FunctionLogFormatter extends LogFormatter {
  #wholeContext = false;

  writeWholeContext(whole: boolean): void {
    this.#wholeContext = whole;
  }

  formatAttributes(attributes: UnformattedAttributes, additionalLogAttributes: LogAttributes): LogItem {
    const context = attributes.lambdaContext;
    const base = {
      level: attributes.logLevel,
      message: attributes.message,
      timestamp: this.formatTimestamp(attributes.timestamp),
      service: attributes.serviceName,
      cold_start: context?.coldStart,
      ...(this.#wholeContext && {
        function_arn: context?.invokedFunctionArn,
        function_memory_size: context?.memoryLimitInMB,
        function_name: context?.functionName,
      }),
      function_request_id: context?.awsRequestId,
      ...(this.#wholeContext && { sampling_rate: attributes.sampleRateValue }),
      xray_trace_id: attributes.xRayTraceId,
    };
    return new LogItem({ attributes: base }).addAttributes(additionalLogAttributes);
  }
}

/** The logger of the receiver and the consumers: Powertools Logger with {@link FunctionLogFormatter}. */
export function createFunctionLogger(): Logger {
  const formatter = new FunctionLogFormatter();
  const logger = new Logger({ serviceName: SERVICE_NAME, logFormatter: formatter });
  formatter.writeWholeContext(['DEBUG', 'TRACE'].includes(logger.getLevelName()));
  return logger;
}
