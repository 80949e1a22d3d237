import { recordAudit } from '../shared/audit-writer';
import type { Knex } from 'knex';
import { insertId, isUniqueViolation, nowValue, preparedAs, toCount } from '../../db/dialect';
import { listPage, Paging } from '../../db/paging';
import { liveContactCountColumn } from '../../db/contact-counts';
import { NotFoundError, ValidationError } from '../../lib/errors';
import { timestamp } from '../../lib/time';
import { messages } from '../../lib/validation';
import type { Ctx, ServiceDeps } from '../context';
import { dropRuleMemberships } from './segment-memberships';

export interface ContactTypeRecord {
  id: number;
  user_id: number;
  name: string;
  deleted_at: string | null;
  created_at: string | null;
  updated_at: string | null;
  contacts_count?: number;
}

const TYPE_COLUMNS = ['id', 'user_id', 'name', 'deleted_at', 'created_at', 'updated_at'] as const;

export function contactTypeRecord(row: Record<string, unknown>): ContactTypeRecord {
  const record: ContactTypeRecord = {
    id: Number(row.id),
    user_id: Number(row.user_id),
    name: String(row.name),
    deleted_at: timestamp(row.deleted_at),
    created_at: timestamp(row.created_at),
    updated_at: timestamp(row.updated_at),
  };
  if (row.contacts_count !== undefined) record.contacts_count = toCount(row.contacts_count);
  return record;
}

/** The unique index on (user_id, lower(name)) of live types decides, also between concurrent saves. */
async function uniqueName<T>(write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (err) {
    if (isUniqueViolation(err)) throw ValidationError.of('name', messages.taken('name'));
    throw err;
  }
}

export function createContactTypesService({ db }: Pick<ServiceDeps, 'db'>) {
  const live = (ctx: Ctx, q: Knex | Knex.Transaction = db) => q('contact_types').where({ user_id: ctx.userId }).whereNull('deleted_at');

  return {
    /** The live types newest first, each with its live contacts (a maintained count, src/db/contact-counts.ts). */
    async list(ctx: Ctx, paging?: Paging) {
      // Named columns, not `*`: a prepared statement's columns must not change under it (a column added by a newer release).
      const query = live(ctx).select(...TYPE_COLUMNS.map((c) => `contact_types.${c}`), liveContactCountColumn(db)).orderBy('id', 'desc');
      // The whole list (no paging) is the API's hot read; a page's text differs, so it stays unnamed.
      return listPage(paging ? query : preparedAs(db, query, 'contact-types-list'), paging, contactTypeRecord);
    },

    async get(ctx: Ctx, id: number): Promise<ContactTypeRecord> {
      const row = await live(ctx).where({ id }).first();
      if (!row) throw new NotFoundError();
      return contactTypeRecord(row);
    },

    /** True when the id names a live contact type of this account. */
    async exists(ctx: Ctx, id: number, q: Knex = db): Promise<boolean> {
      return Boolean(await q('contact_types').where({ user_id: ctx.userId, id }).whereNull('deleted_at').first('id'));
    },

    /** A name another live type of the account has (ignoring case) is a 422 on `name`. */
    async add(ctx: Ctx, input: { name: string }): Promise<number> {
      const now = nowValue();
      return uniqueName(() =>
        db.transaction(async (trx) => {
          const id = await insertId(trx, 'contact_types', { user_id: ctx.userId, name: input.name.trim(), created_at: now, updated_at: now });
          await recordAudit(trx, ctx, { action: 'contact_type.created', recordType: 'contact_type', recordId: id, summary: input.name.trim() }, now);
          return id;
        }),
      );
    },

    async update(ctx: Ctx, id: number, input: { name: string }): Promise<void> {
      const changed = await uniqueName(() =>
        db.transaction(async (trx) => {
          const n = await live(ctx, trx).where({ id }).update({ name: input.name.trim(), updated_at: nowValue() });
          if (n) await recordAudit(trx, ctx, { action: 'contact_type.updated', recordType: 'contact_type', recordId: id, summary: input.name.trim() });
          return n;
        }),
      );
      if (!changed) throw new NotFoundError();
    },

    /** Soft-deletes the type and, in the same transaction, its contacts. */
    async remove(ctx: Ctx, id: number): Promise<void> {
      await db.transaction(async (trx) => {
        const now = nowValue();
        const changed = await trx('contact_types')
          .where({ id, user_id: ctx.userId })
          .whereNull('deleted_at')
          .update({ deleted_at: now, updated_at: now });
        if (!changed) throw new NotFoundError();
        const contacts = () => trx('contacts').where({ contact_type_id: id, user_id: ctx.userId }).whereNull('deleted_at');
        await dropRuleMemberships(trx, contacts().select('id'));
        await contacts().update({ deleted_at: now, updated_at: now });
        await recordAudit(trx, ctx, { action: 'contact_type.deleted', recordType: 'contact_type', recordId: id }, now);
      });
    },
  };
}

export type ContactTypesService = ReturnType<typeof createContactTypesService>;
