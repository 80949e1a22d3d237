import { toCount } from '../../db/dialect';
import { idChunks, listPage, ListResult, Paging } from '../../db/paging';
import { utcHour } from '../../db/time-buckets';
import { plainDateTime } from '../../lib/time';
import type { Ctx, ServiceDeps } from '../context';
import { fillBuckets, OpenBucket } from './send-insights';
import { recordAudit } from '../shared/audit-writer';

/** Whose engagement: one single send, or every step of one automation. */
export type EngagementOwner = { singleSendId: number } | { automationId: number };

export interface LinkStats {
  url: string;
  unique_clicks: number;
  total_clicks: number;
}

export type PeopleKind = 'opened' | 'clicked';
export const PEOPLE_KINDS: readonly PeopleKind[] = ['opened', 'clicked'];

/** One recipient who opened or clicked. */
export interface EngagedPerson {
  id: number;
  email: string;
  /** First open (`YYYY-MM-DD HH:MM:SS` UTC), of any kind; null if none. */
  opened_at: string | null;
  /** True when every open so far came from a proxy or scanner (see src/lib/automated-opens.ts). */
  automated_only: boolean;
  clicked_at: string | null;
  clicks: number;
}

/** The counts beside the reference's statistics that the dashboard shows. */
export interface EngagementSummary {
  /** Unique opens not made by a proxy or scanner ("opens excluding automated"). */
  humanOpens: number;
}

/**
 * What the dashboard shows about engagement with a send or an automation: its links with their
 * clicks, opens and clicks over time, and who opened or clicked (a page, or every row in chunks
 * for a CSV download). Every query is scoped to the account.
 */
export function createEngagementService({ db }: Pick<ServiceDeps, 'db'>) {
  const messages = (ctx: Ctx, owner: EngagementOwner) =>
    db('send_messages as m')
      .where('m.user_id', ctx.userId)
      .where('singleSendId' in owner ? { 'm.single_send_id': owner.singleSendId } : { 'm.automation_id': owner.automationId });

  const engaged = (ctx: Ctx, owner: EngagementOwner, kind: PeopleKind) =>
    messages(ctx, owner)
      .whereNotNull(kind === 'opened' ? 'm.opened_at' : 'm.clicked_at')
      .select(
        'm.id', 'm.email', 'm.opened_at', 'm.human_opened_at', 'm.clicked_at',
        db('link_clicks as k').whereRaw('k.message_id = m.id').sum('k.clicks').as('clicks'),
      );

  const person = (row: Record<string, unknown>): EngagedPerson => ({
    id: Number(row.id),
    email: String(row.email),
    opened_at: plainDateTime(row.opened_at),
    automated_only: row.opened_at !== null && row.human_opened_at === null,
    clicked_at: plainDateTime(row.clicked_at),
    clicks: toCount(row.clicks),
  });

  async function overTime(ctx: Ctx, owner: EngagementOwner, column: 'opened_at' | 'clicked_at') {
    const hour = utcHour(db, `m.${column}`);
    const rows = (await messages(ctx, owner)
      .whereNotNull(`m.${column}`)
      .select({ hour })
      .count({ n: '*' })
      .groupByRaw(hour.toQuery())
      .orderBy('hour')) as unknown as { hour: string; n: unknown }[];
    return fillBuckets(rows.map((r): OpenBucket => ({ start: String(r.hour), opens: toCount(r.n) })));
  }

  return {
    /** The tracked links with their unique and total clicks; an automation's steps add up by URL. */
    async links(ctx: Ctx, owner: EngagementOwner): Promise<LinkStats[]> {
      const scoped = db('send_links').where({ user_id: ctx.userId });
      const rows =
        'singleSendId' in owner
          ? await scoped.where({ single_send_id: owner.singleSendId }).orderBy('n').select('url', 'unique_clicks', 'total_clicks')
          : await scoped
              .where({ automation_id: owner.automationId })
              .groupBy('url')
              .orderByRaw('min(id)')
              .select('url', db.raw('sum(unique_clicks) as unique_clicks'), db.raw('sum(total_clicks) as total_clicks'));
      return rows.map((r: Record<string, unknown>) => ({ url: String(r.url), unique_clicks: toCount(r.unique_clicks), total_clicks: toCount(r.total_clicks) }));
    },

    async summary(ctx: Ctx, owner: EngagementOwner): Promise<EngagementSummary> {
      const row =
        'singleSendId' in owner
          ? await db('single_sends').where({ id: owner.singleSendId, user_id: ctx.userId }).first('unique_human_opens as n')
          : await db('automations').where({ id: owner.automationId, user_id: ctx.userId }).first('total_unique_human_opens as n');
      return { humanOpens: toCount(row?.n) };
    },

    /** Unique clicks per hour (per day past two days), empty periods included. */
    clicksOverTime: (ctx: Ctx, owner: EngagementOwner) => overTime(ctx, owner, 'clicked_at'),
    /** Unique opens per hour (per day past two days), empty periods included. */
    opensOverTime: (ctx: Ctx, owner: EngagementOwner) => overTime(ctx, owner, 'opened_at'),

    /** One page of the recipients who opened (or clicked), the latest first. */
    async people(ctx: Ctx, owner: EngagementOwner, kind: PeopleKind, paging: Paging): Promise<ListResult<EngagedPerson>> {
      return listPage(engaged(ctx, owner, kind).orderBy(kind === 'opened' ? 'm.opened_at' : 'm.clicked_at', 'desc').orderBy('m.id', 'desc'), paging, person);
    },

    /** Every recipient who opened (or clicked), in chunks keyed on the message id: memory holds one chunk. It is the CSV download, so it is an export. */
    async *allPeople(ctx: Ctx, owner: EngagementOwner, kind: PeopleKind): AsyncGenerator<EngagedPerson[]> {
      const single = 'singleSendId' in owner;
      await recordAudit(db, ctx, {
        action: 'engagement.exported',
        recordType: single ? 'single_send' : 'automation',
        recordId: single ? owner.singleSendId : owner.automationId,
        summary: `Recipients who ${kind}, as CSV`,
      });
      for await (const rows of idChunks(engaged(ctx, owner, kind), 'm.id')) yield rows.map(person);
    },
  };
}

export type EngagementService = ReturnType<typeof createEngagementService>;
