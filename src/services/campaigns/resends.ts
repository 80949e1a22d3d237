import { insertId, jsonValue, nowValue, parseJson } from '../../db/dialect';
import { LIMITS, SINGLE_SEND_STATUS as S } from '../../lib/constants';
import { ConflictError, NotFoundError, ValidationError } from '../../lib/errors';
import { ZERO_DATE, ZERO_TIME } from '../../lib/time';
import { isUtr, newUtr } from '../../lib/utr';
import { zonedToUtc } from '../../lib/zoned-time';
import { countRecipients } from '../delivery/ledger';
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
        await insertId(trx, 'single_sends', {
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
        const when = input.schedule_type === 0 ? 'sent now' : input.schedule_type === 1 ? 'scheduled' : 'saved as a draft';
        await recordAudit(trx, ctx, { action: 'single_send.resent', recordType: 'single_send', recordId: copyUtr, summary: `${copyName} (to non-openers of ${utr}, ${when})` }, now);
      });
      return copyUtr;
    },
  };
}

export type ResendsService = ReturnType<typeof createResendsService>;
