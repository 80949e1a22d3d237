import type { Knex } from 'knex';
import { previewMessage } from '../delivery/messages';
import { queueSystemMail } from '../delivery/notices';
import { NotFoundError, ValidationError } from '../../lib/errors';
import type { Turns } from '../../lib/turns';
import { isUtr } from '../../lib/utr';
import { messages } from '../../lib/validation';
import type { Ctx, ServiceDeps } from '../context';
import type { RecipientRef } from './campaign-refs';
import type { SingleSendsService } from './single-sends';

/**
 * Test sends (extensions `POST /single/send/test` and
 * `POST /automations/schedule/test`): the message is rendered for one contact (a chosen one,
 * or the first of the audience) as the worker would, with `[Test] ` before its subject, and
 * written to the send ledger as system mail, so the worker sends it through the same transport
 * with the same retries. It is never counted: no statistics, no pixel, links as written, and its
 * unsubscribe links (for a message that does not exist) record nothing.
 */
/** The audience's first contact (lowest id) of the account: whom a test or a preview is shown as by default. */
export async function firstContactOf(db: Knex, ctx: Ctx, audience: RecipientRef[]): Promise<{ id: number; email: string } | undefined> {
  const ids = (table: string) => audience.filter((r) => r.table === table).map((r) => Number(r.id));
  const live = () => db('contacts as c').where('c.user_id', ctx.userId).whereNull('c.deleted_at');
  const candidates: Knex.QueryBuilder[] = [];
  if (ids('contacts_').length) candidates.push(live().whereIn('c.contact_type_id', ids('contacts_')));
  if (ids('segments_').length) candidates.push(live().whereIn('c.id', db('segment_recipients').whereIn('segment_id', ids('segments_')).whereNotNull('contact_id').select('contact_id')));
  let first: { id: number; email: string } | undefined;
  for (const query of candidates) {
    const row = await query.orderBy('c.id').first('c.id', 'c.email');
    if (row && (!first || Number(row.id) < first.id)) first = { id: Number(row.id), email: String(row.email) };
  }
  return first;
}

interface Deps extends Pick<ServiceDeps, 'db' | 'config' | 'secret'> {
  singleSends: Pick<SingleSendsService, 'get'>;
  /** Whose turn it is to render (see Turns). */
  renderTurns: Turns;
}

export function createTestSendsService({ db, config, secret, singleSends, renderTurns }: Deps) {
  /** The chosen contact (422 when it is not the account's), or the first contact of the refs. */
  async function contactFor(ctx: Ctx, contactId: number | undefined, audience: RecipientRef[]): Promise<{ id: number; email: string } | undefined> {
    if (contactId !== undefined) {
      const chosen = await db('contacts').where({ id: contactId, user_id: ctx.userId }).whereNull('deleted_at').first('id', 'email');
      if (!chosen) throw ValidationError.of('contact_id', messages.selected('contact_id'));
      return { id: Number(chosen.id), email: String(chosen.email) };
    }
    return firstContactOf(db, ctx, audience);
  }

  async function queue(ctx: Ctx, addresses: string[], message: { subject: string; html: string; text: string }, from: { name: string; address: string }, replyTo: string): Promise<void> {
    await db.transaction(async (trx) => {
      for (const to of addresses) {
        await queueSystemMail(trx, ctx.userId, { from, to, replyTo, subject: `[Test] ${message.subject}`, html: message.html, text: message.text });
      }
    });
  }

  return {
    async singleSend(ctx: Ctx, utr: string, addresses: string[], contactId?: number): Promise<void> {
      const send = await singleSends.get(ctx, utr);
      const contact = await contactFor(ctx, contactId, send.recipient_id);
      const message = await previewMessage(db, secret, config.baseUrl, { userId: ctx.userId, singleSendId: send.id, contact }, { untracked: true, turns: renderTurns });
      if (!message) throw new NotFoundError();
      await queue(ctx, addresses, message, { name: send.sender_name ?? '', address: send.from_sender }, send.reply_to || send.from_sender);
    },

    async automationStep(ctx: Ctx, utr: string, addresses: string[], contactId?: number): Promise<void> {
      const step = isUtr(utr)
        ? await db('automation_schedules as s')
            .join('automations as a', 'a.id', 's.automation_id')
            .leftJoin('senders as d', 'd.id', 's.sender_id')
            .where({ 's.utr': utr, 's.user_id': ctx.userId })
            .whereNull('a.deleted_at')
            .first('s.id', 'a.automation_for', 'a.automation_for_table', 'd.from_name', 'd.from_email', 'd.reply_to_email')
        : undefined;
      if (!step) throw new NotFoundError();
      const audience: RecipientRef[] = step.automation_for && step.automation_for_table ? [{ id: String(step.automation_for), table: step.automation_for_table }] : [];
      const contact = await contactFor(ctx, contactId, audience);
      const message = await previewMessage(db, secret, config.baseUrl, { userId: ctx.userId, scheduleId: Number(step.id), contact }, { untracked: true, turns: renderTurns });
      if (!message) throw new NotFoundError();
      const from = { name: String(step.from_name ?? ''), address: String(step.from_email ?? config.mailFrom) };
      await queue(ctx, addresses, message, from, String(step.reply_to_email || from.address));
    },
  };
}

export type TestSendsService = ReturnType<typeof createTestSendsService>;
