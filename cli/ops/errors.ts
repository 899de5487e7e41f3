/**
 * Exit codes of `npm run ops` (docs/operations.md): 0 done, 1 the operation failed or was refused, 2 a usage
 * problem, 3 an answer that something is not there (`key` with no claim: never seen, or expired).
 */
export const EXIT_NOT_FOUND = 3;

/**
 * The two ways an ops command ends badly, each with one line for the operator: a usage problem (bad
 * arguments, an unknown key or subscriber: exit 2, nothing was touched) or an operational one (a queue,
 * table or stack that answered with an error, a refusal such as forgetting a claim in flight: exit 1).
 */
export class UsageError extends Error {
  readonly exitCode = 2;

  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

export class OpsError extends Error {
  readonly exitCode = 1;

  constructor(message: string) {
    super(message);
    this.name = 'OpsError';
  }
}
