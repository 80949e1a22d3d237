import type { Knex } from 'knex';
import { insertId, nowValue } from '../../db/dialect';
import { CAMPAIGN_LIMITS, LIMITS, MESSAGE_STATE } from '../../lib/constants';
import { FieldErrors, NotFoundError, ValidationError } from '../../lib/errors';
import { timestamp } from '../../lib/time';
import { hasControlCharacters, isBlank, messages, throwIfAny } from '../../lib/validation';
import { liquidErrors } from '../campaigns/template-syntax';
import { TemplateRenderError } from '../../mail/liquid';
import { previewContent } from './message-kind';
import type { Ctx } from '../context';
import { audited } from '../shared/audit-writer';

/** A template of the account's transactional mail. */
export interface TransactionalTemplateRecord {
  id: number;
  name: string;
  subject: string;
  html: string;
  text: string | null;
  created_at: string | null;
  updated_at: string | null;
}

export interface TemplateInput {
  name: string;
  subject: string;
  html: string;
  text: string | null;
}

function templateRecord(row: Record<string, unknown>): TransactionalTemplateRecord {
  return {
    id: Number(row.id),
    name: String(row.name),
    subject: String(row.subject),
    html: String(row.html),
    text: row.text === null || row.text === undefined ? null : String(row.text),
    created_at: timestamp(row.created_at),
    updated_at: timestamp(row.updated_at),
  };
}

/** A template's fields checked; Liquid that does not parse is refused naming its line, as single sends do. */
export function checkTemplate(body: Record<string, unknown>): TemplateInput {
  const errors: FieldErrors = {};
  const text = (name: string, max: number, required: boolean): string | null => {
    const v = body[name];
    if (isBlank(v)) {
      if (required) errors[name] = [messages.required(name)];
      return null;
    }
    if (typeof v !== 'string') return (errors[name] = [messages.string(name)]), null;
    if (v.length > max) return (errors[name] = [messages.max(name, max)]), null;
    if ((name === 'name' || name === 'subject') && hasControlCharacters(v)) return (errors[name] = [messages.control(name)]), null;
    return v;
  };
  const input = {
    name: text('name', LIMITS.string, true) ?? '',
    subject: text('subject', CAMPAIGN_LIMITS.subject, true) ?? '',
    html: text('html', LIMITS.text * 16, true) ?? '',
    text: text('text', LIMITS.text * 16, false),
  };
  liquidErrors({ subject: input.subject, html: input.html, text: input.text }, errors);
  throwIfAny(errors);
  return input;
}

export function createTransactionalTemplates(db: Knex) {
  const owned = (ctx: Ctx, id: number) => db('transactional_templates').where({ id, user_id: ctx.userId });

  return {
    async list(ctx: Ctx): Promise<TransactionalTemplateRecord[]> {
      return (await db('transactional_templates').where({ user_id: ctx.userId }).orderBy('id', 'desc')).map(templateRecord);
    },

    async get(ctx: Ctx, id: number): Promise<TransactionalTemplateRecord> {
      const row = await owned(ctx, id).first();
      if (!row) throw new NotFoundError();
      return templateRecord(row);
    },

    async save(ctx: Ctx, input: TemplateInput): Promise<TransactionalTemplateRecord> {
      return audited(
        db,
        ctx,
        async (trx) => {
          const now = nowValue();
          const id = await insertId(trx, 'transactional_templates', { user_id: ctx.userId, ...input, created_at: now, updated_at: now });
          return templateRecord(await trx('transactional_templates').where({ id }).first());
        },
        (t) => ({ action: 'transactional_template.created', recordType: 'transactional_template', recordId: t.id, summary: t.name }),
      );
    },

    async update(ctx: Ctx, id: number, input: TemplateInput): Promise<TransactionalTemplateRecord> {
      return audited(
        db,
        ctx,
        async (trx) => {
          const changed = await trx('transactional_templates').where({ id, user_id: ctx.userId }).update({ ...input, updated_at: nowValue() });
          if (!changed) throw new NotFoundError();
          return templateRecord(await trx('transactional_templates').where({ id }).first());
        },
        (t) => ({ action: 'transactional_template.updated', recordType: 'transactional_template', recordId: t.id, summary: t.name }),
      );
    },

    /** A template's content as a message with sample `data` (Liquid that fails is said, not thrown). */
    preview(content: { subject: string; html: string; text: string | null }, data: Record<string, unknown>): { subject: string; html: string; text: string } | { error: string } {
      try {
        return previewContent(content, data);
      } catch (err) {
        if (err instanceof TemplateRenderError) return { error: err.message };
        throw err;
      }
    },

    /** Deletes a template no queued message still names (its content is copied into each message, but the log shows it by name). */
    async remove(ctx: Ctx, id: number): Promise<void> {
      await audited(
        db,
        ctx,
        async (trx) => {
          const row = await trx('transactional_templates').where({ id, user_id: ctx.userId }).first('id', 'name');
          if (!row) throw new NotFoundError();
          const queued = await trx('transactional_messages as t')
            .join('send_messages as m', 'm.id', 't.id')
            .where({ 't.user_id': ctx.userId, 't.template_id': id })
            .whereIn('m.state', [MESSAGE_STATE.queued, MESSAGE_STATE.sending])
            .first('t.id');
          if (queued) throw ValidationError.of('id', 'This template is used by a message still queued; delete it once that message has gone.');
          await trx('transactional_templates').where({ id }).delete();
          return String(row.name);
        },
        (name) => ({ action: 'transactional_template.deleted', recordType: 'transactional_template', recordId: id, summary: name }),
      );
    },
  };
}
