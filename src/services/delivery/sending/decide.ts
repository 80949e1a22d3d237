import { IN_DOUBT_TWICE, UNSUBSCRIBED_OR_SUPPRESSED, type LedgerRow, type Outcome } from '../ledger';

/** What the ledger knows of one claimed row once its batch is prepared. */
export interface ClaimFacts {
  row: Pick<LedgerRow, 'id' | 'attempts' | 'unconfirmed'>;
  /** Its address was unsubscribed or suppressed, or its contact deleted, after it was queued. */
  unmailable: boolean;
  /** Why, when it is unmailable for a list (the instance's bounce list says so; by default the account's lists). */
  unmailableReason?: string;
}

/** Whether a claimed message goes now; if not, the outcome recorded instead (skipped, or back to wait). */
export type Verdict = { verdict: 'go' } | { verdict: 'skip' | 'wait'; outcome: Outcome };

/**
 * The rules a claimed message passes before it is handed over, in order: nobody is written to
 * who left the list meanwhile; a row the worker kept dying on gives up; a message that was in
 * flight at two crashes may have gone out twice and never goes a third time.
 */
export function decideClaim({ row, unmailable, unmailableReason }: ClaimFacts, maxAttempts: number): Verdict {
  const id = Number(row.id);
  if (unmailable) return { verdict: 'skip', outcome: { id, result: 'suppressed', error: unmailableReason ?? UNSUBSCRIBED_OR_SUPPRESSED } };
  if (row.attempts > maxAttempts) {
    // Recorded as a retry, which at this many attempts is final.
    return { verdict: 'wait', outcome: { id, result: 'retry', attempts: row.attempts, code: null, error: 'too many attempts (the worker stopped while sending)' } };
  }
  if (Number(row.unconfirmed) >= 2) return { verdict: 'skip', outcome: { id, result: 'failed', error: IN_DOUBT_TWICE } };
  return { verdict: 'go' };
}
