import type { Knex } from 'knex';
import { toCount } from '../../../db/dialect';
import { typedParam } from '../../../db/typed-param';
import { FEEDBACK_EVENT, MESSAGE_STATE } from '../../../lib/constants';
import { withoutUnsubscribed } from './do-not-mail';
import { parseTargets, Targets } from './recipient-refs';

export interface ExpandableSend {
  id: number;
  user_id: number;
  recipient_id: unknown;
  exclude_specific_recipient_id: unknown;
  unsubscribe_group_id: number;
  /** A resend to non-openers: the id of the send whose ledger its audience is drawn from (see nonOpenersOf). */
  resend_of?: unknown;
  /** 2: each row is due at `schedule_date` `schedule_time` on its recipient's clock (see localDueTimes). */
  schedule_type?: unknown;
  schedule_date?: unknown;
  schedule_time?: unknown;
}

/**
 * Where a send's audience is read from, in the order its ledger is written: each targeted
 * contact type, then each targeted segment (an address in both comes from the first), or a
 * resend's original ledger. Each is walked by a key that an index keeps in order.
 */
export type AudienceSource =
  | { kind: 'type'; id: number }
  | { kind: 'segment'; id: number }
  | { kind: 'resend'; id: number };

export function audienceSources(send: Pick<ExpandableSend, 'recipient_id' | 'resend_of'>): AudienceSource[] {
  const original = resendOf(send);
  if (original) return [{ kind: 'resend', id: original }];
  const targets = parseTargets(send.recipient_id);
  return [
    ...[...new Set(targets.contactTypeIds)].map((id) => ({ kind: 'type' as const, id })),
    ...[...new Set(targets.segmentIds)].map((id) => ({ kind: 'segment' as const, id })),
  ];
}

/** A source's walking key: contacts and segment members by id, a resend's original by address. */
export type SourceKey = number | string;

/**
 * The key of the `size`-th row of `source` after `after` (null: fewer are left): a batch is
 * the rows after `after` up to it, read by the index alone before anything is filtered out.
 */
export async function batchEnd(db: Knex, userId: number, source: AudienceSource, after: SourceKey | null, size: number): Promise<SourceKey | null> {
  let query: Knex.QueryBuilder;
  if (source.kind === 'type') {
    query = db('contacts').where({ user_id: userId, contact_type_id: source.id }).whereNull('deleted_at').orderBy('id').select('id as k');
    if (after !== null) query.where('id', '>', after);
  } else if (source.kind === 'segment') {
    query = db('segment_recipients').where({ segment_id: source.id, user_id: userId }).orderBy('id').select('id as k');
    if (after !== null) query.where('id', '>', after);
  } else {
    query = db('send_messages').where({ single_send_id: source.id }).orderBy('email_key').select('email_key as k');
    if (after !== null) query.where('email_key', '>', after);
  }
  const row = await query.offset(size - 1).first();
  if (!row) return null;
  return source.kind === 'resend' ? String(row.k) : Number(row.k);
}

/**
 * The recipients of one batch of a send (the rows of `source` after `after` up to `upto`, null:
 * to its end), as rows under the alias `t` without the excluded, unsubscribed and suppressed.
 */
export function batchRecipients(db: Knex, send: Omit<ExpandableSend, 'id'>, source: AudienceSource, after: SourceKey | null, upto: SourceKey | null): Knex.QueryBuilder {
  const userId = Number(send.user_id);
  const within = (query: Knex.QueryBuilder, key: string) => {
    if (after !== null) query.where(key, '>', after);
    if (upto !== null) query.where(key, '<=', upto);
  };
  if (source.kind === 'resend') return excluding(db, send, nonOpenersOf(db, userId, source.id, (m) => within(m, 'm.email_key')));
  const rows = source.kind === 'type'
    ? contactsOf(db, userId, [source.id]).select('c.id as contact_id', typedParam(db, null, 'integer').wrap('', ' as segment_recipient_id'), 'c.email', 'c.email_key')
    : segmentMembersOf(db, userId, [source.id]).select('sr.contact_id', 'sr.id as segment_recipient_id', 'sr.email', 'sr.email_key');
  within(rows, source.kind === 'type' ? 'c.id' : 'sr.id');
  return excluding(db, send, db.from(rows.as('t')));
}

/**
 * A send's recipients as rows under the alias `t` (see membersOf), without its excluded lists'
 * addresses, unsubscribers and suppressed addresses; undefined when nothing is targeted. An
 * address may come more than once (the ledger's unique index keeps one). A resend's recipients
 * are its original's non-openers instead of its lists' members.
 */
export function recipientsOf(db: Knex, send: Omit<ExpandableSend, 'id'>): Knex.QueryBuilder | undefined {
  const userId = Number(send.user_id);
  const recipients = resendOf(send) ? nonOpenersOf(db, userId, resendOf(send)!) : membersOf(db, userId, parseTargets(send.recipient_id));
  return recipients && excluding(db, send, recipients);
}

