/**
 * Random DynamoDB faults for one SDK client, injected by a middleware INSIDE the SDK's retry loop: every HTTP
 * attempt may fail, so the SDK's retry policy, then the claim store's error mapping, then the consumer's own
 * retries and SQS redelivery all see the errors DynamoDB would send. Faults only hit the claim table's writes
 * (claim, complete, release, ledger); reads and table management pass untouched.
 *
 * | kind                                    | like DynamoDB's                  | applied?                        |
 * |-----------------------------------------|----------------------------------|---------------------------------|
 * | ProvisionedThroughputExceededException  | 400, throttled                   | never                           |
 * | ThrottlingException                     | 400, throttled                   | never                           |
 * | InternalServerError                     | 500                              | sometimes (DynamoDB documents    |
 * |                                         |                                  | that a 500 may have succeeded)  |
 * | TimeoutError                            | the client gave up on the socket | sometimes: the request was lost, |
 * |                                         |                                  | or its response was              |
 *
 * An "applied" fault lets the request reach DynamoDB and replaces its answer with the error: the write
 * happened, the caller does not know it. That is the harshest case for a conditional-write protocol, since
 * the SDK's retry then meets the caller's own earlier write.
 *
 * A second middleware, outside the retry loop, logs every logical call (operation, key, owner token, outcome,
 * attempts), from which the test learns which claims' completion was given up.
 */
import {
  DynamoDBClient,
  InternalServerError,
  ProvisionedThroughputExceededException,
  ThrottlingException,
} from '@aws-sdk/client-dynamodb';
import { dynamoDbEndpoint, TEST_CREDENTIALS, TEST_REGION } from './aws-clients.ts';

export const DYNAMODB_FAULT_KINDS = [
  'ProvisionedThroughputExceededException',
  'ThrottlingException',
  'InternalServerError',
  'TimeoutError',
] as const;
export type DynamoDbFaultKind = (typeof DYNAMODB_FAULT_KINDS)[number];

export const CLAIM_TABLE_OPERATIONS = ['claim', 'complete', 'release', 'ledger'] as const;
/** A claim-table write as the consumer uses it (docs/design.md §2, §3); `other` for anything else. */
export type ClaimTableOperation = (typeof CLAIM_TABLE_OPERATIONS)[number] | 'other';

export interface DynamoDbFaultOptions {
  /** Probability that one HTTP attempt of a claim-table write fails. */
  readonly rate: number;
  readonly random: () => number;
  /** Relative weights of the kinds. @default equal weights */
  readonly weights?: Partial<Record<DynamoDbFaultKind, number>>;
  /** Share of InternalServerError and TimeoutError faults injected after DynamoDB applied the write. @default 0.5 */
  readonly appliedShare?: number;
  /**
   * A fault to inject into this attempt whatever the rate, or undefined: e.g. a key throttled on every attempt
   * (to drive its record to the DLQ), or exactly one applied write whose answer is lost.
   */
  readonly forceFault?: (call: Readonly<LoggedCall>) => ForcedFault | undefined;
}

export interface ForcedFault {
  readonly kind: DynamoDbFaultKind;
  /** The write reaches DynamoDB first (only meaningful for InternalServerError and TimeoutError). */
  readonly applied: boolean;
}

export interface LoggedCall {
  readonly operation: ClaimTableOperation;
  readonly pk: string;
  /** The claim's owner token: written by `claim`, the condition of `complete` and `release`. */
  readonly owner: string | undefined;
  ok: boolean;
  /** Error name when the call failed after the SDK's retries. */
  error?: string;
  attempts: number;
}

