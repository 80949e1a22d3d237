/** The send ledger: a send expanded into one row per recipient, rows claimed, their outcomes written, the counters and pauses those move. Other folders import this file, never the room's files. */
export { chooseWinner, decideDueAbTests, restStats, shownVariants, variantStats } from './ab-tests';
export { queueAutomationStep, type StepSource } from './automation-steps';
export { COUNTERS, countUnsubscribe, moveCounters } from './counters';
export { suppressedRowIds, UNSUBSCRIBED_OR_SUPPRESSED, unsubscribedOrSuppressed, withoutUnsubscribed, type Audience } from './do-not-mail';
export { audienceSources, batchEnd, batchRecipients, countRecipients, membersOf, recipientsOf } from './expand';
export { expandRunningSends } from './expansion';
export { instanceBounceList, listInstanceBounce, ON_INSTANCE_BOUNCE_LIST, type InstanceBounceList } from './instance-bounces';
export { LEDGER_COLUMNS, type LedgerRow } from './ledger-row';
export { localTimePlan, type LocalTimePlan } from './local-time';
export { LedgerWriter, Permits } from './ledger-writer';
export { completeSends, failedOutcome, IN_DOUBT_TWICE, recordOutcomes, writeLedger, type Outcome } from './outcomes';
export { pauseForPolicy, type PolicyPause } from './policy-refusals';
export { type Targets } from './recipient-refs';
export { startDueSingleSends, type StartHooks } from './start-sends';
export { suppressAddress } from './suppression-list';
