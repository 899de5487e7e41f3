/**
 * The alarms of a deployed stack and their states: the stack's `AWS::CloudWatch::Alarm` resources (their
 * physical ids are the alarm names) read with CloudWatch DescribeAlarms, so that alarms of another stack with
 * a similar name are never shown.
 */
import {
  type CloudFormationClient,
  paginateListStackResources,
  type StackResourceSummary,
} from '@aws-sdk/client-cloudformation';
import { type CloudWatchClient, DescribeAlarmsCommand, type MetricAlarm } from '@aws-sdk/client-cloudwatch';

export interface AlarmState {
  readonly name: string;
  /** `OK`, `ALARM` or `INSUFFICIENT_DATA`. */
  readonly state: string;
  readonly reason: string | undefined;
  /** ISO time of the last state change. */
  readonly since: string | undefined;
}

/** DescribeAlarms takes at most 100 names per call. */
const NAMES_PER_CALL = 100;

export class StackAlarms {
  readonly #cloudFormation: CloudFormationClient;
  readonly #cloudWatch: CloudWatchClient;

  constructor(cloudFormation: CloudFormationClient, cloudWatch: CloudWatchClient) {
    this.#cloudFormation = cloudFormation;
    this.#cloudWatch = cloudWatch;
  }

  async states(stackName: string): Promise<AlarmState[]> {
    const names: string[] = [];
    const pages = paginateListStackResources({ client: this.#cloudFormation }, { StackName: stackName });
    for await (const page of pages) {
      for (const resource of page.StackResourceSummaries ?? []) {
        if (isAlarm(resource) && resource.PhysicalResourceId) names.push(resource.PhysicalResourceId);
      }
    }
    const alarms: MetricAlarm[] = [];
    for (let start = 0; start < names.length; start += NAMES_PER_CALL) {
      const { MetricAlarms = [] } = await this.#cloudWatch.send(
        new DescribeAlarmsCommand({
          AlarmNames: names.slice(start, start + NAMES_PER_CALL),
          AlarmTypes: ['MetricAlarm', 'CompositeAlarm'],
          MaxRecords: NAMES_PER_CALL,
        }),
      );
      alarms.push(...MetricAlarms);
    }
    return alarms
      .map((alarm) => ({
        name: alarm.AlarmName ?? '',
        state: alarm.StateValue ?? 'UNKNOWN',
        reason: alarm.StateReason,
        since: alarm.StateUpdatedTimestamp?.toISOString(),
      }))
      .sort((a, b) => a.name.localeCompare(b.name));
  }
}

function isAlarm(resource: StackResourceSummary): boolean {
  return resource.ResourceType === 'AWS::CloudWatch::Alarm';
}