export interface FaultReport {
  /** Logical calls (what the consumer asked for), by operation. */
  readonly calls: Record<string, number>;
  /** HTTP attempts, by operation: calls + SDK retries. */
  readonly attempts: Record<string, number>;
  /** SDK retries (attempts − calls), by operation. */
  readonly retries: Record<string, number>;
  /** Calls that still failed after the SDK's retries (a refused condition aside), by operation. */
  readonly failedCalls: Record<string, number>;
  /** Calls whose condition DynamoDB refused (a duplicate claim, a lost claim), by operation. */
  readonly conditionFailures: Record<string, number>;
  /** Injected faults, by operation then kind. */
  readonly faults: Record<string, Record<string, number>>;
  /** Of the injected faults, those whose write DynamoDB had applied, by operation. */
  readonly appliedFaults: Record<string, number>;
  readonly totalFaults: number;
}

export interface DynamoDbFaultInjector {
  /** Turn faults off (e.g. once the run is over); logging goes on. */
  enabled: boolean;
  readonly calls: readonly LoggedCall[];
  report(): FaultReport;
  /**
   * Partition keys some owner gave up completing: its last `complete` call failed (transient errors past
   * every retry, or the claim was lost to a takeover). Only these may show an effect without `done`, or a
   * second effect.
   */
  completionGivenUp(): Set<string>;
}

type Handler = (args: { input?: unknown }) => Promise<{ output?: unknown }>;
interface MiddlewareContext {
  commandName?: string;
  [key: string | symbol]: unknown;
}
interface AnyMiddlewareStack {
  add(
    middleware: (next: Handler, context: MiddlewareContext) => Handler,
    options: { step: 'build' | 'deserialize'; name: string; priority?: 'high' | 'normal' | 'low' },
  ): void;
}

const CALL = Symbol('faultInjectorCall');
const CONDITION_FAILED = 'ConditionalCheckFailedException';
let injectors = 0;

/** Adds the fault and call-log middlewares to `client` (a DocumentClient shares its base client's stack). */
export function injectDynamoDbFaults(
  client: { middlewareStack: unknown },
  options: DynamoDbFaultOptions,
): DynamoDbFaultInjector {
  const calls: LoggedCall[] = [];
  const faults: Record<string, Record<string, number>> = {};
  const appliedFaults: Record<string, number> = {};
  const weights = DYNAMODB_FAULT_KINDS.map((kind) => options.weights?.[kind] ?? 1);
  const weightSum = weights.reduce((sum, w) => sum + w, 0);
  const appliedShare = options.appliedShare ?? 0.5;
  const id = ++injectors;
  const injector: DynamoDbFaultInjector = {
    enabled: true,
    calls,
    report: () => summarise(calls, faults, appliedFaults),
    completionGivenUp: () => completionGivenUp(calls),
  };

  const pickKind = (): DynamoDbFaultKind => {
    let roll = options.random() * weightSum;
    for (const [index, kind] of DYNAMODB_FAULT_KINDS.entries()) {
      roll -= weights[index] as number;
      if (roll < 0) return kind;
    }
    return DYNAMODB_FAULT_KINDS[DYNAMODB_FAULT_KINDS.length - 1] as DynamoDbFaultKind;
  };

  const stack = client.middlewareStack as AnyMiddlewareStack;
  // Outside the retry loop (build step): one entry per logical call.
  stack.add(
    (next, context) => async (args) => {
      const identity = identify(context.commandName, args.input);
      const call: LoggedCall = { ...identity, ok: false, attempts: 0 };
      context[CALL] = call;
      calls.push(call);
      try {
        const result = await next(args);
        call.ok = true;
        return result;
      } catch (error) {
        call.error = error instanceof Error ? error.name : 'UnknownError';
        throw error;
      }
    },
    { step: 'build', name: `faultCallLog${id}`, priority: 'high' },
  );
  // Inside the retry loop (deserialize step): once per HTTP attempt.
  stack.add(
    (next, context) => async (args) => {
      const call = context[CALL] as LoggedCall | undefined;
      if (call !== undefined) call.attempts++;
      if (call === undefined || call.operation === 'other' || !injector.enabled) return next(args);
      let fault = options.forceFault?.(call);
      if (fault === undefined) {
        if (options.random() >= options.rate) return next(args);
        const kind = pickKind();
        const mayBeApplied = kind === 'InternalServerError' || kind === 'TimeoutError';
        fault = { kind, applied: mayBeApplied && options.random() < appliedShare };
      }
      const { kind, applied } = fault;
      const byKind = faults[call.operation] ?? {};
      faults[call.operation] = byKind;
      byKind[kind] = (byKind[kind] ?? 0) + 1;
      if (applied) {
        appliedFaults[call.operation] = (appliedFaults[call.operation] ?? 0) + 1;
        // The write reaches DynamoDB (and may succeed or fail its condition); its answer is lost.
        const answer = await next(args).catch(() => undefined);
        if (answer !== undefined && answer.output === undefined)
          throw new Error('fault injector is not outside the deserializer');
      }
      throw faultError(kind);
    },
    // High priority: outside the deserializer, so an applied write's response is read in full (and its
    // socket freed) before the answer is replaced.
    { step: 'deserialize', name: `faultInjector${id}`, priority: 'high' },
  );
  return injector;
}

