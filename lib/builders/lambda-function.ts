import { Duration } from 'aws-cdk-lib';
import { Effect, PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import { BUNDLING, LAMBDA_ARCHITECTURE, LAMBDA_LOGGING, LAMBDA_RUNTIME, NODE_OPTIONS } from '../defaults.ts';

export interface LambdaFunctionOptions {
  readonly description: string;
  /** Absolute path of the entry file, which exports `handler`. */
  readonly entry: string;
  readonly memorySize: number;
  readonly timeoutSeconds: number;
  readonly logRetention: RetentionDays;
  /** The function's own variables; `NODE_OPTIONS` is added. */
  readonly environment: Readonly<Record<string, string>>;
  /** @default - none: the function draws on the account's unreserved concurrency */
  readonly reservedConcurrentExecutions?: number | undefined;
}

export interface BuiltLambdaFunction {
  readonly lambdaFunction: NodejsFunction;
  /** The execution role, for the grants the caller adds. */
  readonly role: Role;
}

/**
 * A function built like every other of the pipeline: runtime, architecture, bundling and JSON logging from
 * lib/defaults.ts, its own log group (`<id>LogGroup`) with retention, and a role (`<id>Role`) that may write to
 * that log group and nothing else until the caller adds grants.
 */
export function buildLambdaFunction(
  scope: Construct,
  id: string,
  options: LambdaFunctionOptions,
): BuiltLambdaFunction {
  const logGroup = new LogGroup(scope, `${id}LogGroup`, { retention: options.logRetention });
  const role = new Role(scope, `${id}Role`, { assumedBy: new ServicePrincipal('lambda.amazonaws.com') });
  role.addToPrincipalPolicy(
    new PolicyStatement({
      sid: 'WriteOwnLogs',
      effect: Effect.ALLOW,
      actions: ['logs:CreateLogStream', 'logs:PutLogEvents'],
      resources: [logGroup.logGroupArn],
    }),
  );
  const lambdaFunction = new NodejsFunction(scope, id, {
    description: options.description,
    entry: options.entry,
    handler: 'handler',
    // No projectRoot or lock file: NodejsFunction takes the CDK app's (the lock file found up from its working
    // directory), so that an installed package bundles the user's entries and its own with the user's esbuild.
    runtime: LAMBDA_RUNTIME,
    architecture: LAMBDA_ARCHITECTURE,
    memorySize: options.memorySize,
    timeout: Duration.seconds(options.timeoutSeconds),
    reservedConcurrentExecutions: options.reservedConcurrentExecutions,
    role,
    logGroup,
    ...LAMBDA_LOGGING,
    bundling: BUNDLING,
    environment: { NODE_OPTIONS, ...options.environment },
  });
  return { lambdaFunction, role };
}
