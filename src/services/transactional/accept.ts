import type { Knex } from 'knex';
import { insertId, jsonValue, nowValue, rowsPerInsert } from '../../db/dialect';
import { MESSAGE_KIND, MESSAGE_PRIORITY, MESSAGE_STATE, type TransactionalStatus } from '../../lib/constants';
import { emailKey } from '../../lib/email-key';
import { FieldErrors, ValidationError } from '../../lib/errors';
import { messages } from '../../lib/validation';
import { liquidErrors } from '../campaigns/template-syntax';
import { domainStatusesOf, SENDER_DOMAIN_UNAUTHENTICATED } from '../delivery/relays';
import type { MessageInput } from './message-input';

/** One message as a send answers it. */
export interface AcceptedMessage {
  id: string;
  to: string;
  status: Extract<TransactionalStatus, 'queued' | 'suppressed'>;
}

/** How a message came in. */
export type MessageSource = 'api' | 'smtp';

/** Why a message to a suppressed address was never sent. */
export const SUPPRESSED_WORDS = 'suppressed: the address bounced or complained before';

const ID_PREFIX = 'tx_';

/** The id the API shows for a ledger row. */
export function txId(ledgerId: number): string {
  return `${ID_PREFIX}${ledgerId}`;
}

/** The ledger id of a `tx_` id, or undefined. */
export function ledgerIdOf(id: unknown): number | undefined {
  const match = typeof id === 'string' ? /^tx_([1-9]\d{0,15})$/.exec(id) : null;
  return match ? Number(match[1]) : undefined;
}

/**
 * What the service made of a source text (a subject, a body), remembered so that an app sending
 * the same ones again and again costs the work once: a few hundred, the oldest forgotten first,
 * a very long source never kept.
 */
export class RecentSources<V> {
  private readonly values = new Map<string, V>();
  constructor(private readonly size = 256, private readonly longest = 64 * 1024) {}

  get(source: string): V | undefined {
    return this.values.get(source);
  }

  set(source: string, value: V): void {
    if (source.length > this.longest) return;
    if (this.values.size >= this.size && !this.values.has(source)) this.values.delete(this.values.keys().next().value as string);
    this.values.set(source, value);
  }
}

interface Resolved {
  input: MessageInput;
  sender: { id: number | null; name: string; address: string; replyTo: string | null };
  content: { subject: string; html: string | null; text: string | null };
}

/**
 * What each message needs from the account, checked for all of them before anything is
 * written: its sender (verified, by id or address) and its template. Errors are named by
 * `prefixOf(i)` (`messages[3].` in a batch). With `requireDomainAuth` (REQUIRE_DOMAIN_AUTH) a
 * sender whose domain is not a verified sending domain is refused as starting a campaign is.
 */
export async function resolveMessages(db: Knex, userId: number, inputs: MessageInput[], prefixOf: (i: number) => string, requireDomainAuth = false, parsed?: RecentSources<true>): Promise<Resolved[]> {
  const errors: FieldErrors = {};
  const senderIds = [...new Set(inputs.map((m) => m.senderId).filter((id): id is number => id !== undefined))];
  const fromKeys = [...new Set(inputs.filter((m) => m.senderId === undefined && m.from).map((m) => emailKey(m.from!)))];
  const verified = () => db('senders').where({ user_id: userId, is_verified: 1 }).whereNull('deleted_at');
  const byId = new Map((senderIds.length ? await verified().whereIn('id', senderIds) : []).map((s) => [Number(s.id), s]));
  const byAddress = new Map<string, Record<string, unknown>>();
  if (fromKeys.length) for (const s of await verified().orderBy('id')) if (!byAddress.has(emailKey(String(s.from_email)))) byAddress.set(emailKey(String(s.from_email)), s);
  const templateIds = [...new Set(inputs.map((m) => m.templateId).filter((id): id is number => id !== undefined))];
  const statusOf = requireDomainAuth ? await domainStatusesOf(db, userId) : undefined;
  const templates = new Map((templateIds.length ? await db('transactional_templates').where({ user_id: userId }).whereIn('id', templateIds) : []).map((t) => [Number(t.id), t]));

  const resolved = inputs.map((input, i): Resolved | undefined => {
    const prefix = prefixOf(i);
    const sender = input.senderId !== undefined ? byId.get(input.senderId) : byAddress.get(emailKey(input.from!));
    if (!sender) {
      if (input.senderId !== undefined) errors[`${prefix}sender_id`] = [messages.selected('sender_id')];
      else errors[`${prefix}from`] = ['The from must be the address of a verified sender of the account.'];
    } else if (statusOf && statusOf(String(sender.from_email)) !== 'verified') {
      errors[`${prefix}${input.senderId !== undefined ? 'sender_id' : 'from'}`] = [SENDER_DOMAIN_UNAUTHENTICATED];
    }
    const template = input.templateId !== undefined ? templates.get(input.templateId) : undefined;
    if (input.templateId !== undefined && !template) errors[`${prefix}template_id`] = [messages.selected('template_id')];
    const own: FieldErrors = {};
    // An app sends the same subject and body again and again: each parses once while remembered.
    const fresh = Object.fromEntries(Object.entries({ subject: input.subject, html: input.html, text: input.text }).filter(([, v]) => v && !parsed?.get(v)));
    liquidErrors(fresh, own);
    for (const [name, source] of Object.entries(fresh)) if (!own[name]) parsed?.set(source!, true);
    for (const [name, list] of Object.entries(own)) errors[`${prefix}${name}`] = list;
    if (!sender || (input.templateId !== undefined && !template)) return undefined;
    return {
      input,
      sender: { id: Number(sender.id), name: String(sender.from_name ?? ''), address: String(sender.from_email), replyTo: sender.reply_to_email ? String(sender.reply_to_email) : null },
      content: {
        subject: input.subject ?? String(template?.subject ?? ''),
        html: input.html ?? (template ? String(template.html) : null),
        text: input.text ?? (template?.text ? String(template.text) : null),
      },
    };
  });
  if (Object.keys(errors).length) throw new ValidationError(errors);
  return resolved as Resolved[];
}