function faultError(kind: DynamoDbFaultKind): Error {
  const message = `Injected ${kind}`;
  switch (kind) {
    case 'ProvisionedThroughputExceededException':
      return new ProvisionedThroughputExceededException({ message, $metadata: { httpStatusCode: 400 } });
    case 'ThrottlingException':
      return new ThrottlingException({ message, $metadata: { httpStatusCode: 400 } });
    case 'InternalServerError':
      return new InternalServerError({ message, $metadata: { httpStatusCode: 500 } });
    case 'TimeoutError':
      // What the SDK's HTTP handler throws when a request times out: no HTTP status.
      return Object.assign(new Error(message), { name: 'TimeoutError', $metadata: {} });
  }
}

interface MarshalledInput {
  Item?: Record<string, { S?: string }>;
  Key?: Record<string, { S?: string }>;
  ExpressionAttributeValues?: Record<string, { S?: string }>;
}

function identify(
  commandName: string | undefined,
  input: unknown,
): { operation: ClaimTableOperation; pk: string; owner: string | undefined } {
  const request = (input ?? {}) as MarshalledInput;
  const pk = request.Item?.pk?.S ?? request.Key?.pk?.S ?? '';
  const command = (commandName ?? '').replace(/Command$/, '');
  let operation: ClaimTableOperation = 'other';
  if (command === 'PutItem') operation = 'claim';
  else if (command === 'DeleteItem') operation = 'release';
  // Ledger items live beside the claims under `[<ns>#]ledger:<wamid>` (functions/ledger/status-ledger.ts).
  else if (command === 'UpdateItem') operation = /(^|#)ledger:/.test(pk) ? 'ledger' : 'complete';
  const owner =
    operation === 'claim'
      ? request.Item?.owner?.S
      : operation === 'complete' || operation === 'release'
        ? request.ExpressionAttributeValues?.[':me']?.S
        : undefined;
  return { operation, pk, owner };
}

function summarise(
  calls: readonly LoggedCall[],
  faults: Record<string, Record<string, number>>,
  appliedFaults: Record<string, number>,
): FaultReport {
  const count = (pick: (call: LoggedCall) => number) => {
    const result: Record<string, number> = {};
    for (const call of calls) {
      if (call.operation === 'other') continue;
      result[call.operation] = (result[call.operation] ?? 0) + pick(call);
    }
    return result;
  };
  const totalFaults = Object.values(faults)
    .flatMap((byKind) => Object.values(byKind))
    .reduce((sum, n) => sum + n, 0);
  return {
    calls: count(() => 1),
    attempts: count((call) => call.attempts),
    retries: count((call) => Math.max(0, call.attempts - 1)),
    failedCalls: count((call) => (call.ok || call.error === CONDITION_FAILED ? 0 : 1)),
    conditionFailures: count((call) => (call.error === CONDITION_FAILED ? 1 : 0)),
    faults: structuredClone(faults),
    appliedFaults: { ...appliedFaults },
    totalFaults,
  };
}

function completionGivenUp(calls: readonly LoggedCall[]): Set<string> {
  const lastByOwner = new Map<string, LoggedCall>();
  for (const call of calls) {
    if (call.operation === 'complete' && call.owner !== undefined) lastByOwner.set(call.owner, call);
  }
  return new Set([...lastByOwner.values()].filter((call) => !call.ok).map((call) => call.pk));
}

/**
 * The SDK's standard retry decision (throttling and transient errors, `maxAttempts` in all) with a backoff
 * compressed like the tests' function timeouts: a test consumer with a 2 s timeout cannot wait the SDK's
 * 0–1 s throttling backoff. Pass as the client's `retryStrategy`.
 */
export function compressedRetryStrategy(
  maxAttempts: number,
  options: { baseDelayMs?: number; throttlingDelayMs?: number; random?: () => number } = {},
) {
  const base = options.baseDelayMs ?? 10;
  const throttling = options.throttlingDelayMs ?? 40;
  const random = options.random ?? Math.random;
  const token = (retryCount: number, delay: number) => ({
    getRetryCount: () => retryCount,
    getRetryDelay: () => delay,
    getRetryCost: () => undefined,
  });
  return {
    mode: 'standard',
    acquireInitialRetryToken: async () => token(0, 0),
    refreshRetryTokenForRetry: async (
      previous: { getRetryCount(): number },
      errorInfo: { errorType: string },
    ) => {
      const retryable = errorInfo.errorType === 'THROTTLING' || errorInfo.errorType === 'TRANSIENT';
      const retryCount = previous.getRetryCount() + 1;
      if (!retryable || retryCount >= maxAttempts) throw new Error('No retry token available');
      const ceiling = (errorInfo.errorType === 'THROTTLING' ? throttling : base) * 2 ** (retryCount - 1);
      return token(retryCount, Math.floor(random() * ceiling));
    },
    recordSuccess: () => undefined,
  };
}

/** `claim 12 (PTEE 4, Throttling 3, ISE 2, Timeout 3)` lines, for a test's summary. */
export function formatFaultReport(report: FaultReport): string {
  const short: Record<string, string> = {
    ProvisionedThroughputExceededException: 'PTEE',
    ThrottlingException: 'Throttling',
    InternalServerError: 'ISE',
    TimeoutError: 'Timeout',
  };
  const lines = CLAIM_TABLE_OPERATIONS.map((operation) => {
    const byKind = report.faults[operation] ?? {};
    const total = Object.values(byKind).reduce((sum, n) => sum + n, 0);
    const kinds = DYNAMODB_FAULT_KINDS.map((kind) => `${short[kind]} ${byKind[kind] ?? 0}`).join(', ');
    return (
      `  ${operation.padEnd(8)} calls ${String(report.calls[operation] ?? 0).padStart(5)}  ` +
      `faults ${String(total).padStart(4)} (${kinds}; applied ${report.appliedFaults[operation] ?? 0})  ` +
      `SDK retries ${report.retries[operation] ?? 0}  failed after retries ${report.failedCalls[operation] ?? 0}  ` +
      `condition refused ${report.conditionFailures[operation] ?? 0}`
    );
  });
  return lines.join('\n');
}

/**
 * A client on DynamoDB Local whose first attempt of one claim-table operation is applied by DynamoDB and
 * answered with a TimeoutError; every other attempt goes through. The SDK makes up to 3 attempts, as by default.
 */
export function clientLosingFirstAnswer(operation: ClaimTableOperation): {
  client: DynamoDBClient;
  faults: DynamoDbFaultInjector;
} {
  const client = new DynamoDBClient({
    endpoint: dynamoDbEndpoint(),
    region: TEST_REGION,
    credentials: TEST_CREDENTIALS,
    retryStrategy: compressedRetryStrategy(3),
  });
  let lost = 0;
  const faults = injectDynamoDbFaults(client, {
    rate: 0,
    random: Math.random,
    forceFault: (call) =>
      call.operation === operation && lost++ === 0 ? { kind: 'TimeoutError', applied: true } : undefined,
  });
  return { client, faults };
}
