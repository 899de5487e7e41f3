import { randomUUID } from 'node:crypto';
import type { Context } from 'aws-lambda';

export interface LambdaContextOptions {
  readonly functionName: string;
  readonly region: string;
  /** Epoch ms at which Lambda would end the invocation (start + function timeout). */
  readonly deadlineMs: number;
  readonly memoryLimitInMB?: number;
  /** Epoch ms. @default Date.now */
  readonly clock?: () => number;
}

/** A context shaped like the one the Node.js Lambda runtime passes, with a real deadline. */
export function createLambdaContext(options: LambdaContextOptions): Context {
  const clock = options.clock ?? Date.now;
  const unsupported = (name: string) => () => {
    throw new Error(`context.${name}() is a deprecated callback API; return a promise instead.`);
  };
  const day = new Date(clock()).toISOString().slice(0, 10).replaceAll('-', '/');
  return {
    callbackWaitsForEmptyEventLoop: true,
    functionName: options.functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:${options.region}:000000000000:function:${options.functionName}`,
    memoryLimitInMB: String(options.memoryLimitInMB ?? 1024),
    awsRequestId: randomUUID(),
    logGroupName: `/aws/lambda/${options.functionName}`,
    logStreamName: `${day}/[$LATEST]${randomUUID().replaceAll('-', '')}`,
    getRemainingTimeInMillis: () => Math.max(0, options.deadlineMs - clock()),
    done: unsupported('done'),
    fail: unsupported('fail'),
    succeed: unsupported('succeed'),
  };
}
