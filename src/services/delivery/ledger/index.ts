/** The send ledger: a send expanded into one row per recipient, rows claimed, their outcomes written, the counters and pauses those move. Other folders import this file, never the room's files. */
export { chooseWinner, decideDueAbTests, restStats, shownVariants, variantStats } from './ab-tests';
export { COUNTERS, countUnsubscribe, moveCounters } from './counters';
export { suppressedRowIds, unsubscribedOrSuppressed, withoutUnsubscribed, type Audience } from './do-not-mail';
export { countRecipients, membersOf, recipientsOf } from './expand';
export { LEDGER_COLUMNS, type LedgerRow } from './ledger-row';
export { localTimePlan, type LocalTimePlan } from './local-time';
export { LedgerWriter, Permits } from './ledger-writer';
export { completeSends, failedOutcome, IN_DOUBT_TWICE, recordOutcomes, writeLedger, type Outcome } from './outcomes';
export { pauseForPolicy, type PolicyPause } from './policy-refusals';
export { type Targets } from './recipient-refs';
export { startDueSingleSends, type StartHooks } from './start-sends';
export { suppressAddress } from './suppression-list';
