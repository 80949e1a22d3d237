import type { Knex } from 'knex';
import { parseJson, toCount } from '../../db/dialect';
import { FEEDBACK_EVENT, MESSAGE_STATE as M, type TransactionalStatus } from '../../lib/constants';
import { emailKey } from '../../lib/email-key';
import type { BounceClass } from '../../lib/bounce-class';
import { timestamp } from '../../lib/time';
import { txId } from './accept';

/** A message as the log lists it. */
export interface TransactionalMessageRecord {
  id: string;
  to: string;
  from: string;
  subject: string;
  status: TransactionalStatus;
  /** The class of its last refusal (docs/deliverability.md); null when nobody refused it. */
  bounce_class: BounceClass | null;
  tags: string[];
  created_at: string | null;
  sent_at: string | null;
  opened_at: string | null;
  clicked_at: string | null;
}

/** One thing that happened to a message. */
export interface TransactionalEvent {
  type: 'accepted' | 'sent' | 'deferred' | 'delivered' | 'bounced' | 'complained' | 'opened' | 'clicked' | 'failed' | 'suppressed';
  at: string | null;
  detail: string | null;
}

/** A message with its timeline and the mail server's last answer. */
export interface TransactionalDetails extends TransactionalMessageRecord {
  cc: string[];
  bcc: string[];
  reply_to: string | null;
  source: string;
  events: TransactionalEvent[];
  last_smtp_response: { code: number | null; message: string } | null;
}

export interface LogFilters {
  status?: TransactionalStatus;
  bounceClass?: BounceClass;
  to?: string;
  tag?: string;
  fromDate?: string;
  toDate?: string;
  page: number;
  limit: number;
}

const complaint = (db: Knex) => db('message_feedback as f').select(db.raw('1')).whereRaw('f.message_id = m.id').where('f.event', FEEDBACK_EVENT.complaint);

/**
 * Each status as a condition on the ledger row (`m`): the one definition the list's filter and
 * a record's status (statusOf) agree on. Handed to the mail server is `delivered`, or `sent`
 * when a provider's API took it (its own delivery is reported later, if at all); a queued
 * message that failed an attempt is `deferred`; a complaint outranks the row's state.
 */
export function whereStatus(db: Knex, status: TransactionalStatus): (q: Knex.QueryBuilder) => void {
  return (q) => {
    switch (status) {
      case 'complained':
        return void q.whereExists(complaint(db));
      case 'queued':
        return void q.whereIn('m.state', [M.queued, M.sending]).whereNull('m.last_error');
      case 'deferred':
        return void q.whereIn('m.state', [M.queued, M.sending]).whereNotNull('m.last_error');
      case 'delivered':
        return void q.where('m.state', M.sent).whereNull('m.provider_message_id').whereNotExists(complaint(db));
      case 'sent':
        return void q.where('m.state', M.sent).whereNotNull('m.provider_message_id').whereNotExists(complaint(db));
      case 'bounced':
        return void q.where('m.state', M.bounced).whereNotExists(complaint(db));
      case 'failed':
        return void q.where('m.state', M.failed);
      case 'suppressed':
        return void q.where('m.state', M.suppressed);
    }
  };
}

/** The status of a ledger row (with `complained` read from its feedback). */
export function statusOf(row: Record<string, unknown>): TransactionalStatus {
  const state = Number(row.state);
  if (row.complained) return 'complained';
  if (state === M.queued || state === M.sending) return row.last_error ? 'deferred' : 'queued';
  if (state === M.sent) return row.provider_message_id ? 'sent' : 'delivered';
  if (state === M.bounced) return 'bounced';
  if (state === M.suppressed) return 'suppressed';
  return 'failed';
}

const COLUMNS = [
  'm.id', 'm.email', 'm.state', 'm.bounce_class', 'm.last_error', 'm.smtp_code', 'm.provider_message_id', 'm.sent_at', 'm.opened_at', 'm.clicked_at', 'm.updated_at', 'm.created_at',
  't.from_name', 't.from_email', 't.subject', 't.tags', 't.cc', 't.bcc', 't.reply_to', 't.source',
];

function fromOf(row: Record<string, unknown>): string {
  return row.from_name ? `${String(row.from_name)} <${String(row.from_email)}>` : String(row.from_email);
}