/** Leaves out of `recipients` (alias `t`) the send's excluded lists' addresses, unsubscribers and suppressed addresses. */
function excluding(db: Knex, send: Omit<ExpandableSend, 'id'>, recipients: Knex.QueryBuilder): Knex.QueryBuilder {
  const userId = Number(send.user_id);
  const excluded = parseTargets(send.exclude_specific_recipient_id);
  withoutUnsubscribed(recipients, db, { userId, groupId: send.unsubscribe_group_id }, 't.email_key');
  if (excluded.contactTypeIds.length) {
    recipients.whereNotExists(contactsOf(db, userId, excluded.contactTypeIds).select(db.raw('1')).whereRaw('c.email_key = t.email_key'));
  }
  if (excluded.segmentIds.length) {
    recipients.whereNotExists(segmentMembersOf(db, userId, excluded.segmentIds).select(db.raw('1')).whereRaw('sr.email_key = t.email_key'));
  }
  return recipients;
}

/** How many addresses a send would go to now, after exclusions, unsubscribes and suppressions. */
export async function countRecipients(db: Knex, send: Omit<ExpandableSend, 'id'>): Promise<number> {
  const recipients = recipientsOf(db, send);
  if (!recipients) return 0;
  const row = await recipients.countDistinct({ n: 't.email_key' }).first();
  return toCount(row?.n);
}

/** The original of a resend, or undefined for a send with lists as its audience. */
export function resendOf(send: Pick<ExpandableSend, 'resend_of'>): number | undefined {
  const id = Number(send.resend_of);
  return send.resend_of === null || send.resend_of === undefined || !Number.isInteger(id) || id < 1 ? undefined : id;
}

/**
 * The recipients of a resend to non-openers, as rows like membersOf's under the alias `t`: the
 * messages of the original send (of the account) that were delivered and never opened by a
 * person (an automated open, a proxy's prefetch or a scanner's, leaves `human_opened_at` empty;
 * a message whose opens and clicks retention deleted counts as opened), whose contact was not deleted and whose address has not bounced since the original started.
 * A message that bounced after delivery is no longer delivered; unsubscribes and suppressions
 * are left out by the caller, as for every send. Read from the ledger in the INSERT … SELECT
 * itself, so no list of recipients is ever held in memory.
 */
export function nonOpenersOf(db: Knex, userId: number, originalId: number, narrow?: (messages: Knex.QueryBuilder) => void): Knex.QueryBuilder {
  const since = db('single_sends').where({ id: originalId, user_id: userId }).select('sent_at');
  const bouncedSince = db('message_feedback as f')
    .select(db.raw('1'))
    .where('f.user_id', userId)
    .whereRaw('f.email_key = m.email_key')
    .where('f.event', FEEDBACK_EVENT.bounce)
    .where('f.created_at', '>=', since);
  const nonOpeners = db('send_messages as m')
    .leftJoin('contacts as mc', 'mc.id', 'm.contact_id')
    .where('m.user_id', userId)
    .where('m.single_send_id', originalId)
    .where('m.state', MESSAGE_STATE.sent)
    .whereNull('m.human_opened_at')
    // Opens and clicks deleted by retention: the message had one, so it is no non-opener.
    .whereNull('m.engagement_pruned_at')
    .where((q) => q.whereNull('m.contact_id').orWhereNull('mc.deleted_at'))
    .whereNotExists(bouncedSince)
    .select('m.contact_id', 'm.segment_recipient_id', 'm.email', 'm.email_key');
  narrow?.(nonOpeners);
  return db.from(nonOpeners.as('t'));
}

/**
 * The members of contact types and segments as rows (contact_id, segment_recipient_id, email,
 * email_key) under the alias `t`, or undefined when nothing is targeted.
 */
export function membersOf(db: Knex, userId: number, targets: Targets): Knex.QueryBuilder | undefined {
  const sources: Knex.QueryBuilder[] = [];
  if (targets.contactTypeIds.length) {
    sources.push(
      contactsOf(db, userId, targets.contactTypeIds).select(
        'c.id as contact_id',
        typedParam(db, null, 'integer').wrap('', ' as segment_recipient_id'),
        'c.email',
        'c.email_key',
      ),
    );
  }
  if (targets.segmentIds.length) {
    sources.push(segmentMembersOf(db, userId, targets.segmentIds).select('sr.contact_id', 'sr.id as segment_recipient_id', 'sr.email', 'sr.email_key'));
  }
  if (!sources.length) return undefined;
  const union = sources.length === 1 ? sources[0] : sources[0].unionAll(sources.slice(1));
  return db.from(union.as('t'));
}

/** Live contacts of live contact types of the account (alias `c`). */
export function contactsOf(db: Knex, userId: number, typeIds: number[]): Knex.QueryBuilder {
  return db('contacts as c')
    .join('contact_types as ct', 'ct.id', 'c.contact_type_id')
    .where('c.user_id', userId)
    .whereNull('c.deleted_at')
    .whereIn('c.contact_type_id', typeIds)
    .whereNull('ct.deleted_at');
}

/** Recipients of live segments of the account, without those whose contact was deleted (alias `sr`). */
export function segmentMembersOf(db: Knex, userId: number, segmentIds: number[]): Knex.QueryBuilder {
  return db('segment_recipients as sr')
    .join('segments as s', 's.id', 'sr.segment_id')
    .leftJoin('contacts as sc', 'sc.id', 'sr.contact_id')
    .where('sr.user_id', userId)
    .whereIn('sr.segment_id', segmentIds)
    .whereNull('s.deleted_at')
    .where((q) => q.whereNull('sr.contact_id').orWhereNull('sc.deleted_at'));
}
