import type { Knex } from 'knex';
import { parseJson, reclaimFreedSpace } from '../../db/dialect';
import { likePattern } from '../../db/expressions';
import { ENROLMENT_STATE, ERASED_ADDRESS_DOMAIN, MESSAGE_STATE } from '../../lib/constants';
import { hmac } from '../../lib/crypto';
import { emailKey } from '../../lib/email-key';
import { timestamp } from '../../lib/time';
import type { Ctx, ServiceDeps } from '../context';
import { AuditRecord, auditRecord } from '../accounts/audit-log';
import { recordAudit } from '../shared/audit-writer';
import { contactRecord, ContactRecord } from './contact-records';
import { customFieldDefs, CustomFieldSource } from './custom-field-values';
import { transitionMessages } from '../shared/message-state';
import { ERASED_TEXT, hiddenKey, hideOptOuts, OPT_OUT_TABLES } from './erased-opt-outs';

/**
 * What the account holds about one address, and its erasure. Erasure deletes the contact rows
 * and the segment rows of the address and replaces it by a keyed hash in the send ledger, the
 * automation enrolments and the bounce and complaint records, so every count of sends, opens
 * and unsubscribes stays right while the address is gone; the words mail systems said about it
 * (DSN diagnostics, SMTP replies), which quote the address, go. Global and group unsubscribes
 * and the suppression are kept under a keyed hash of the address (erased-opt-outs.ts): they are
 * what keeps it from being mailed again. What the databases keep of deleted rows in their files
 * is reclaimed after the erasure (docs/privacy-erase.md).
 */

const STATE_NAMES = Object.fromEntries(Object.entries(MESSAGE_STATE).map(([name, value]) => [value, name])) as Record<number, string>;
const ENROLMENT_NAMES = Object.fromEntries(Object.entries(ENROLMENT_STATE).map(([name, value]) => [value, name])) as Record<number, string>;

export interface PrivacyExport {
  email: string;
  contacts: ContactRecord[];
  segments: { segment_id: number; segment_name: string; source: string; created_at: string | null }[];
  unsubscribe_groups: { unsubscribe_groups_id: number; group_name: string; created_at: string | null }[];
  global_unsubscribe: { created_at: string | null } | null;
  suppressed: { reason: string; created_at: string | null } | null;
  automations: { automation_id: number; automation_name: string; state: string; enrolled_at: string | null }[];
  messages: {
    id: number;
    single_send_id: number | null;
    automation_id: number | null;
    state: string;
    sent_at: string | null;
    opened_at: string | null;
    unsubscribed_at: string | null;
    created_at: string | null;
  }[];
  opens: { message_id: number; opened_at: string | null }[];
  unsubscribes: { message_id: number; unsubscribed_at: string | null }[];
  /** Signups through the account's forms: the consent records (confirmed) and unconfirmed requests. */
  signups: {
    form_id: number;
    form_name: string;
    group_ids: number[];
    requested_at: string | null;
    requested_ip: string;
    expires_at: string | null;
    confirmed_at: string | null;
    confirmed_ip: string | null;
  }[];
}

export interface ErasureCount {
  contacts: number;
  segment_recipients: number;
  messages: number;
  automation_enrolments: number;
  skipped_import_rows: number;
  /** Outgoing webhook events about the address (their log and those still waiting). */
  webhook_deliveries: number;
  signups: number;
}

/** The tables an erasure may change, whose freed space it reclaims. */
const ERASED_FROM = [
  'contacts', 'segment_recipients', 'send_messages', 'message_feedback', 'automation_enrolments', 'import_skipped_rows',
  'webhook_deliveries', 'signups', 'audit_log', ...OPT_OUT_TABLES,
];

interface Deps extends Pick<ServiceDeps, 'db' | 'secret' | 'logger'> {
  fields: CustomFieldSource;
}

const num = (v: unknown) => (v === null || v === undefined ? null : Number(v));

