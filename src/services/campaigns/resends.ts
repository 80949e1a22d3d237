import type { Knex } from 'knex';
import { insertId, jsonValue, nowValue, parseJson } from '../../db/dialect';
import { LIMITS, SINGLE_SEND_STATUS as S } from '../../lib/constants';
import { ConflictError, NotFoundError, ValidationError } from '../../lib/errors';
import { ZERO_DATE, ZERO_TIME } from '../../lib/time';
import { isUtr, newUtr } from '../../lib/utr';
import { zonedToUtc } from '../../lib/zoned-time';
import { countRecipients, shownVariants } from '../delivery/ledger';
import type { Ctx, ServiceDeps } from '../context';
import { recordAudit } from '../shared/audit-writer';
import { COPIED, PAST_SCHEDULE_GRACE_MS, SCHEDULE_IN_PAST } from './single-sends';
import { SINGLE_SEND_TRANSITIONS } from '../shared/single-send-state';

/** A resend's own choices; everything else is the original's. */
export interface ResendInput {
  /** Another subject (a resend often says so); the original's when absent. */
  subject?: string;
  /** Absent: a draft (status 0), sent from the dashboard or by an update. 0: at once. 1: at its date and time. */
  schedule_type?: 0 | 1;
  /** `YYYY-MM-DD` and `HH:MM:SS` in the account's time zone, when schedule_type is 1. */
  schedule_date?: string;
  schedule_time?: string;
}

const ONLY_COMPLETED = 'Only a sent single send can be resent to those who did not open it; wait until it has completed.';

/**
 * Resend to non-openers: a new single send copying a completed one's content and settings, whose
 * audience is the original's messages that were delivered and not opened by a person, less
 * whoever unsubscribed, was suppressed or bounced since. The audience is stored as the
 * original's id (`resend_of`) and read from its ledger when the resend starts (expand.ts
 * nonOpenersOf), so it is exact at that moment and never held as a list.
 */
