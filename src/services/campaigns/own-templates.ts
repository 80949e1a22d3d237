import { insertId, nowValue } from '../../db/dialect';
import { liquidErrors } from './template-syntax';
import { LIMITS } from '../../lib/constants';
import { FieldErrors, NotFoundError } from '../../lib/errors';
import { timestamp } from '../../lib/time';
import { isBlank, messages, throwIfAny } from '../../lib/validation';
import type { Ctx, ServiceDeps } from '../context';
import { audited } from '../shared/audit-writer';

/** A design the account saved as its own template (table account_templates). */
export interface OwnTemplateRecord {
  id: number;
  user_id: number;
  template_name: string;
  /** The visual editor's project (GrapesJS project data as JSON text); null for a design written as HTML. */
  template_json: string | null;
  /** The exported, CSS-inlined HTML that mail is made from. */
  template_html: string;
  created_at: string | null;
  updated_at: string | null;
}

export function ownTemplateRecord(row: Record<string, unknown>): OwnTemplateRecord {
  return {
    id: Number(row.id),
    user_id: Number(row.user_id),
    template_name: String(row.template_name),
    template_json: row.template_json === null || row.template_json === undefined || row.template_json === '' ? null : String(row.template_json),
    template_html: String(row.template_html ?? ''),
    created_at: timestamp(row.created_at),
    updated_at: timestamp(row.updated_at),
  };
}

export interface OwnTemplateInput {
  template_name: string;
  template_json: string | null;
  template_html: string | null;
}

/** The name is required and fits its column; trimmed. */
function checkedName(name: unknown, errors: FieldErrors): string {
  const text = typeof name === 'string' ? name.trim() : '';
  if (!text) errors.template_name = [messages.required('template_name')];
  else if (text.length > LIMITS.string) errors.template_name = [messages.max('template_name', LIMITS.string)];
  return text;
}

/**
 * Designs saved by an account as its own templates ("Save as template" in the composer and on a
 * step's page), listed beside the built-in ones. Another account's template is a 404.
 */
export function createOwnTemplatesService({ db }: Pick<ServiceDeps, 'db'>) {
  const owned = (ctx: Ctx) => db('account_templates').where({ user_id: ctx.userId });

  async function get(ctx: Ctx, id: number): Promise<OwnTemplateRecord> {
    const row = Number.isSafeInteger(id) && id > 0 ? await owned(ctx).where({ id }).first() : undefined;
    if (!row) throw new NotFoundError();
    return ownTemplateRecord(row);
  }

  return {
    /** The account's templates, newest first (names and ids only: the designs can be large). */
    async list(ctx: Ctx): Promise<Array<Pick<OwnTemplateRecord, 'id' | 'template_name' | 'updated_at'>>> {
      const rows = await owned(ctx).orderBy('id', 'desc').select('id', 'template_name', 'updated_at');
      return rows.map((r) => ({ id: Number(r.id), template_name: String(r.template_name), updated_at: timestamp(r.updated_at) }));
    },

    get,

    /** Saves a design (its HTML is required; the editor's project is kept when given). Answers the new id. */
    async create(ctx: Ctx, input: OwnTemplateInput): Promise<number> {
      const errors: FieldErrors = {};
      const name = checkedName(input.template_name, errors);
      if (isBlank(input.template_html)) errors.template_html = ['The design is empty: add some content first.'];
      liquidErrors({ template_html: input.template_html }, errors);
      throwIfAny(errors);
      const now = nowValue();
      return audited(db, ctx, (trx) => insertId(trx, 'account_templates', {
        user_id: ctx.userId,
        template_name: name,
        template_json: isBlank(input.template_json) ? null : input.template_json,
        template_html: input.template_html,
        created_at: now,
        updated_at: now,
      }), (id) => ({ action: 'template.created', recordType: 'template', recordId: id, summary: name }));
    },

    async rename(ctx: Ctx, id: number, templateName: unknown): Promise<void> {
      const errors: FieldErrors = {};
      const name = checkedName(templateName, errors);
      throwIfAny(errors);
      await get(ctx, id);
      await audited(db, ctx, (trx) => trx('account_templates').where({ user_id: ctx.userId, id }).update({ template_name: name, updated_at: nowValue() }), () => ({
        action: 'template.updated', recordType: 'template', recordId: id, summary: `Renamed to ${name}`,
      }));
    },

    async remove(ctx: Ctx, id: number): Promise<void> {
      const template = await get(ctx, id);
      await audited(db, ctx, (trx) => trx('account_templates').where({ user_id: ctx.userId, id }).delete(), () => ({
        action: 'template.deleted', recordType: 'template', recordId: id, summary: template.template_name,
      }));
    },
  };
}

export type OwnTemplatesService = ReturnType<typeof createOwnTemplatesService>;