function recordOf(row: Record<string, unknown>): TransactionalMessageRecord {
  return {
    id: txId(Number(row.id)),
    to: String(row.email),
    from: fromOf(row),
    subject: String(row.subject),
    status: statusOf(row),
    bounce_class: row.bounce_class ? (String(row.bounce_class) as BounceClass) : null,
    tags: parseJson<string[]>(row.tags, []),
    created_at: timestamp(row.created_at),
    sent_at: timestamp(row.sent_at),
    opened_at: timestamp(row.opened_at),
    clicked_at: timestamp(row.clicked_at),
  };
}

function messagesOf(db: Knex, userId: number): Knex.QueryBuilder {
  return db('transactional_messages as t').join('send_messages as m', 'm.id', 't.id').where('t.user_id', userId);
}

/** The account's messages, newest first, one page of them, with how many match. */
export async function listMessages(db: Knex, userId: number, filters: LogFilters): Promise<{ messages: TransactionalMessageRecord[]; total: number }> {
  const query = messagesOf(db, userId);
  if (filters.status) query.where(whereStatus(db, filters.status));
  if (filters.bounceClass) query.where('m.bounce_class', filters.bounceClass);
  if (filters.to) query.where('m.email_key', emailKey(filters.to));
  if (filters.tag) query.whereExists(db('transactional_tags as g').select(db.raw('1')).whereRaw('g.message_id = t.id').where('g.user_id', userId).where('g.tag', filters.tag));
  if (filters.fromDate) query.where('t.created_at', '>=', filters.fromDate);
  if (filters.toDate) query.where('t.created_at', '<', filters.toDate);
  const [{ n }] = await query.clone().count({ n: '*' });
  const rows = await query
    .orderBy('t.id', 'desc')
    .limit(filters.limit)
    .offset((filters.page - 1) * filters.limit)
    .select([...COLUMNS, db.raw('exists ? as complained', [complaint(db)])]);
  return { messages: rows.map(recordOf), total: toCount(n) };
}

/** One message with its timeline; undefined when the account has no such message. */
export async function messageDetails(db: Knex, userId: number, ledgerId: number): Promise<TransactionalDetails | undefined> {
  const row = await messagesOf(db, userId).where('t.id', ledgerId).first([...COLUMNS, db.raw('exists ? as complained', [complaint(db)])]);
  if (!row) return undefined;
  const record = recordOf(row);
  const event = (type: TransactionalEvent['type'], at: unknown, detail: unknown = null): TransactionalEvent => ({ type, at: timestamp(at), detail: detail === null || detail === undefined ? null : String(detail) });
  const events: TransactionalEvent[] = [event('accepted', row.created_at)];
  for (const past of await db('transactional_events').where({ message_id: ledgerId }).orderBy('id')) events.push(event(past.type, past.at, past.detail));
  const state = Number(row.state);
  if ((state === M.queued || state === M.sending) && row.last_error) events.push(event('deferred', row.updated_at, row.last_error));
  if (row.sent_at) {
    events.push(event('sent', row.sent_at, row.provider_message_id ? `taken by the relay's API (${String(row.provider_message_id)})` : null));
    if (!row.provider_message_id) events.push(event('delivered', row.sent_at, 'the receiving mail server accepted it'));
  }
  const feedback = await db('message_feedback').where({ message_id: ledgerId }).orderBy('id');
  for (const f of feedback) {
    if (f.event === FEEDBACK_EVENT.bounce) events.push(event('bounced', f.created_at, f.diagnostic));
    if (f.event === FEEDBACK_EVENT.complaint) events.push(event('complained', f.created_at, f.diagnostic));
  }
  if (state === M.bounced && !feedback.some((f) => f.event === FEEDBACK_EVENT.bounce)) events.push(event('bounced', row.updated_at, row.last_error));
  if (row.opened_at) events.push(event('opened', row.opened_at));
  if (row.clicked_at) events.push(event('clicked', row.clicked_at));
  if (state === M.failed) events.push(event('failed', row.updated_at, row.last_error));
  if (state === M.suppressed) events.push(event('suppressed', row.updated_at, row.last_error));
  events.sort((a, b) => String(a.at).localeCompare(String(b.at)));
  return {
    ...record,
    cc: parseJson<string[]>(row.cc, []),
    bcc: parseJson<string[]>(row.bcc, []),
    reply_to: row.reply_to ? String(row.reply_to) : null,
    source: String(row.source),
    events,
    last_smtp_response: row.last_error || row.smtp_code ? { code: row.smtp_code === null ? null : Number(row.smtp_code), message: String(row.last_error ?? '') } : null,
  };
}
