/** The seam between a sending worker and the ledger: claim, prepare, decide, send, record. Other folders import this file, never the room's files. */
export { decideClaim, type ClaimFacts, type Verdict } from './decide';
export { createSendLedger, type Claimed, type LedgerFeed, type MessageKind, type SendHooks, type SendLedger, type SendLedgerDeps, type SendLedgerOptions } from './send-ledger';
