import type { Knex } from 'knex';
import { liveContactTotalQuery } from '../../db/contact-counts';
import { toCount } from '../../db/dialect';
import { AUTOMATION_STATUS, SINGLE_SEND_STATUS } from '../../lib/constants';
import { timestamp } from '../../lib/time';
import type { Ctx, ServiceDeps } from '../context';

export interface AccountOverview {
  contacts: number;
  contactTypes: number;
  segments: number;
  senders: number;
  verifiedSenders: number;
  singleSends: number;
  sentSingleSends: number;
  automations: number;
  liveAutomations: number;
  delivered: number;
  uniqueOpens: number;
}

/** The account at a glance (the dashboard's home page), in one query of sub-selects. */
export interface RecentSend {
  utr: string;
  single_send_name: string;
  status: number;
  sent_at: string | null;
  delivered: number;
  unique_opens: number;
  updated_at: string | null;
}

export function createOverviewService({ db }: Pick<ServiceDeps, 'db'>) {
  return {
    /** The latest single sends of the account, for the home page. */
    async recentSends(ctx: Ctx, limit = 5): Promise<RecentSend[]> {
      const rows = await db('single_sends')
        .where({ user_id: ctx.userId })
        .whereNull('deleted_at')
        .orderBy('id', 'desc')
        .limit(limit)
        .select('utr', 'single_send_name', 'status', 'sent_at', 'delivered', 'unique_opens', 'updated_at');
      return rows.map((r) => ({
        utr: String(r.utr),
        single_send_name: String(r.single_send_name),
        status: Number(r.status),
        sent_at: timestamp(r.sent_at),
        delivered: toCount(r.delivered),
        unique_opens: toCount(r.unique_opens),
        updated_at: timestamp(r.updated_at),
      }));
    },

    async get(ctx: Ctx): Promise<AccountOverview> {
      const live = (table: string, where: Record<string, unknown> = {}) =>
        db(table).where({ user_id: ctx.userId, ...where }).whereNull('deleted_at');
      const count = (query: Knex.QueryBuilder) => query.count('*');
      const sum = (table: string, column: string) => live(table).sum(column);
      const row = await db
        .select({
          // The account's maintained counts: counting its contacts would read millions of index entries.
          contacts: liveContactTotalQuery(db, ctx.userId),
          contactTypes: count(live('contact_types')),
          segments: count(live('segments')),
          senders: count(live('senders')),
          verifiedSenders: count(live('senders', { is_verified: 1 })),
          singleSends: count(live('single_sends')),
          sentSingleSends: count(live('single_sends', { status: SINGLE_SEND_STATUS.completed })),
          automations: count(live('automations')),
          liveAutomations: count(live('automations', { status: AUTOMATION_STATUS.live })),
          delivered: sum('single_sends', 'delivered'),
          uniqueOpens: sum('single_sends', 'unique_opens'),
        })
        .first();
      return Object.fromEntries(Object.entries(row ?? {}).map(([key, value]) => [key, toCount(value)])) as unknown as AccountOverview;
    },
  };
}

export type OverviewService = ReturnType<typeof createOverviewService>;
