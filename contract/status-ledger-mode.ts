/**
 * When the consumer records statuses in the status ledger (docs/design.md §3): `with-handler` only when an
 * `onStatus` handler exists, `always` for every status (for the ledger view alone).
 */
export const STATUS_LEDGER_MODES = ['with-handler', 'always'] as const;
export type StatusLedgerMode = (typeof STATUS_LEDGER_MODES)[number];
