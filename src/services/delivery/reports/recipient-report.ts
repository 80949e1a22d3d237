import type { Knex } from 'knex';
import { idChunks, listPage, ListResult, Paging } from '../../../db/paging';
import { csvLines } from '../../../lib/csv';
import { FEEDBACK_EVENT, MESSAGE_STATE as M, RecipientStatus } from '../../../lib/constants';
import { NotFoundError } from '../../../lib/errors';
import { plainDateTime, zonedDateTime } from '../../../lib/time';
import { isUtr } from '../../../lib/utr';
import type { BounceClass } from '../../../lib/bounce-class';
import type { Ctx, ServiceDeps } from '../../context';
import { recordAudit, summaries } from '../../shared/audit-writer';

/** One recipient of a send or an automation step, and what became of the message to them. */
export interface RecipientReportRecord {
  contact_id: number | null;
  email: string;
  status: RecipientStatus;
  /** Why it bounced, failed, was skipped, or the last refusal of one still queued for a retry. */
  reason: string | null;
  /** The class of that refusal (hard, mailbox_full, policy, soft, other); null when there was none. */
  bounce_class: BounceClass | null;
  /** `YYYY-MM-DD HH:MM:SS` UTC, as the other `sent_at` fields. */
  sent_at: string | null;
  /** The first open by a person (automated opens are not counted). */
  opened_at: string | null;
  clicked_at: string | null;
}

/** Whose recipients: a single send or an automation step, by its utr. */
export type ReportOf = { singleSend: string } | { step: string };

/** Which of them: by status, by the class of their last refusal, or both. */
export interface ReportFilter {
  status?: RecipientStatus;
  bounceClass?: BounceClass;
}

/**
 * The status of a ledger message, in order: the first rule that holds is its status. `states`
 * are the ledger states a status can have, so a filter reads the (send, state) index first.
 * A complaint leaves the message delivered; it is known from the feedback recorded for it.
 */
const RULES: ReadonlyArray<{ status: RecipientStatus; states: number[]; when: string }> = [
  { status: 'queued', states: [M.queued, M.sending, M.paused, M.held], when: `m.state in (${M.queued}, ${M.sending}, ${M.paused}, ${M.held})` },
  { status: 'failed', states: [M.failed], when: `m.state = ${M.failed}` },
  { status: 'bounced', states: [M.bounced], when: `m.state = ${M.bounced}` },
  { status: 'skipped', states: [M.suppressed, M.cancelled], when: `m.state in (${M.suppressed}, ${M.cancelled})` },
  {
    status: 'complained',
    states: [M.sent],
    when: `exists (select 1 from message_feedback f where f.message_id = m.id and f.event = '${FEEDBACK_EVENT.complaint}')`,
  },
  { status: 'unsubscribed', states: [M.sent], when: 'm.unsubscribed_at is not null' },
  { status: 'clicked', states: [M.sent], when: 'm.clicked_at is not null' },
  { status: 'opened', states: [M.sent], when: 'm.human_opened_at is not null' },
];
const STATUS_SQL = `case ${RULES.map((r) => `when ${r.when} then '${r.status}'`).join(' ')} else 'delivered' end`;
const statesOf = (status: RecipientStatus) => RULES.find((r) => r.status === status)?.states ?? [M.sent];

const CSV_HEADER = ['contact_id', 'email', 'status', 'reason', 'bounce_class', 'sent_at', 'opened_at', 'clicked_at'] as const;

function reportRecord(row: Record<string, unknown>): RecipientReportRecord {
  return {
    contact_id: row.contact_id === null || row.contact_id === undefined ? null : Number(row.contact_id),
    email: String(row.email),
    status: String(row.status) as RecipientStatus,
    reason: row.last_error === null || row.last_error === undefined ? null : String(row.last_error),
    bounce_class: row.bounce_class ? (String(row.bounce_class) as BounceClass) : null,
    sent_at: plainDateTime(row.sent_at),
    opened_at: plainDateTime(row.human_opened_at),
    clicked_at: plainDateTime(row.clicked_at),
  };
}

/**
 * Who a single send or an automation step went to, one row per ledger message with its status
 * (RECIPIENT_STATUSES), read straight from the ledger: a page, every row in chunks (a streamed
 * list), or CSV. The send or step is looked up first, so a wrong utr is a 404 before anything is sent.
 */
