import { likeOperator, likePattern } from '../../../db/expressions';
import { nowValue } from '../../../db/dialect';
import { listPage, Paging } from '../../../db/paging';
import { NotFoundError } from '../../../lib/errors';
import { emailKey } from '../../../lib/email-key';
import { FEEDBACK_EVENT, SuppressionReason } from '../../../lib/constants';
import { timestamp } from '../../../lib/time';
import type { BounceClass } from '../../../lib/bounce-class';
import { suppressAddress } from '../ledger';
import type { Ctx, ServiceDeps } from '../../context';
import { recordAudit } from '../../shared/audit-writer';

export interface SuppressionRecord {
  id: number;
  user_id: number;
  email_address: string;
  reason: SuppressionReason;
  /** The class of the refusal that suppressed it; null for complaints and hand-made ones. */
  bounce_class: BounceClass | null;
  diagnostic: string;
  source: string;
  created_at: string | null;
}

export function suppressionRecord(row: Record<string, unknown>): SuppressionRecord {
  return {
    id: Number(row.id),
    user_id: Number(row.user_id),
    email_address: String(row.email_address ?? row.email_key),
    reason: String(row.category ?? 'hard_bounce') as SuppressionReason,
    bounce_class: row.bounce_class ? (String(row.bounce_class) as BounceClass) : null,
    diagnostic: String(row.reason ?? ''),
    source: String(row.source ?? 'smtp'),
    created_at: timestamp(row.created_at),
  };
}

/**
 * The account's suppression list: addresses that bounced or complained (written by the ledger
 * as reports arrive, see record-feedback.ts) or were added by hand. Reinstating removes the
 * address (and its soft-bounce count), so the next send mails it again.
 */
export function createSuppressionsService({ db }: Pick<ServiceDeps, 'db'>) {
  return {
    async list(ctx: Ctx, paging?: Paging, search?: string, bounceClass?: BounceClass) {
      const query = db('suppressed_addresses').where({ user_id: ctx.userId }).orderBy('id', 'desc');
      if (bounceClass) query.where({ bounce_class: bounceClass });
      if (search) query.whereRaw(`email_key ${likeOperator(db)} ? escape '\\'`, [likePattern(search.toLowerCase(), 'contains')]);
      return listPage(query, paging, suppressionRecord);
    },

    /** Adds addresses by hand (reason `manual`); one already suppressed keeps its record. */
    async add(ctx: Ctx, addresses: string[], source: 'api' | 'dashboard'): Promise<void> {
      const now = nowValue();
      await db.transaction(async (trx) => {
        for (const email of addresses) {
          await suppressAddress(trx, { userId: ctx.userId, email, emailKey: emailKey(email), category: 'manual', diagnostic: 'added by hand', source, now });
        }
        await recordAudit(trx, ctx, { action: 'suppression.added', recordType: 'suppression', summary: addresses.length === 1 ? addresses[0] : `${addresses.length} addresses` }, now);
      });
    },

    /** Reinstates addresses: they are mailed again, and their soft bounces so far no longer count. */
    async remove(ctx: Ctx, ids: number[]): Promise<void> {
      await db.transaction(async (trx) => {
        const rows = await trx('suppressed_addresses').where({ user_id: ctx.userId }).whereIn('id', ids).select('id', 'email_key');
        if (!rows.length) throw new NotFoundError();
        await trx('suppressed_addresses').whereIn('id', rows.map((r) => r.id)).delete();
        await trx('message_feedback')
          .where({ user_id: ctx.userId, event: FEEDBACK_EVENT.bounce, permanent: 0 })
          .whereIn('email_key', rows.map((r) => r.email_key))
          .delete();
        await recordAudit(trx, ctx, { action: 'suppression.removed', recordType: 'suppression', recordId: rows.length === 1 ? Number(rows[0].id) : null, summary: `${rows.length} ${rows.length === 1 ? 'address' : 'addresses'} reinstated` });
      });
    },
  };
}

export type SuppressionsService = ReturnType<typeof createSuppressionsService>;
