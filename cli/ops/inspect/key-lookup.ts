/**
 * Looks up what the claim table holds for event keys of one subscriber: the claim under the subscriber's
 * namespace and, for a status, its status ledger entry. Shared by `key`, `keys` and `forget`.
 */

import {
  type EventSelection,
  limitsOrigin,
  wantsField,
  wantsOrigin,
} from 'whatsapp-webhook-dedup/contract/event-origin';
import { DEFAULT_SETTINGS } from 'whatsapp-webhook-dedup/contract/settings';
import { storageKey } from 'whatsapp-webhook-dedup/functions/claims/storage-key';
import {
  ledgerKey,
  StatusLedger,
  type StatusLedgerView,
} from 'whatsapp-webhook-dedup/functions/ledger/status-ledger';
import { ClaimRecords } from '../adapters/claim-records.ts';
import type { OpsTarget, SubscriberTarget } from '../target/ops-target.ts';
import { type ClaimView, viewClaim } from './claim-view.ts';
import type { EventKeyShape, KnownOrigin } from './event-key-shape.ts';

export interface LedgerEntry {
  readonly pk: string;
  readonly current: string | undefined;
  /** Status → ISO time Meta reported, for every status seen. */
  readonly times: Readonly<Record<string, string>>;
}

export interface KeyState {
  readonly key: string;
  readonly field: string;
  /** False when the subscriber's field filter keeps this field's events from it: it never claims them. */
  readonly receivesField: boolean;
  /**
   * Whether the subscriber's `numbers` and `wabas` let the event through (true without them); `undefined`
   * when the key does not tell (`msg:` and `st:` keys name no phone number or WABA).
   */
  readonly receivesOrigin: boolean | undefined;
  /** The event's phone number and WABA, as far as the key (or the body it came from) names them. */
  readonly origin: KnownOrigin;
  /** The claim's partition key (`<ns>#<key>`, or a digest for very long keys). */
  readonly pk: string;
  readonly claim: ClaimView | undefined;
  /** Status keys only; `current` undefined when no status of the message was recorded. */
  readonly ledger?: LedgerEntry;
}

/** Status ledger reads concurrently in flight; a body of 1000 statuses must not open 1000 requests. */
const LEDGER_READ_CONCURRENCY = 8;

export async function lookUpKeys(
  target: OpsTarget,
  subscriber: SubscriberTarget,
  shapes: readonly EventKeyShape[],
  nowMs: number,
): Promise<KeyState[]> {
  const claims = new ClaimRecords({ documentClient: target.documentClient, tableName: target.tableName });
  const pks = shapes.map((shape) => storageKey(shape.key, subscriber.keyNamespace));
  const found =
    shapes.length === 1 ? new Map(await readOne(claims, pks[0] as string)) : await claims.readMany(pks);
  const ledger = new StatusLedger({
    documentClient: target.documentClient,
    tableName: target.tableName,
    keyNamespace: subscriber.keyNamespace,
    // Only the ledger's writes use the retention; ops reads.
    retentionDays: DEFAULT_SETTINGS.retentionDays,
  });
  const ledgers = await readLedgers(ledger, subscriber, shapes);
  return shapes.map((shape, index) => {
    const pk = pks[index] as string;
    const snapshot = found.get(pk);
    return {
      key: shape.key,
      field: shape.field,
      receivesField: wantsField(subscriber.fields, shape.field),
      receivesOrigin: receivesOrigin(subscriber, shape.origin),
      origin: shape.origin,
      pk,
      claim: snapshot === undefined ? undefined : viewClaim(pk, snapshot, nowMs),
      ...(shape.ledger === undefined ? {} : { ledger: ledgers.get(ledgerPk(shape, subscriber)) }),
    };
  });
}

async function readOne(claims: ClaimRecords, pk: string) {
  const snapshot = await claims.read(pk);
  return snapshot === undefined ? [] : [[pk, snapshot] as const];
}

function ledgerPk(shape: EventKeyShape, subscriber: SubscriberTarget): string {
  const { wamid = '', recipientParticipantId } = shape.ledger ?? {};
  return ledgerKey(wamid, recipientParticipantId, subscriber.keyNamespace);
}

async function readLedgers(
  ledger: StatusLedger,
  subscriber: SubscriberTarget,
  shapes: readonly EventKeyShape[],
): Promise<Map<string, LedgerEntry>> {
  const wanted = new Map<string, NonNullable<EventKeyShape['ledger']>>();
  for (const shape of shapes) {
    if (shape.ledger !== undefined) wanted.set(ledgerPk(shape, subscriber), shape.ledger);
  }
  const entries = [...wanted];
  const result = new Map<string, LedgerEntry>();
  for (let start = 0; start < entries.length; start += LEDGER_READ_CONCURRENCY) {
    await Promise.all(
      entries
        .slice(start, start + LEDGER_READ_CONCURRENCY)
        .map(async ([pk, { wamid, recipientParticipantId }]) => {
          result.set(pk, toEntry(pk, await ledger.view(wamid, recipientParticipantId)));
        }),
    );
  }
  return result;
}

function toEntry(pk: string, view: StatusLedgerView | undefined): LedgerEntry {
  return {
    pk,
    current: view?.current,
    times: Object.fromEntries(
      Object.entries(view?.times ?? {})
        .sort(([, a], [, b]) => a - b)
        .map(([status, seconds]) => [status, new Date(seconds * 1000).toISOString()]),
    ),
  };
}

/**
 * Whether a subscriber's `numbers` and `wabas` let an event of `origin` through: the rule itself for an event
 * read from a body; from a key alone, yes when an id it names is listed, no only when every id that could
 * still let it through is known (a subscriber of `wabas` alone, and a key naming another WABA), else
 * `undefined`.
 */
export function receivesOrigin(selection: EventSelection, origin: KnownOrigin): boolean | undefined {
  if (!limitsOrigin(selection)) return true;
  if (wantsOrigin(selection, origin)) return true;
  if (origin.exact) return false;
  const unknownNumber = selection.numbers !== undefined && origin.phoneNumberId === undefined;
  const unknownWaba = selection.wabas !== undefined && origin.wabaId === undefined;
  return unknownNumber || unknownWaba ? undefined : false;
}

/** Whether the table holds anything of the key: a claim, or a status ledger with a current status. */
export function keyFound(state: KeyState): boolean {
  return state.claim !== undefined || state.ledger?.current !== undefined;
}
