/**
 * Names the consumer's DynamoDB requests from their raw input, for the trace and the invariants: a claim
 * (the conditional PutItem of DESIGN §2), a completion, a release, a ledger write, or a read.
 */
import type { ModelRequest } from './dynamodb/model-document-client.ts';

export type ClaimTableOperation = 'claim' | 'complete' | 'release' | 'ledger' | 'read' | 'other';

export interface ClaimTableRequest {
  readonly operation: ClaimTableOperation;
  /** The item's partition key (the event key, or `ledger:<wamid>`). */
  readonly pk: string;
  readonly label: string;
}

interface RawInput {
  readonly Item?: { readonly pk?: { readonly S?: string } };
  readonly Key?: { readonly pk?: { readonly S?: string } };
  readonly ExpressionAttributeValues?: Readonly<Record<string, unknown>>;
}

export function describeRequest(request: ModelRequest): ClaimTableRequest {
  const input = request.input as RawInput;
  const pk = input.Item?.pk?.S ?? input.Key?.pk?.S ?? '?';
  const operation = operationOf(request.commandName, pk, input);
  return { operation, pk, label: `${operation} ${pk}` };
}

function operationOf(commandName: string, pk: string, input: RawInput): ClaimTableOperation {
  switch (commandName) {
    case 'PutItemCommand':
      return 'claim';
    case 'DeleteItemCommand':
      return 'release';
    case 'GetItemCommand':
      return 'read';
    case 'UpdateItemCommand':
      if (isLedgerKey(pk)) return 'ledger';
      return input.ExpressionAttributeValues?.[':done'] === undefined ? 'other' : 'complete';
    default:
      return 'other';
  }
}

/** `ledger:<wamid>`, possibly behind a `<ns>#` prefix. */
export function isLedgerKey(pk: string): boolean {
  return pk.startsWith('ledger:') || pk.includes('#ledger:');
}
