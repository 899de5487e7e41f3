/**
 * `GET /local/ledger/<wamid>` for group sends (docs/design.md §3: one ledger per participant): which
 * participants of an outbound message have a ledger entry, found by a scan of the claim table. A scan is fine
 * on the local stack's table and the reason this lives here: the deployed consumer only ever reads one entry by
 * its key.
 */
import { type DynamoDBDocumentClient, paginateScan } from '@aws-sdk/lib-dynamodb';
import { storageKey } from 'whatsapp-webhook-dedup/functions/claims/storage-key';

export interface LedgerParticipantsQuery {
  readonly documentClient: DynamoDBDocumentClient;
  readonly tableName: string;
  /** The subscriber's claim namespace: only its ledger entries count. */
  readonly keyNamespace: string | undefined;
}

/**
 * The participant ids (phone number, else BSUID, as in the event key) that have a ledger entry for `wamid`, in
 * string order; empty for a one-to-one send.
 */
export async function ledgerParticipants(query: LedgerParticipantsQuery, wamid: string): Promise<string[]> {
  const participants = new Set<string>();
  const pages = paginateScan(
    { client: query.documentClient },
    {
      TableName: query.tableName,
      ConsistentRead: true,
      // Items store their wamid and participant beside the key; the key prefix keeps other namespaces out.
      FilterExpression:
        'wamid = :wamid AND attribute_exists(recipientParticipantId) AND begins_with(pk, :prefix)',
      ExpressionAttributeValues: { ':wamid': wamid, ':prefix': storageKey('ledger:', query.keyNamespace) },
      ProjectionExpression: 'recipientParticipantId',
    },
  );
  for await (const page of pages) {
    for (const item of page.Items ?? []) {
      const participant = item.recipientParticipantId;
      if (typeof participant === 'string' && participant !== '') participants.add(participant);
    }
  }
  return [...participants].sort();
}
