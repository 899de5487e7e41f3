/**
 * The network between the consumer and the DynamoDB model. Every request is two pending operations of the
 * invocation that sent it: the request reaching the table (where the model applies it, atomically) and the
 * answer coming back. Between the two, other workers run. When the invocation dies before its request
 * reached the table, the request may still land (it was on the wire) or not, by seed; after, the write
 * happened and nobody heard. Faults, drawn from the schedule's plan:
 *
 * - throttled: ProvisionedThroughputExceededException, nothing applied (the SDK's own retries were throttled
 *   too);
 * - answer lost, retried: applied, the answer lost, and after a socket timeout the SDK sends the same request
 *   again (applied again, its answer returned, or lost again);
 * - answer lost, failed: applied, and the call fails with TimeoutError;
 * - slow: 0.3 to 3 s instead of milliseconds.
 */
import { ProvisionedThroughputExceededException } from '@aws-sdk/client-dynamodb';
import type { SeededRandom } from '../../cli/local/seeded-random.ts';
import { type ClaimTableRequest, describeRequest } from './claim-table-requests.ts';
import type { DynamoDbModel } from './dynamodb/dynamodb-model.ts';
import type { ModelRequest, RequestInterceptor } from './dynamodb/model-document-client.ts';
import type { FaultPlan, FaultTally } from './faults.ts';
import type { ProtocolJournal } from './protocol-journal.ts';
import type { Scheduler } from './scheduler.ts';
import type { Trace } from './trace.ts';

/** The SDK's attempts per call in the consumer's client configuration (`sdk-client-config.ts`). */
const SDK_MAX_ATTEMPTS = 3;
/** The consumer's DynamoDB request timeout: how long the SDK waits for a lost answer before retrying. */
const REQUEST_TIMEOUT_MS = 3000;

export interface DynamoDbLinkOptions {
  readonly scheduler: Scheduler;
  readonly model: DynamoDbModel;
  readonly tableName: string;
  readonly plan: FaultPlan;
  readonly random: SeededRandom;
  readonly faults: FaultTally;
  readonly journal: ProtocolJournal;
  readonly trace: Trace;
}

type Output = Record<string, unknown>;
type Outcome =
  | { readonly ok: true; readonly output: Output }
  | { readonly ok: false; readonly error: unknown };

export function dynamoDbLink(options: DynamoDbLinkOptions): RequestInterceptor {
  const { scheduler, random, plan, faults, journal, trace } = options;

  const latency = (): number => {
    if (!random.chance(plan.dynamodbSlowRate)) return random.int(1, 8);
    faults.add('dynamodb-slow');
    return random.int(300, 3000);
  };

  const execute = (worker: string, request: ClaimTableRequest, apply: () => Output): Outcome => {
    let outcome: Outcome;
    try {
      outcome = { ok: true, output: apply() };
    } catch (error) {
      outcome = { ok: false, error };
    }
    if (request.operation !== 'read') {
      journal.recordWrite(
        { worker, operation: request.operation, pk: request.pk, succeeded: outcome.ok, at: scheduler.now },
        options.model.item(options.tableName, { pk: { S: request.pk } }),
      );
    }
    return outcome;
  };

  const answer = (worker: string, request: ClaimTableRequest, result: () => Output): Promise<Output> =>
    scheduler.schedule({
      worker,
      label: `answer ${request.label}`,
      delayMs: latency(),
      complete: () => {
        try {
          const output = result();
          journal.recordAnswer({
            worker,
            operation: request.operation,
            pk: request.pk,
            answer: 'ok',
            at: scheduler.now,
          });
          return output;
        } catch (error) {
          const name = error instanceof Error ? error.name : String(error);
          journal.recordAnswer({
            worker,
            operation: request.operation,
            pk: request.pk,
            answer: name,
            at: scheduler.now,
          });
          throw error;
        }
      },
      abandon: () => trace.add(scheduler.now, worker, `answer ${request.label}`, 'lost with its invocation'),
    });

  const send = (
    worker: string,
    request: ClaimTableRequest,
    apply: () => Output,
    attempt: number,
  ): Promise<Output> => {
    const throttled = random.chance(plan.dynamodbThrottleRate);
    const answerLost = !throttled && random.chance(plan.dynamodbAnswerLostRate);
    const retried = answerLost && attempt < SDK_MAX_ATTEMPTS && random.chance(plan.answerLostRetriedShare);
    return scheduler.schedule<Output>({
      worker,
      label: request.label,
      delayMs: latency(),
      complete: (): Output | Promise<Output> => {
        if (throttled) {
          faults.add('dynamodb-throttled');
          trace.add(scheduler.now, worker, request.label, 'throttled, not applied');
          return answer(worker, request, () => {
            throw throttlingError();
          });
        }
        const outcome = execute(worker, request, apply);
        const applied = describeOutcome(outcome);
        if (retried) {
          faults.add('dynamodb-answer-lost-retried');
          trace.add(scheduler.now, worker, request.label, `${applied}; answer lost, the SDK will retry`);
          return scheduler
            .sleep(worker, random.int(50, REQUEST_TIMEOUT_MS), `SDK retry wait ${request.label}`)
            .then((): Promise<Output> => send(worker, request, apply, attempt + 1));
        }
        if (answerLost) {
          faults.add('dynamodb-answer-lost-error');
          trace.add(scheduler.now, worker, request.label, `${applied}; answer lost (TimeoutError)`);
          return answer(worker, request, () => {
            throw timeoutError();
          });
        }
        trace.add(scheduler.now, worker, request.label, applied);
        return answer(worker, request, () => {
          if (outcome.ok) return outcome.output;
          throw outcome.error;
        });
      },
      // A request already on the wire when its invocation dies may still reach the table.
      abandon: () => {
        if (throttled || !random.chance(0.5)) {
          trace.add(
            scheduler.now,
            worker,
            request.label,
            'in flight when its invocation died: never applied',
          );
          return;
        }
        const applied = describeOutcome(execute(worker, request, apply));
        trace.add(scheduler.now, worker, request.label, `in flight when its invocation died: ${applied}`);
      },
    });
  };

  return (request: ModelRequest, apply: () => Output) =>
    send(scheduler.currentWorker, describeRequest(request), apply, 1);
}

function describeOutcome(outcome: Outcome): string {
  if (outcome.ok) return 'applied';
  const error = outcome.error as { name?: string; Item?: { state?: { S?: string } } };
  if (error.name === 'ConditionalCheckFailedException') {
    const state = error.Item?.state?.S;
    return state === undefined ? 'condition failed' : `condition failed (held: ${state})`;
  }
  return `failed: ${error.name ?? String(outcome.error)}`;
}

function throttlingError(): Error {
  return new ProvisionedThroughputExceededException({
    $metadata: { httpStatusCode: 400 },
    message: 'The level of configured provisioned throughput for the table was exceeded.',
  });
}

function timeoutError(): Error {
  const error = new Error('The request timed out: its answer was lost after DynamoDB applied it.');
  error.name = 'TimeoutError';
  return error;
}
