import type { JsonValue, WebhookEvent } from '../events/types.ts';

/** What the ledger needs from one `value.statuses[j]` item. */
export interface StatusObservation {
  /** The outbound message's id (`wamid.…`). */
  readonly wamid: string;
  readonly status: string;
  /** Epoch seconds of the status as Meta reports it. */
  readonly timestamp: number;
  /**
   * Group sends: the participant whose ledger entry this status belongs to, named as in the event key
   * (docs/design.md §1): `recipient_participant_id` (a phone number) where the status has it, else
   * `recipient_participant_user_id` (the participant's business-scoped user id). Undefined for one-to-one
   * sends. Handlers find both ids, and `recipient_user_id`, in the event's payload.
   */
  readonly recipientParticipantId: string | undefined;
}

export class MalformedStatusError extends Error {
  constructor(key: string, missing: string) {
    super(`Status event ${key} has no usable ${missing}.`);
    this.name = 'MalformedStatusError';
  }
}

function text(value: JsonValue | undefined): string | undefined {
  if (value === undefined || value === null || typeof value === 'object') {
    // LosslessNumber is an object with a string value; plain objects and arrays are not ids.
    return value !== null && value !== undefined && isLosslessNumber(value) ? value.toString() : undefined;
  }
  return String(value);
}

function isLosslessNumber(value: object): value is { isLosslessNumber: true; toString(): string } {
  return (value as { isLosslessNumber?: unknown }).isLosslessNumber === true;
}

/**
 * Reads a status event's payload. `nowSeconds` stands in for a missing or unreadable timestamp, so a status
 * is never lost for want of a time.
 */
export function observeStatus(event: WebhookEvent, nowSeconds: number): StatusObservation {
  const wamid = text(event.payload.id);
  if (wamid === undefined || wamid === '') throw new MalformedStatusError(event.key, 'id');
  const status = text(event.payload.status);
  if (status === undefined || status === '') throw new MalformedStatusError(event.key, 'status');
  const timestamp = Number(text(event.payload.timestamp));
  return {
    wamid,
    status,
    timestamp: Number.isFinite(timestamp) ? timestamp : nowSeconds,
    recipientParticipantId:
      nonEmpty(text(event.payload.recipient_participant_id)) ??
      nonEmpty(text(event.payload.recipient_participant_user_id)),
  };
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === '' ? undefined : value;
}
