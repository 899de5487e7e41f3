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