/**
 * Writes the messages of one request in the caller's transaction: for each recipient a ledger
 * row of the transactional kind (queued, or suppressed for an address the account holds as
 * bounced or complained) and what it is built from. Marketing unsubscribes do not stop it.
 */
export async function writeMessages(trx: Knex.Transaction, userId: number, messages: Resolved[], source: MessageSource): Promise<AcceptedMessage[]> {
  const now = nowValue();
  const keys = [...new Set(messages.flatMap((m) => m.input.to.map(emailKey)))];
  const suppressed = new Set<string>();
  const contacts = new Map<string, number>();
  for (let i = 0; i < keys.length; i += 500) {
    const chunk = keys.slice(i, i + 500);
    for (const row of await trx('suppressed_addresses').where({ user_id: userId }).whereIn('email_key', chunk).select('email_key')) suppressed.add(String(row.email_key));
    for (const row of await trx('contacts').where({ user_id: userId }).whereNull('deleted_at').whereIn('email_key', chunk).orderBy('id').select('id', 'email_key')) {
      if (!contacts.has(String(row.email_key))) contacts.set(String(row.email_key), Number(row.id));
    }
  }
  const answer: AcceptedMessage[] = [];
  const tags: { message_id: number; user_id: number; tag: string }[] = [];
  for (const { input, sender, content } of messages) {
    for (const to of input.to) {
      const key = emailKey(to);
      const isSuppressed = suppressed.has(key);
      const id = await insertId(trx, 'send_messages', {
        user_id: userId,
        kind: MESSAGE_KIND.transactional,
        contact_id: contacts.get(key) ?? null,
        email: to,
        email_key: key,
        priority: MESSAGE_PRIORITY.transactional,
        state: isSuppressed ? MESSAGE_STATE.suppressed : MESSAGE_STATE.queued,
        available_at: isSuppressed ? null : (input.sendAt?.toISOString() ?? now),
        last_error: isSuppressed ? SUPPRESSED_WORDS : null,
        created_at: now,
        updated_at: now,
      });
      await trx('transactional_messages').insert({
        id,
        user_id: userId,
        sender_id: sender.id,
        from_name: sender.name,
        from_email: sender.address,
        reply_to: input.replyTo ?? sender.replyTo,
        subject: content.subject,
        html: content.html,
        text: content.text,
        template_id: input.templateId ?? null,
        data: jsonValue(input.data),
        cc: input.cc.length ? jsonValue(input.cc) : null,
        bcc: input.bcc.length ? jsonValue(input.bcc) : null,
        headers: Object.keys(input.headers).length ? jsonValue(input.headers) : null,
        attachments: input.attachments.length ? jsonValue(input.attachments) : null,
        tags: jsonValue(input.tags),
        track_opens: input.trackOpens,
        track_clicks: input.trackClicks,
        source,
        created_at: now,
      });
      for (const tag of input.tags) tags.push({ message_id: id, user_id: userId, tag });
      answer.push({ id: txId(id), to, status: isSuppressed ? 'suppressed' : 'queued' });
    }
  }
  // The tags of the whole request in a few statements, not one per recipient.
  const chunk = rowsPerInsert(trx, 3);
  for (let i = 0; i < tags.length; i += chunk) await trx('transactional_tags').insert(tags.slice(i, i + chunk));
  return answer;
}
