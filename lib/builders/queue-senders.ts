import { AnyPrincipal, Effect, type IRole, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';

/**
 * Denies `sqs:SendMessage` on `queue` to every principal but `senders`, whatever their identity policies
 * allow: what sits in the quarantine or archive queue can be sent back in by `ops`, so an administrator's
 * broad role, or another function in the account, must not be able to plant a body there. (The proof check in
 * `ops` is what refuses a body planted by one of the senders themselves.)
 */
export function onlyTheseSend(queue: IQueue, senders: readonly IRole[]): void {
  queue.addToResourcePolicy(
    new PolicyStatement({
      sid: 'OnlyThePipelineSends',
      effect: Effect.DENY,
      principals: [new AnyPrincipal()],
      actions: ['sqs:SendMessage'],
      resources: [queue.queueArn],
      conditions: { ArnNotEquals: { 'aws:PrincipalArn': senders.map((role) => role.roleArn) } },
    }),
  );
}
