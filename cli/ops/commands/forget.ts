/**
 * `forget EVENT_KEY --yes [--force]`: deletes a claim so that the next delivery of its event runs the effect
 * again, for an effect a buggy handler acknowledged without doing it. Only a `done` (or expired) claim goes
 * without `--force`: deleting a claim in flight lets a second worker run the effect beside the first.
 * The delete is conditional on the claim being exactly as read.
 */

import type { ClaimSnapshot } from 'whatsapp-webhook-dedup/functions/claims/claim-record';
import { ClaimRecords } from '../adapters/claim-records.ts';
import { OpsError, UsageError } from '../errors.ts';
import { type ClaimStatus, type ClaimView, claimStatus } from '../inspect/claim-view.ts';
import { eventKeyShape } from '../inspect/event-key-shape.ts';
import { lookUpKeys } from '../inspect/key-lookup.ts';
import type { SubscriberTarget } from '../target/ops-target.ts';
import type { CommandContext } from './command-context.ts';

const FORGETTABLE: readonly ClaimStatus[] = ['done', 'expired'];

export async function forgetCommand(context: CommandContext, key: string, force: boolean): Promise<void> {
  const shape = eventKeyShape(key);
  const subscriber = context.subscriber();
  const { target } = context;
  const [state] = await lookUpKeys(target, subscriber, [{ ...shape, ledger: undefined }], context.clock());
  const claim = state?.claim;
  if (state === undefined || claim === undefined) {
    throw new UsageError(
      `no claim for ${key} (subscriber ${subscriber.name}, stored as ${state?.pk} in ${target.tableName}): nothing to forget`,
    );
  }
  if (!FORGETTABLE.includes(claim.status) && !force) {
    throw new OpsError(
      claim.status === 'in-flight'
        ? `${key} is in flight (lease until ${claim.leaseUntil}, held by message ${claim.messageId}): its worker may be running the effect now, and forgetting the claim could run it twice. Wait until it is done, or add --force`
        : `${key} is ${claim.status} (state ${claim.state}), not done: add --force to delete it anyway`,
    );
  }
  const outcome = await forgetClaim(context, subscriber, key, state.pk, claim, { force });
  if (outcome.forgotten === undefined) {
    const now = outcome.now === undefined ? 'gone' : claimStatus(outcome.now, context.clock());
    throw new OpsError(`${key} changed while it was read (now ${now}): nothing deleted; look again with key`);
  }
  context.output.result({ forgotten: outcome.forgotten }, [
    `forgot ${key} (subscriber ${subscriber.name}, stored as ${state.pk}, was ${claim.status}${claim.doneAt === undefined ? '' : ` since ${claim.doneAt}`})`,
    'the next delivery of this event runs its effect again',
  ]);
}

export interface ForgottenClaim {
  readonly key: string;
  readonly pk: string;
  readonly subscriber: string;
  readonly tableName: string;
  readonly previousStatus: ClaimStatus;
  readonly attempts: number | undefined;
  readonly doneAt: string | undefined;
  readonly messageId: string | undefined;
  readonly forced: boolean;
}

/**
 * Deletes one claim exactly as it was read and writes the `ops forget` audit line (`by` names another command
 * forgetting on the operator's behalf, such as `replay --rerun`); `now` is the claim found instead when it
 * changed in between, and nothing was deleted.
 */
export async function forgetClaim(
  context: Pick<CommandContext, 'target' | 'output'>,
  subscriber: SubscriberTarget,
  key: string,
  pk: string,
  claim: ClaimView,
  options: { readonly force: boolean; readonly by?: string },
): Promise<{ readonly forgotten?: ForgottenClaim; readonly now?: ClaimSnapshot }> {
  const { target } = context;
  const outcome = await new ClaimRecords({
    documentClient: target.documentClient,
    tableName: target.tableName,
  }).deleteAsRead(pk, claim);
  if (!outcome.deleted) return { now: outcome.now };
  const forgotten: ForgottenClaim = {
    key,
    pk,
    subscriber: subscriber.name,
    tableName: target.tableName,
    previousStatus: claim.status,
    attempts: claim.attempt,
    doneAt: claim.doneAt,
    messageId: claim.messageId,
    forced: options.force && !FORGETTABLE.includes(claim.status),
  };
  context.output.record('forget', {
    ...forgotten,
    by: options.by,
    target: target.description,
  });
  return { forgotten };
}