export function createResendsService({ db }: Pick<ServiceDeps, 'db'>) {
  /**
   * Makes `resendId` the send's one resend, in the UPDATE itself: only while it has none, or the
   * one it has was deleted (a send resent before `resent_as` existed counts its live resend).
   * A concurrent request's resend, committed or not, makes this match nothing (PostgreSQL waits
   * for its row lock and reads the row again; SQLite has one writer at a time).
   */
  async function claimResend(trx: Knex.Transaction, originalId: number, resendId: number): Promise<boolean> {
    const deleted = trx('single_sends').whereNotNull('deleted_at').select('id');
    const otherLive = trx('single_sends as r').where('r.resend_of', originalId).whereNot('r.id', resendId).whereNull('r.deleted_at').select(trx.raw('1'));
    const changed = await trx('single_sends')
      .where({ id: originalId })
      .where((q) => q.whereNull('resent_as').orWhereIn('resent_as', deleted))
      .whereNotExists(otherLive)
      .update({ resent_as: resendId });
    return Number(changed) === 1;
  }

  /** The utr of the send's live resend other than `ownId` (the newest, should an old database hold several). */
  async function liveResendUtr(trx: Knex.Transaction, originalId: number, ownId: number): Promise<string> {
    const row = await trx('single_sends').where({ resend_of: originalId }).whereNot('id', ownId).whereNull('deleted_at').orderBy('id', 'desc').first('utr');
    return String(row?.utr ?? '');
  }

  async function completedOriginal(ctx: Ctx, utr: string): Promise<Record<string, unknown>> {
    const row = isUtr(utr) ? await db('single_sends').where({ user_id: ctx.userId, utr }).whereNull('deleted_at').first() : undefined;
    if (!row) throw new NotFoundError();
    if (Number(row.status) !== S.completed) throw new ConflictError(ONLY_COMPLETED);
    return row;
  }

  /** The resend's audience as if it started now (the original's columns with itself as the source). */
  const audienceOf = (original: Record<string, unknown>) => ({
    user_id: Number(original.user_id),
    recipient_id: original.recipient_id,
    exclude_specific_recipient_id: original.exclude_specific_recipient_id,
    unsubscribe_group_id: Number(original.unsubscribe_group_id),
    resend_of: Number(original.id),
  });

  return {
    /**
     * The subject a resend proposes: the one most recipients of the original got, which for an
     * A/B test is its shown variant's (the winner's, see shownVariants), else the send's.
     */
    async proposedSubject(ctx: Ctx, utr: string): Promise<string> {
      const original = await completedOriginal(ctx, utr);
      const variant = (await shownVariants(db, [Number(original.id)])).get(Number(original.id));
      if (variant === undefined) return String(original.subject);
      const own = await db('ab_variants as v').join('ab_tests as t', 't.id', 'v.ab_test_id').where({ 't.single_send_id': Number(original.id), 'v.variant': variant }).first('v.subject');
      return String(own?.subject ?? original.subject);
    },

    /** How many would receive a resend started now: the dashboard shows it before one is made. */
    async nonOpenerCount(ctx: Ctx, utr: string): Promise<number> {
      return countRecipients(db, audienceOf(await completedOriginal(ctx, utr)));
    },

    /** Creates the resend (a draft, due now, or scheduled); answers its utr. */
    async resend(ctx: Ctx, utr: string, input: ResendInput): Promise<string> {
      const original = await completedOriginal(ctx, utr);
      const now = nowValue();
      let schedule = { status: SINGLE_SEND_TRANSITIONS.saveDraft.to as number, due_at: null as string | null, schedule_type: 0, schedule_date: ZERO_DATE, schedule_time: ZERO_TIME };
      if (input.schedule_type === 0) schedule = { ...schedule, status: SINGLE_SEND_TRANSITIONS.save.to, due_at: now };
      if (input.schedule_type === 1) {
        const account = await db('accounts').where({ id: ctx.userId }).first('time_zone');
        const date = input.schedule_date ?? ZERO_DATE;
        const time = input.schedule_time ?? ZERO_TIME;
        const due = zonedToUtc(date, time, account?.time_zone ?? 'UTC');
        if (due.getTime() < Date.now() - PAST_SCHEDULE_GRACE_MS) throw ValidationError.of('schedule_date', SCHEDULE_IN_PAST);
        schedule = { status: SINGLE_SEND_TRANSITIONS.save.to, due_at: due.toISOString(), schedule_type: 1, schedule_date: date, schedule_time: time };
      }
      const copyUtr = newUtr();
      const copyName = `Resend of ${original.single_send_name}`.slice(0, LIMITS.string);
      await db.transaction(async (trx) => {
        const copyId = await insertId(trx, 'single_sends', {
          ...Object.fromEntries(COPIED.map((name) => [name, original[name]])),
          ...schedule,
          recipient_id: jsonValue(parseJson(original.recipient_id, [])),
          exclude_specific_recipient_id: jsonValue(parseJson(original.exclude_specific_recipient_id, [])),
          subject: input.subject ?? original.subject,
          single_send_name: copyName,
          resend_of: original.id,
          user_id: ctx.userId,
          utr: copyUtr,
          created_at: now,
          updated_at: now,
        });
        if (!(await claimResend(trx, Number(original.id), copyId))) {
          throw new ConflictError(`This single send already has a resend to those who did not open it: ${await liveResendUtr(trx, Number(original.id), copyId)}.`);
        }
        const when = input.schedule_type === 0 ? 'sent now' : input.schedule_type === 1 ? 'scheduled' : 'saved as a draft';
        await recordAudit(trx, ctx, { action: 'single_send.resent', recordType: 'single_send', recordId: copyUtr, summary: `${copyName} (to non-openers of ${utr}, ${when})` }, now);
      });
      return copyUtr;
    },
  };
}

export type ResendsService = ReturnType<typeof createResendsService>;
