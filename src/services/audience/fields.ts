import type { Knex } from 'knex';
import { insertId, isUniqueViolation, jsonHasKey, jsonWithoutKey, nowValue } from '../../db/dialect';
import { listPage, Paging } from '../../db/paging';
import { CustomFieldType, NOT_CUSTOM_FIELD_NAMES, RESERVED_FIELD_NAMES } from '../../lib/constants';
import { NotFoundError, ValidationError } from '../../lib/errors';
import { timestamp } from '../../lib/time';
import { messages } from '../../lib/validation';
import type { Ctx, ServiceDeps } from '../context';
import { audited, recordAudit, summaries } from '../shared/audit-writer';

/** A reserved field (user_id null, is_reserved 1) or a custom field of an account. */
export interface FieldRecord {
  id: number;
  user_id: number | null;
  field_name: string;
  field_type: string;
  is_reserved: number;
  created_at: string | null;
  updated_at: string | null;
}

export function fieldRecord(row: Record<string, unknown>): FieldRecord {
  return {
    id: Number(row.id),
    user_id: row.user_id === null || row.user_id === undefined ? null : Number(row.user_id),
    field_name: String(row.field_name),
    field_type: String(row.field_type),
    is_reserved: Number(row.is_reserved),
    created_at: timestamp(row.created_at),
    updated_at: timestamp(row.updated_at),
  };
}

/** A custom field as the dashboard shows it: with the words people see for it (its label, else its name). */
export interface CustomFieldRecord extends FieldRecord {
  label: string;
}

const REFUSED_NAMES = new Set([...RESERVED_FIELD_NAMES, ...NOT_CUSTOM_FIELD_NAMES].map((n) => n.toLowerCase()));

/**
 * Contact fields: the reserved ones are the contact columns (seeded, shared by every account);
 * custom ones belong to an account and their values live in contacts.custom_fields, keyed by name.
 */
export function createFieldsService({ db }: Pick<ServiceDeps, 'db'>) {
  const custom = (ctx: Ctx, q: Knex = db) => q('fields').where({ user_id: ctx.userId, is_reserved: 0 });

  return {
    async listReserved(paging?: Paging) {
      return listPage(db('fields').whereNull('user_id').orderBy('id'), paging, fieldRecord);
    },

    /** The account's custom fields, newest first, as the API lists them. */
    async pageCustom(ctx: Ctx, paging?: Paging) {
      return listPage(custom(ctx).orderBy('id', 'desc'), paging, fieldRecord);
    },

    /**
     * Every custom field of the account (contacts and segments check names and types against
     * them); inside a transaction pass it (SQLite has one connection).
     */
    async listCustom(ctx: Ctx, trx?: Knex.Transaction): Promise<CustomFieldRecord[]> {
      return (await custom(ctx, trx).orderBy('id')).map((row) => ({ ...fieldRecord(row), label: String(row.label ?? '').trim() || String(row.field_name) }));
    },

    /** `label`: the words people know it by, when not its name (an import's header). */
    async addCustom(ctx: Ctx, input: { field_name: string; field_type: CustomFieldType; label?: string }): Promise<number> {
      const name = input.field_name;
      const label = input.label && input.label !== name ? input.label.slice(0, 255) : null;
      if (REFUSED_NAMES.has(name.toLowerCase())) throw ValidationError.of('field_name', messages.reserved('field_name'));
      const now = nowValue();
      try {
        return await audited(db, ctx, (trx) => insertId(trx, 'fields', { user_id: ctx.userId, field_name: name, field_type: input.field_type, label, is_reserved: 0, created_at: now, updated_at: now }), (id) => ({
          action: 'field.created', recordType: 'field', recordId: id, summary: summaries.field(name, input.field_type),
        }));
      } catch (err) {
        // The unique index on (user_id, lower(field_name)) decides, also between concurrent saves.
        if (isUniqueViolation(err)) throw ValidationError.of('field_name', messages.taken('field_name'));
        throw err;
      }
    },

    /** Deletes custom fields and, in the same transaction, their values on the account's contacts. */
    async removeCustom(ctx: Ctx, ids: number[]): Promise<void> {
      await db.transaction(async (trx) => {
        const rows: { id: number; field_name: string }[] = await trx('fields').where({ user_id: ctx.userId, is_reserved: 0 }).whereIn('id', ids).select('id', 'field_name');
        if (rows.length === 0) throw new NotFoundError();
        await trx('fields').whereIn('id', rows.map((r) => r.id)).delete();
        for (const { field_name: name } of rows) {
          await trx('contacts')
            .where({ user_id: ctx.userId })
            .whereNotNull('custom_fields')
            .where(jsonHasKey(db, 'custom_fields', name))
            .update({ custom_fields: jsonWithoutKey(db, 'custom_fields', name) });
        }
        await recordAudit(trx, ctx, rows.map((r) => ({ action: 'field.deleted' as const, recordType: 'field', recordId: Number(r.id), summary: r.field_name })));
      });
    },
  };
}

export type FieldsService = ReturnType<typeof createFieldsService>;
