/** The functions' log line: what a line keeps of the Lambda context below DEBUG, and all of it at DEBUG. */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createLambdaContext } from '../../../cli/local/lambda-context.ts';
import { createFunctionLogger } from '../../../functions/commons/function-logger.ts';

const context = createLambdaContext({
  functionName: 'Stack-WebhookReceiverFunction1A2B3C4D-AbCdEfGhIjKl',
  region: 'eu-west-1',
  deadlineMs: Date.now() + 10_000,
  memoryLimitInMB: 512,
});

function linesAt(level: 'INFO' | 'DEBUG'): Record<string, unknown>[] {
  vi.stubEnv('POWERTOOLS_LOG_LEVEL', level);
  const logger = createFunctionLogger();
  logger.addContext(context);
  const lines: string[] = [];
  vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    lines.push(String(chunk));
    return true;
  });
  logger.info('Delivery accepted', { requestId: 'req-1', events: 1 });
  logger.debug('Delivery accepted, in detail', { bodyBytes: 600 });
  vi.restoreAllMocks();
  return lines.map((line) => JSON.parse(line) as Record<string, unknown>);
}

afterEach(() => {
  vi.restoreAllMocks();
  vi.unstubAllEnvs();
});

describe('createFunctionLogger', () => {
  it('keeps the request id and cold start at INFO, not what the log group already names', () => {
    const [line, ...more] = linesAt('INFO');
    expect(more).toEqual([]);
    expect(line).toMatchObject({
      level: 'INFO',
      message: 'Delivery accepted',
      service: 'whatsapp-webhook-dedup',
      function_request_id: context.awsRequestId,
      requestId: 'req-1',
      events: 1,
    });
    expect(line).toHaveProperty('cold_start');
    for (const dropped of ['function_arn', 'function_name', 'function_memory_size', 'sampling_rate']) {
      expect(line).not.toHaveProperty(dropped);
    }
  });

  it('writes the whole Lambda context and the debug lines at DEBUG', () => {
    const lines = linesAt('DEBUG');
    expect(lines.map((line) => line.message)).toEqual(['Delivery accepted', 'Delivery accepted, in detail']);
    for (const line of lines) {
      expect(line).toMatchObject({
        function_arn: context.invokedFunctionArn,
        function_name: context.functionName,
        function_memory_size: '512',
        function_request_id: context.awsRequestId,
      });
    }
  });
});