export function createPrivacyService({ db, secret, logger, fields }: Deps) {
  /** The address an erased one becomes: the same for the same account and address, so uniqueness holds. */
  const erasedAddress = (ctx: Ctx, key: string) => `erased-${hmac(secret, `${ctx.userId}:${key}`).slice(0, 32).toLowerCase()}@${ERASED_ADDRESS_DOMAIN}`;
  /**
   * How the audit log names an address of a privacy request: a keyed hash (the app secret), so
   * "was this address erased, and by whom?" can be answered later without the log keeping it.
   */
  const loggedAddress = (ctx: Ctx, key: string) => hmac(secret, `audit:${ctx.userId}:${key}`);

  return {
    async export(ctx: Ctx, email: string): Promise<PrivacyExport> {
      const key = emailKey(email);
      await recordAudit(db, ctx, { action: 'contact.privacy_exported', recordType: 'contact', recordId: loggedAddress(ctx, key), summary: 'Everything held about an address, as JSON' });
      // The lists of opt-outs keep an erased address under its hash: they are shown all the same.
      const keys = [key, hiddenKey(secret, key)];
      const mine = (table: string, q: Knex = db) => q(table).where({ [`${table}.user_id`]: ctx.userId }).whereIn(`${table}.email_key`, keys);
      const [defs, contacts, segments, groups, globalRow, suppressedRow, enrolments, messages, signups] = await Promise.all([
        customFieldDefs(fields, ctx),
        mine('contacts').orderBy('id'),
        mine('segment_recipients').join('segments', 'segments.id', 'segment_recipients.segment_id').orderBy('segment_recipients.id')
          .select('segment_recipients.segment_id', 'segments.segment_name', 'segment_recipients.source', 'segment_recipients.created_at'),
        mine('unsubscribe_group_recipients').join('unsubscribe_groups', 'unsubscribe_groups.id', 'unsubscribe_group_recipients.unsubscribe_groups_id')
          .orderBy('unsubscribe_group_recipients.id').select('unsubscribe_group_recipients.unsubscribe_groups_id', 'unsubscribe_groups.group_name', 'unsubscribe_group_recipients.created_at'),
        mine('global_unsubscribes').first('created_at'),
        mine('suppressed_addresses').first('reason', 'created_at'),
        mine('automation_enrolments').join('automations', 'automations.id', 'automation_enrolments.automation_id').orderBy('automation_enrolments.id')
          .select('automation_enrolments.automation_id', 'automations.automation_name', 'automation_enrolments.state', 'automation_enrolments.enrolled_at'),
        mine('send_messages').orderBy('id').select('id', 'single_send_id', 'automation_id', 'state', 'sent_at', 'opened_at', 'unsubscribed_at', 'created_at'),
        mine('signups').join('signup_forms', 'signup_forms.id', 'signups.form_id').orderBy('signups.id')
          .select('signups.form_id', 'signup_forms.name as form_name', 'signups.group_ids', 'signups.requested_at', 'signups.requested_ip', 'signups.expires_at', 'signups.confirmed_at', 'signups.confirmed_ip'),
      ]);
      const shapedMessages = messages.map((m: Record<string, unknown>) => ({
        id: Number(m.id),
        single_send_id: num(m.single_send_id),
        automation_id: num(m.automation_id),
        state: STATE_NAMES[Number(m.state)] ?? String(m.state),
        sent_at: timestamp(m.sent_at),
        opened_at: timestamp(m.opened_at),
        unsubscribed_at: timestamp(m.unsubscribed_at),
        created_at: timestamp(m.created_at),
      }));
      return {
        email,
        contacts: contacts.map((row: Record<string, unknown>) => contactRecord(row, defs)),
        segments: segments.map((r: Record<string, unknown>) => ({ segment_id: Number(r.segment_id), segment_name: String(r.segment_name), source: String(r.source), created_at: timestamp(r.created_at) })),
        unsubscribe_groups: groups.map((r: Record<string, unknown>) => ({ unsubscribe_groups_id: Number(r.unsubscribe_groups_id), group_name: String(r.group_name), created_at: timestamp(r.created_at) })),
        global_unsubscribe: globalRow ? { created_at: timestamp(globalRow.created_at) } : null,
        suppressed: suppressedRow ? { reason: String(suppressedRow.reason), created_at: timestamp(suppressedRow.created_at) } : null,
        automations: enrolments.map((r: Record<string, unknown>) => ({
          automation_id: Number(r.automation_id),
          automation_name: String(r.automation_name),
          state: ENROLMENT_NAMES[Number(r.state)] ?? String(r.state),
          enrolled_at: timestamp(r.enrolled_at),
        })),
        messages: shapedMessages,
        opens: shapedMessages.filter((m) => m.opened_at).map((m) => ({ message_id: m.id, opened_at: m.opened_at })),
        unsubscribes: shapedMessages.filter((m) => m.unsubscribed_at).map((m) => ({ message_id: m.id, unsubscribed_at: m.unsubscribed_at })),
        signups: signups.map((r: Record<string, unknown>) => ({
          form_id: Number(r.form_id),
          form_name: String(r.form_name),
          group_ids: parseJson<unknown[]>(r.group_ids, []).map(Number),
          requested_at: timestamp(r.requested_at),
          requested_ip: String(r.requested_ip),
          expires_at: timestamp(r.expires_at),
          confirmed_at: timestamp(r.confirmed_at),
          confirmed_ip: r.confirmed_ip === null ? null : String(r.confirmed_ip),
        })),
      };
    },

    /** The erasures of an address, oldest first: who erased it and when (the log holds only its keyed hash). */
    async erasures(ctx: Ctx, email: string): Promise<AuditRecord[]> {
      const rows = await db('audit_log').where({ user_id: ctx.userId, action: 'contact.erased', record_type: 'contact', record_id: loggedAddress(ctx, emailKey(email)) }).orderBy('id', 'asc').select('*');
      return rows.map(auditRecord);
    },

    /** Erases the address from the account in one transaction (see above); answers what changed. */
    async erase(ctx: Ctx, email: string): Promise<ErasureCount> {
      const key = emailKey(email);
      const gone = erasedAddress(ctx, key);
      const erased = await db.transaction(async (trx) => {
        const contactIds: number[] = (await trx('contacts').where({ user_id: ctx.userId, email_key: key }).pluck('id')).map(Number);
        const segmentRows = await trx('segment_recipients')
          .where({ user_id: ctx.userId })
          .where((q) => {
            q.where({ email_key: key });
            if (contactIds.length) q.orWhereIn('contact_id', contactIds);
          })
          .del();
        // Queued mail to the address is not sent any more.
        await transitionMessages(trx('send_messages').where({ user_id: ctx.userId, email_key: key }), 'erase');
        // A DSN or SMTP reply quotes the address.
        await trx('send_messages').where({ user_id: ctx.userId, email_key: key }).whereNotNull('last_error').update({ last_error: ERASED_TEXT });
        const messages = await trx('send_messages')
          .where({ user_id: ctx.userId, email_key: key })
          .update({ email: gone, email_key: gone, contact_id: null, segment_recipient_id: null, payload: null });
        await trx('message_feedback').where({ user_id: ctx.userId, email_key: key }).update({ email_key: gone, diagnostic: ERASED_TEXT });
        await hideOptOuts(trx, secret, ctx.userId, key);
        await trx('automation_enrolments').where({ user_id: ctx.userId, email_key: key, state: ENROLMENT_STATE.active }).update({ state: ENROLMENT_STATE.left });
        const enrolments = await trx('automation_enrolments')
          .where({ user_id: ctx.userId, email_key: key })
          .update({ email: gone, email_key: gone, contact_id: null, segment_recipient_id: null });
        const skipped = await trx('import_skipped_rows')
          .whereIn('import_id', trx('imports').where({ user_id: ctx.userId }).select('id'))
          .whereRaw("lower(cells) like ? escape '\\'", [likePattern(JSON.stringify(key).slice(1, -1), 'contains')])
          .del();
        const hooks = await trx('webhook_deliveries').where({ user_id: ctx.userId, contact_key: key }).del();
        // The audit log keeps who changed what, not the address: entries that name it lose the name,
        // and the erasure itself is an entry naming who erased it and the address's keyed hash.
        await trx('audit_log')
          .where({ user_id: ctx.userId })
          .whereRaw("lower(summary) like ? escape '\\'", [likePattern(key, 'contains')])
          .update({ summary: ERASED_TEXT });
        const contacts = await trx('contacts').where({ user_id: ctx.userId, email_key: key }).del();
        // Consent records and unconfirmed signups go with the address (their links stop working).
        const signups = await trx('signups').where({ user_id: ctx.userId, email_key: key }).del();
        const counts = { contacts, segment_recipients: segmentRows, messages, automation_enrolments: enrolments, skipped_import_rows: skipped, webhook_deliveries: hooks, signups };
        const summary = `An address erased: ${contacts} contacts, ${messages} messages, ${enrolments} enrolments, ${signups} signups`;
        await recordAudit(trx, ctx, { action: 'contact.erased', recordType: 'contact', recordId: loggedAddress(ctx, key), summary });
        return counts;
      });
      try {
        await reclaimFreedSpace(db, ERASED_FROM);
      } catch (err) {
        // The erasure stands; the database reclaims the space later by itself (docs/privacy-erase.md).
        logger.warn({ err }, 'freed space not reclaimed after an erasure');
      }
      return erased;
    },
  };
}

export type PrivacyService = ReturnType<typeof createPrivacyService>;
