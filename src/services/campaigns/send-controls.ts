import type { Knex } from 'knex';
import { domainStatusesOf, refuseUnauthenticated } from '../delivery/relays';
import type { SenderDomainStatus } from '../../lib/constants';
import { nowValue } from '../../db/dialect';
import { SINGLE_SEND_STATUS as S } from '../../lib/constants';
import { countRecipients, localTimePlan, recipientsOf, type LocalTimePlan } from '../delivery/ledger';
import { ConflictError, NotFoundError, ValidationError } from '../../lib/errors';
import { ZERO_DATE, ZERO_TIME } from '../../lib/time';
import { PAST_SCHEDULE_GRACE_MS, scheduledInstants } from './single-sends';
import { isUtr } from '../../lib/utr';
import type { Ctx, ServiceDeps } from '../context';
import { SINGLE_SEND_TRANSITIONS, SingleSendTransition, transitionSingleSends } from '../shared/single-send-state';
import { transitionMessages } from '../shared/message-state';
import { forUpdate } from '../../db/locking';
import { moveCounters } from '../delivery/ledger';
import { withoutUnsubscribed } from '../delivery/ledger';
import { IN_DOUBT_TWICE } from '../delivery/ledger';
import { AuditEntry, recordAudit, summaries } from '../shared/audit-writer';
import { SCHEDULE_LOCAL_TIME } from '../../lib/zoned-time';

/**
 * Pause, resume and cancel of a single send (API extensions
 * `GET /single/send/pause|resume|cancel?utr=`). Each is one transaction that changes the
 * send's status from an allowed one (decisions: a wrong state is a 409) and moves its ledger
 * rows: queued ones are parked (`paused`) or dropped (`cancelled`), parked ones queued again.
 * Rows a worker has claimed but not begun to send are parked or dropped by the worker's next
 * ledger write (writeLedger), so nothing goes out after the answer but what was already being
 * handed to the mail server; those finish and are counted. Resume continues exactly where the
 * send stopped: every parked row is queued again, none twice.
 */
