/**
 * What ops reads of a deployed stack: its CloudFormation outputs (contract/stack-outputs.ts names them) and
 * the environment of its consumer functions (a subscriber's key namespace and fields, as the consumer reads
 * them), so that ops looks at exactly what the deployed code uses.
 */
import { type CloudFormationClient, DescribeStacksCommand, type Stack } from '@aws-sdk/client-cloudformation';
import { GetFunctionConfigurationCommand, type LambdaClient } from '@aws-sdk/client-lambda';
import { OpsError } from '../errors.ts';

export class StackResources {
  readonly #cloudFormation: CloudFormationClient;
  readonly #lambda: LambdaClient;

  constructor(cloudFormation: CloudFormationClient, lambda: LambdaClient) {
    this.#cloudFormation = cloudFormation;
    this.#lambda = lambda;
  }

  /** Output key → value; an `OpsError` when the stack does not exist. */
  async outputs(stackName: string): Promise<Record<string, string>> {
    let stacks: Stack[];
    try {
      stacks =
        (await this.#cloudFormation.send(new DescribeStacksCommand({ StackName: stackName }))).Stacks ?? [];
    } catch (error) {
      // CloudFormation answers a missing stack with a ValidationError "Stack with id X does not exist".
      if (
        error instanceof Error &&
        error.name === 'ValidationError' &&
        /does not exist/.test(error.message)
      ) {
        throw new OpsError(`no stack ${stackName} in region ${await this.#cloudFormation.config.region()}`);
      }
      throw error;
    }
    const [stack] = stacks;
    if (stack === undefined) throw new OpsError(`no stack ${stackName}`);
    return Object.fromEntries(
      (stack.Outputs ?? []).flatMap(({ OutputKey, OutputValue }) =>
        OutputKey === undefined || OutputValue === undefined ? [] : [[OutputKey, OutputValue]],
      ),
    );
  }

  /** A function's environment variables. */
  async environment(functionName: string): Promise<Record<string, string>> {
    const { Environment } = await this.#lambda.send(
      new GetFunctionConfigurationCommand({ FunctionName: functionName }),
    );
    return Environment?.Variables ?? {};
  }
}