export function createRecipientReportService({ db }: Pick<ServiceDeps, 'db'>) {
  /** The send's or step's ledger rows, and its name (the audit log names what was downloaded). */
  async function ownerOf(ctx: Ctx, of: ReportOf): Promise<{ where: Record<string, number>; name: string }> {
    if ('singleSend' in of) {
      const send = isUtr(of.singleSend) ? await db('single_sends').where({ user_id: ctx.userId, utr: of.singleSend }).whereNull('deleted_at').first('id', 'single_send_name') : undefined;
      if (!send) throw new NotFoundError();
      return { where: { 'm.single_send_id': Number(send.id) }, name: String(send.single_send_name) };
    }
    const step = isUtr(of.step)
      ? await db('automation_schedules as s')
          .join('automations as a', 'a.id', 's.automation_id')
          .where({ 's.user_id': ctx.userId, 's.utr': of.step })
          .whereNull('a.deleted_at')
          .first('s.id', 'a.automation_name')
      : undefined;
    if (!step) throw new NotFoundError();
    return { where: { 'm.automation_schedule_id': Number(step.id) }, name: `an email of ${String(step.automation_name)}` };
  }

  /** The report's query, wrapped: a query builder is a thenable, which an async function would run. */
  async function query(ctx: Ctx, of: ReportOf, filter: ReportFilter): Promise<{ q: Knex.QueryBuilder; name: string }> {
    const { status, bounceClass } = filter;
    const owner = await ownerOf(ctx, of);
    const q = db('send_messages as m')
      .where('m.user_id', ctx.userId)
      .where(owner.where)
      .select('m.id', 'm.contact_id', 'm.email', db.raw(`${STATUS_SQL} as status`), 'm.last_error', 'm.bounce_class', 'm.sent_at', 'm.human_opened_at', 'm.clicked_at');
    if (status) q.whereIn('m.state', statesOf(status)).whereRaw(`(${STATUS_SQL}) = ?`, [status]);
    if (bounceClass) q.where('m.bounce_class', bounceClass);
    return { q, name: owner.name };
  }

  return {
    /** One page of the recipients, newest message first. */
    async page(ctx: Ctx, of: ReportOf, filter: RecipientStatus | ReportFilter | undefined, paging: Paging): Promise<ListResult<RecipientReportRecord>> {
      return listPage((await query(ctx, of, filterOf(filter))).q.orderBy('m.id', 'desc'), paging, reportRecord);
    },

    /** Every recipient in chunks keyed on the message id: memory holds one chunk. */
    async *chunks(ctx: Ctx, of: ReportOf, filter?: RecipientStatus | ReportFilter): AsyncGenerator<RecipientReportRecord[]> {
      const { q } = await query(ctx, of, filterOf(filter));
      for await (const rows of idChunks(q, 'm.id')) yield rows.map(reportRecord);
    },

    /** The same rows as CSV, a header line first. */
    async *csv(ctx: Ctx, of: ReportOf, filter?: RecipientStatus | ReportFilter, options: { timeZone?: string } = {}): AsyncGenerator<string> {
      const { status } = filterOf(filter);
      const { q, name } = await query(ctx, of, filterOf(filter));
      await recordAudit(db, ctx, {
        action: 'recipient_report.exported',
        recordType: 'singleSend' in of ? 'single_send' : 'automation_step',
        recordId: 'singleSend' in of ? of.singleSend : of.step,
        summary: summaries.recipientsDownload(name, status),
      });
      yield csvLines([[...CSV_HEADER]]);
      // The dashboard's download: times on the account's clock, with their offset.
      const zone = options.timeZone;
      const shown = (r: RecipientReportRecord): RecipientReportRecord =>
        zone ? { ...r, sent_at: zonedDateTime(r.sent_at, zone), opened_at: zonedDateTime(r.opened_at, zone), clicked_at: zonedDateTime(r.clicked_at, zone) } : r;
      for await (const rows of idChunks(q, 'm.id')) {
        yield csvLines(rows.map(reportRecord).map(shown).map((r) => CSV_HEADER.map((name) => r[name] ?? '')));
      }
    },
  };
}

/** A status alone (as the dashboard asks) or a whole filter. */
function filterOf(filter: RecipientStatus | ReportFilter | undefined): ReportFilter {
  return typeof filter === 'string' ? { status: filter } : (filter ?? {});
}

export type RecipientReportService = ReturnType<typeof createRecipientReportService>;