export function createSendControlsService({ db, config }: Pick<ServiceDeps, 'db' | 'config'>) {
  /** One control in one transaction, recorded in the audit log as `action` when it changed something. */
  async function change(
    ctx: Ctx,
    utr: string,
    action: AuditEntry['action'],
    apply: (trx: Knex.Transaction, send: { id: number; status: number }) => Promise<void | false>,
    summary: (name: string) => string = (name) => name,
  ): Promise<void> {
    await db.transaction(async (trx) => {
      const send = isUtr(utr) ? await trx('single_sends').where({ user_id: ctx.userId, utr }).whereNull('deleted_at').first('id', 'status', 'single_send_name') : undefined;
      if (!send) throw new NotFoundError();
      if ((await apply(trx, { id: Number(send.id), status: Number(send.status) })) === false) return;
      await recordAudit(trx, ctx, { action, recordType: 'single_send', recordId: utr, summary: summary(String(send.single_send_name)) });
    });
  }

  async function transition(trx: Knex.Transaction, id: number, name: SingleSendTransition, refusal: string): Promise<void> {
    // A pause by a person, and any resume, leave no reason of the service's behind.
    if (!(await transitionSingleSends(trx('single_sends').where({ id }), name, { pause_reason: null, updated_at: nowValue() }))) throw new ConflictError(refusal);
  }

  const rows = (trx: Knex.Transaction, sendId: number) => trx('send_messages').where({ single_send_id: sendId });

  /** A draft of the account (404 otherwise) with what its confirm step needs. */
  async function draftOf(ctx: Ctx, utr: string) {
    const row = isUtr(utr) ? await db('single_sends').where({ user_id: ctx.userId, utr }).whereNull('deleted_at').first() : undefined;
    if (!row) throw new NotFoundError();
    return row as Record<string, unknown> & { id: number; status: number; user_id: number; unsubscribe_group_id: number; recipient_id: unknown; exclude_specific_recipient_id: unknown; schedule_type: number; schedule_date: string; schedule_time: string };
  }

  return {
    /** How many addresses the send would go to now, after its exclusions, unsubscribes and suppressions. */
    async recipientCount(ctx: Ctx, utr: string): Promise<number> {
      return countRecipients(db, await draftOf(ctx, utr));
    },

    /**
     * For a draft on each recipient's clock: how many recipients have no time zone and get the
     * account's, and when the first and last messages would go (the confirm step says so); undefined otherwise.
     */
    async localTimePlan(ctx: Ctx, utr: string, now: Date = new Date()): Promise<LocalTimePlan | undefined> {
      const row = await draftOf(ctx, utr);
      if (Number(row.schedule_type) !== SCHEDULE_LOCAL_TIME) return undefined;
      return localTimePlan(db, row, recipientsOf(db, row), now);
    },

    /** How the draft's From address stands (the confirm step warns when it is not verified). */
    async senderDomainStatus(ctx: Ctx, utr: string): Promise<SenderDomainStatus> {
      const row = await draftOf(ctx, utr);
      return (await domainStatusesOf(db, ctx.userId))(String(row.from_sender));
    },

    /**
     * The dashboard's confirm step: a draft (status 0) is sent now, or
     * scheduled for its saved date and time, which must be more than a minute ahead (422 on
     * `schedule_date` otherwise, as the API answers). Anything but a draft is a 409.
     */
    async confirm(ctx: Ctx, utr: string, when: 'now' | 'schedule'): Promise<void> {
      const row = await draftOf(ctx, utr);
      if (Number(row.status) !== S.initiate) throw new ConflictError('Only a draft can be sent or scheduled; this one already is.');
      await refuseUnauthenticated(db, config.domains.requireDomainAuth, ctx.userId, [String(row.from_sender)]);
      let changes: Record<string, unknown> = { due_at: nowValue(), schedule_type: 0, schedule_date: ZERO_DATE, schedule_time: ZERO_TIME };
      if (when === 'schedule') {
        if (Number(row.schedule_type) === 0) throw ValidationError.of('schedule_date', 'Choose a date and time for the send first.');
        const account = await db('accounts').where({ id: ctx.userId }).first('time_zone');
        const { due, last, passed } = scheduledInstants(Number(row.schedule_type), String(row.schedule_date), String(row.schedule_time), account?.time_zone ?? 'UTC');
        if (last.getTime() < Date.now() - PAST_SCHEDULE_GRACE_MS) throw ValidationError.of('schedule_date', passed);
        changes = { due_at: due.toISOString() };
      }
      await db.transaction(async (trx) => {
        if (!(await transitionSingleSends(trx('single_sends').where({ id: row.id }), 'confirm', { ...changes, updated_at: nowValue() }))) {
          throw new ConflictError('Only a draft can be sent or scheduled; this one already is.');
        }
        const summary = summaries.released(String(row.single_send_name), {
          now: when === 'now', date: String(row.schedule_date), time: String(row.schedule_time), recipientsClock: Number(row.schedule_type) === SCHEDULE_LOCAL_TIME,
        });
        await recordAudit(trx, ctx, { action: when === 'now' ? 'single_send.started' : 'single_send.scheduled', recordType: 'single_send', recordId: utr, summary });
      });
    },

    async pause(ctx: Ctx, utr: string): Promise<void> {
      await change(ctx, utr, 'single_send.paused', async (trx, send) => {
        await transition(trx, send.id, 'pause', 'Only a scheduled or sending single send can be paused.');
        await transitionMessages(rows(trx, send.id), 'pause', { updated_at: nowValue() });
      });
    },

    async resume(ctx: Ctx, utr: string): Promise<void> {
      await change(ctx, utr, 'single_send.resumed', async (trx, send) => {
        // A send paused before it started has no ledger rows nor an audience being written: it goes back to waiting for its time.
        const started = (await trx('single_sends').where({ id: send.id }).whereNotNull('expand_cursor').first('id')) ?? (await trx('send_messages').where({ single_send_id: send.id }).first('id'));
        await transition(trx, send.id, started ? 'resumeStarted' : 'resumeUnstarted', 'Only a paused single send can be resumed.');
        await transitionMessages(rows(trx, send.id), 'resume', { updated_at: nowValue() });
      });
    },

    /**
     * Retry of the failed (extension): the send's failed messages are queued again with their
     * attempts afresh, and the send runs again until the worker has tried them (it completes as
     * before). Left failed: a message that may already have gone out twice (never a third time),
     * and any whose address has been unsubscribed or suppressed since. Bounced and skipped
     * messages are never failed ones. Answers how many were queued.
     */
    async retryFailed(ctx: Ctx, utr: string): Promise<number> {
      let retried = 0;
      await change(ctx, utr, 'single_send.failed_retried', async (trx, send) => {
        // The send first, then its rows: the order of pause, resume and the worker's ledger writes.
        const row = await forUpdate(trx, trx('single_sends').where({ id: send.id }).first('status', 'unsubscribe_group_id'));
        if (!(SINGLE_SEND_TRANSITIONS.retryFailed.from as readonly number[]).includes(Number(row.status))) {
          throw new ConflictError('Only a sending or sent single send can retry its failed messages.');
        }
        const now = nowValue();
        const failed = withoutUnsubscribed(
          rows(trx, send.id).where((q) => q.whereNull('last_error').orWhereNot('last_error', IN_DOUBT_TWICE)),
          trx,
          { userId: ctx.userId, groupId: Number(row.unsubscribe_group_id) || null },
          'send_messages.email_key',
        );
        retried = Number(await transitionMessages(failed, 'retryFailed', {
          attempts: 0, unconfirmed: 0, lease_owner: null, available_at: now, smtp_code: null, last_error: null, bounce_class: null, failure_reason: null, updated_at: now,
        }));
        if (!retried) return false;
        await moveCounters(trx, { single_send_id: send.id, automation_id: null }, { failed: -retried });
        await transition(trx, send.id, 'retryFailed', 'Only a sending or sent single send can retry its failed messages.');
      }, (name) => summaries.retried(name, retried));
      return retried;
    },

    async cancel(ctx: Ctx, utr: string): Promise<void> {
      await change(ctx, utr, 'single_send.cancelled', async (trx, send) => {
        const refusal = send.status === S.completed ? 'This single send has already been sent.' : 'Only a scheduled, sending or paused single send can be cancelled.';
        await transition(trx, send.id, 'stop', refusal);
        await transitionMessages(rows(trx, send.id), 'cancel', { last_error: 'the send was cancelled', updated_at: nowValue() });
      });
    },
  };
}

export type SendControlsService = ReturnType<typeof createSendControlsService>;
