import type { Knex } from 'knex';
import { skipLocked } from '../../../db/locking';
import { MESSAGE_STATE, SendPauseReason, SINGLE_SEND_STATUS } from '../../../lib/constants';
import { transitionSingleSends } from '../../shared/single-send-state';
import { startAbTest, waitingAbTestOf } from './ab-tests';
import { expandSingleSend, resendOf } from './expand';
import { completeSingleSends } from './outcomes';
import { parseTargets } from './recipient-refs';
import { unauthenticatedError } from '../relays';

export interface StartedSend {
  id: number;
  userId: number;
  name: string;
  recipients: number;
  /** True when it had nobody to send to and completed at once. */
  completed: boolean;
}

/**
 * Starts the single sends that are due: in one transaction per send, status 1 → 2, `sent_at`,
 * the ledger rows and `triggered`. A crash rolls all of it back and the send is started again;
 * on PostgreSQL a send being started by another worker is skipped, not waited for.
 */
export interface StartHooks {
  /** Called inside the transaction that starts the send, so the event is never lost. */
  singleSendStarted?(send: StartedSend, trx: Knex.Transaction): Promise<void>;
  singleSendCompleted?(sendId: number, trx: Knex.Transaction): Promise<void>;
  /** Brings the rule members of the targeted and excluded segments up to date before expansion. */
  refreshSegments?(userId: number, segmentIds: number[], trx: Knex.Transaction): Promise<void>;
  /** A due send was paused instead of started: its From domain is not authenticated (REQUIRE_DOMAIN_AUTH). */
  singleSendRefusedUnauthenticated?(send: RefusedSend, trx: Knex.Transaction): Promise<void>;
}

/** A due send paused at its start because its sender's domain is not authenticated. */
export interface RefusedSend {
  id: number;
  userId: number;
  name: string;
  fromEmail: string;
}

export interface StartOptions {
  /** REQUIRE_DOMAIN_AUTH: a send is started only while its From domain is verified. */
  requireDomainAuth?: boolean;
  /** Sends started (or paused) per call at most. */
  limit?: number;
}

export async function startDueSingleSends(db: Knex, now: Date, hooks: StartHooks = {}, options: StartOptions = {}): Promise<StartedSend[]> {
  const started: StartedSend[] = [];
  const at = now.toISOString();
  const limit = options.limit ?? 10;
  for (let i = 0; i < limit; i += 1) {
    const send = await db.transaction(async (trx): Promise<StartedSend | 'paused' | undefined> => {
      const row = await skipLocked(
        db,
        trx('single_sends')
          .where({ status: SINGLE_SEND_STATUS.ready })
          .whereNull('deleted_at')
          .whereNotNull('due_at')
          .where('due_at', '<=', at)
          .orderBy('due_at')
          .first('*'),
      );
      if (!row) return undefined;
      // The rule holds when the mail goes, not only when the send was saved: a domain may have
      // stopped being verified since. Paused with nothing written, it starts afresh when resumed.
      if (options.requireDomainAuth && (await unauthenticatedError(trx, true, Number(row.user_id), [String(row.from_sender)]))) {
        if (!(await transitionSingleSends(trx('single_sends').where({ id: row.id }), 'pause', { pause_reason: 'unauthenticated' satisfies SendPauseReason, updated_at: at }))) return undefined;
        await hooks.singleSendRefusedUnauthenticated?.({ id: Number(row.id), userId: Number(row.user_id), name: String(row.single_send_name), fromEmail: String(row.from_sender) }, trx);
        return 'paused';
      }
      const changed = await transitionSingleSends(trx('single_sends').where({ id: row.id }), 'start', { sent_at: at, updated_at: at });
      if (!changed) return undefined;
      // A resend's audience is its original's ledger: only its excluded segments are read.
      const targeted = resendOf(row) ? [] : parseTargets(row.recipient_id).segmentIds;
      const segmentIds = [...targeted, ...parseTargets(row.exclude_specific_recipient_id).segmentIds];
      if (segmentIds.length > 0) await hooks.refreshSegments?.(Number(row.user_id), [...new Set(segmentIds)], trx);
      // An A/B test's audience is written held and only its test share queued now.
      const abTest = await waitingAbTestOf(trx, Number(row.id));
      const written = await expandSingleSend(trx, row, at, abTest ? MESSAGE_STATE.held : MESSAGE_STATE.queued);
      const recipients = abTest ? await startAbTest(trx, abTest, written, at) : written;
      await trx('single_sends').where({ id: row.id }).update({ triggered: recipients });
      const completed = (await completeSingleSends(trx, [row.id], at)).length > 0;
      const started = { id: Number(row.id), userId: Number(row.user_id), name: String(row.single_send_name), recipients, completed };
      await hooks.singleSendStarted?.(started, trx);
      if (completed) await hooks.singleSendCompleted?.(started.id, trx);
      return started;
    });
    if (!send) break;
    if (send !== 'paused') started.push(send);
  }
  return started;
}
