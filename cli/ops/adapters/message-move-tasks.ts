/**
 * SQS message move tasks (AWS only): SQS itself moves a DLQ's messages back to a queue, at its own pace,
 * without the messages passing through this machine. One task per source queue runs at a time.
 */
import {
  ListMessageMoveTasksCommand,
  type SQSClient,
  StartMessageMoveTaskCommand,
} from '@aws-sdk/client-sqs';

export interface MessageMoveTask {
  readonly taskHandle: string | undefined;
  /** `RUNNING`, `COMPLETED`, `CANCELLING`, `CANCELLED` or `FAILED`. */
  readonly status: string;
  readonly moved: number;
  /** Known once SQS has counted the source queue. */
  readonly toMove: number | undefined;
  readonly failureReason: string | undefined;
  readonly startedAt: number | undefined;
}

export const UNFINISHED_TASK_STATUSES: readonly string[] = ['RUNNING', 'CANCELLING'];

export class MessageMoveTasks {
  readonly #sqs: SQSClient;

  constructor(sqs: SQSClient) {
    this.#sqs = sqs;
  }

  /** Starts moving every message of `sourceArn` to `destinationArn`; returns the task handle. */
  async start(sourceArn: string, destinationArn: string): Promise<string> {
    const { TaskHandle } = await this.#sqs.send(
      new StartMessageMoveTaskCommand({ SourceArn: sourceArn, DestinationArn: destinationArn }),
    );
    if (TaskHandle === undefined) throw new Error('StartMessageMoveTask returned no task handle.');
    return TaskHandle;
  }

  /** The source queue's most recent tasks, newest first. */
  async list(sourceArn: string): Promise<MessageMoveTask[]> {
    const { Results = [] } = await this.#sqs.send(
      new ListMessageMoveTasksCommand({ SourceArn: sourceArn, MaxResults: 10 }),
    );
    return Results.map((task) => ({
      taskHandle: task.TaskHandle,
      status: task.Status ?? 'UNKNOWN',
      moved: task.ApproximateNumberOfMessagesMoved ?? 0,
      toMove: task.ApproximateNumberOfMessagesToMove,
      failureReason: task.FailureReason,
      startedAt: task.StartedTimestamp,
    }));
  }
}
