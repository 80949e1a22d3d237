import { recordAudit } from '../shared/audit-writer';
import type { Knex } from 'knex';
import { upsertContacts, UpsertColumn, UpsertCount } from '../../db/contact-upsert';
import type { EncodedRows } from '../../db/import-batches';
import { insertId, isUniqueViolation, jsonValue, nowValue, parseJson, toCount } from '../../db/dialect';
import { emailKey } from '../../lib/email-key';
import { idChunks, idKeysetPage, idSeekPage, Keyset, matchesPage, Paging } from '../../db/paging';
import { liveContactTotal } from '../../db/contact-counts';
import type { ContactTextColumn } from '../../lib/constants';
import { FieldErrors, NotFoundError, ValidationError } from '../../lib/errors';
import { messages, throwIfAny } from '../../lib/validation';
import type { AudienceEvents } from './audience-events';
import { contactListQuery, contactRecord, ContactRecord, contactTypesById, liveContacts } from './contact-records';
import type { ContactTypesService } from './contact-types';
import type { Ctx, ServiceDeps } from '../context';
import { countryExists } from '../reference/country-lookup';
import { contactZone } from '../shared/contact-zones';
import { dropRuleMemberships, SegmentMemberships } from './segment-memberships';
import { addUnsubscribers, suppressImported } from '../shared/unsubscribers';
import { restoreOptOuts } from './erased-opt-outs';
import { emitHookEvents } from '../integrations/hook-outbox';
import { checkCustomValue, CustomFieldDef, customFieldDefs, CustomFieldSource, StoredCustomFields } from './custom-field-values';

/** What add and update take; on update an absent optional value keeps the stored one. */
export interface ContactInput {
  contact_type_id: number;
  email: string;
  /** The country's id; null for none (a signup form that does not ask it), absent on update keeps it. */
  country?: number | null;
  alt_email?: string | null;
  text: Partial<Record<ContactTextColumn, string>>;
  /** An IANA zone by its current name; null for none (derived at send time), absent on update keeps it. */
  time_zone?: string | null;
  /** `custom_field[<name>]` values; a blank value clears the field. */
  custom_field?: Record<string, unknown>;
}

interface Deps extends Pick<ServiceDeps, 'db' | 'secret'> {
  fields: CustomFieldSource;
  contactTypes: Pick<ContactTypesService, 'exists'>;
  events: AudienceEvents;
  memberships: Pick<SegmentMemberships, 'refreshContacts' | 'liveSegments'>;
}

export function createContactsService({ db, secret, contactTypes, fields, events, memberships }: Deps) {
  const live = (ctx: Ctx, q: Knex | Knex.Transaction = db) => q('contacts').where({ user_id: ctx.userId }).whereNull('deleted_at');

  /** Checks what needs the database; every failing field is reported at once. */
  async function check(ctx: Ctx, input: ContactInput, defs: CustomFieldDef[], selfId?: number, q: Knex = db): Promise<StoredCustomFields> {
    const errors: FieldErrors = {};
    const [typeOk, countryOk, taken] = await Promise.all([
      contactTypes.exists(ctx, input.contact_type_id, q),
      input.country === null || input.country === undefined || countryExists(q, input.country),
      live(ctx, q).where({ email_key: emailKey(input.email) }).modify((b) => selfId && b.whereNot({ id: selfId })).first('id'),
    ]);
    if (!typeOk) errors.contact_type_id = [messages.selected('contact_type_id')];
    if (taken) errors.email = [messages.taken('email')];
    if (!countryOk) errors.country = [messages.selected('country')];
    const values: StoredCustomFields = {};
    const byName = new Map(defs.map((d) => [d.field_name, d]));
    for (const [name, raw] of Object.entries(input.custom_field ?? {})) {
      const key = `custom_field[${name}]`;
      const def = byName.get(name);
      if (!def) {
        errors[key] = [messages.selected(key)];
        continue;
      }
      const checked = checkCustomValue(def, raw);
      if ('error' in checked) errors[key] = [checked.error];
      else values[name] = checked.value;
    }
    throwIfAny(errors);
    return values;
  }

  function columns(input: ContactInput): Record<string, unknown> {
    const email = input.email.trim();
    const row: Record<string, unknown> = { contact_type_id: input.contact_type_id, email, email_key: emailKey(email) };
    if (input.country !== undefined) row.country = input.country;
    if (input.alt_email !== undefined) row.alt_email = input.alt_email?.trim() || null;
    if (input.time_zone !== undefined) row.time_zone = input.time_zone;
    for (const [column, value] of Object.entries(input.text)) if (value !== undefined) row[column] = value.trim();
    return row;
  }

  /** A concurrent add of the same email loses on the unique index: the same 422 as the check. */
  async function uniqueEmail<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (err) {
      if (isUniqueViolation(err)) throw ValidationError.of('email', messages.taken('email'));
      throw err;
    }
  }

  /** Contacts deleted at once up to which each gets its own audit entry. */
  const AUDIT_EACH_MAX = 100;

  /** Soft-deletes the account's contacts among `ids` and their segment memberships; none matching is a 404. */
  async function removeMany(ctx: Ctx, ids: number[]): Promise<void> {
    await db.transaction(async (trx) => {
      const now = nowValue();
      const gone: { id: number; email: string }[] = await live(ctx, trx).whereIn('id', ids).select('id', 'email');
      const changed = await live(ctx, trx).whereIn('id', ids).update({ deleted_at: now, updated_at: now });
      if (!changed) throw new NotFoundError();
      await dropRuleMemberships(trx, ids);
      // One entry per contact, as far as a person reads them; a clean-up of thousands is one entry.
      await recordAudit(trx, ctx, gone.length <= AUDIT_EACH_MAX
        ? gone.map((c) => ({ action: 'contact.deleted' as const, recordType: 'contact', recordId: Number(c.id), summary: String(c.email) }))
        : [{ action: 'contact.deleted', recordType: 'contact', summary: `${gone.length} contacts` }], now);
    });
  }

  /** How a row of the list becomes a record: with the account's custom fields and type names. */
  async function recordOf(ctx: Ctx): Promise<(row: Record<string, unknown>) => ContactRecord> {
    const [defs, types] = await Promise.all([customFieldDefs(fields, ctx), contactTypesById(db, ctx)]);
    return (row) => contactRecord(row, defs, types);
  }

  /**
   * What a page placed by a contact's id needs besides its rows: the ids to page (the account's,
   * or a search's matches), the total, and how a row becomes a record.
   */
  async function listParts(ctx: Ctx, search?: string) {
    const record = await recordOf(ctx);
    // The whole list's total is the account's maintained count; a search's, a count of its matches.
    const total = search?.trim()
      ? liveContacts(db, ctx, search).count({ n: '*' }).first().then((row) => toCount(row?.n))
      : liveContactTotal(db, ctx.userId);
    // A search's matches are found first (through the search indexes), then ordered: an ordered
    // walk of the id index, which PostgreSQL picks for a small page, filters the whole account
    // when the matches are rare. The rows are then read by id alone.
    const ids = search?.trim() ? db.from('matches as c').withMaterialized('matches', liveContacts(db, ctx, search).select('c.id')) : liveContacts(db, ctx);
    return { ids, total, record };
  }

  return {
    /** One page of the list with its total (the `page` / `per_page` extension). */
    async listPage(ctx: Ctx, paging: Paging, search?: string) {
      const record = await recordOf(ctx);
      // A search's matches are found first (through the search indexes), then ordered and
      // counted in the same pass: an ordered walk of the id index, which PostgreSQL picks for a
      // small page, filters the whole account when the matches are rare.
      if (search?.trim()) return matchesPage(db, contactListQuery(db, ctx), liveContacts(db, ctx, search).select('c.id'), 'c.id', paging, record);
      // The whole list's total is the account's maintained count; its rows are read by id alone.
      return idSeekPage(contactListQuery(db, ctx), liveContacts(db, ctx), 'c.id', paging, liveContactTotal(db, ctx.userId), record);
    },

    /**
     * One page of the list placed by a contact's id (`after`: older ones, `before`: the page just
     * newer, `last`: the oldest page) with its total: the dashboard's pages, as fast deep in the
     * list as at its start.
     */
    async listPageAfter(ctx: Ctx, keyset: Keyset, search?: string) {
      const { ids, total, record } = await listParts(ctx, search);
      return idKeysetPage(contactListQuery(db, ctx), ids, 'c.id', keyset, total, record);
    },

    /** The whole list newest first, in chunks of records for streaming to the client (memory holds one chunk). */
    async *listChunks(ctx: Ctx, search?: string): AsyncGenerator<ContactRecord[]> {
      const [defs, types] = await Promise.all([customFieldDefs(fields, ctx), contactTypesById(db, ctx)]);
      for await (const rows of idChunks(contactListQuery(db, ctx, search), 'c.id')) yield rows.map((row) => contactRecord(row, defs, types));
    },

    async get(ctx: Ctx, id: number): Promise<ContactRecord> {
      const row = await live(ctx).where({ id }).first();
      if (!row) throw new NotFoundError();
      return contactRecord(row, await customFieldDefs(fields, ctx));
    },

    /** The time zone a send at each recipient's local time uses for the contact (its own, else derived). */
    async timeZoneOf(ctx: Ctx, id: number): Promise<string> {
      return contactZone(db, ctx.userId, id);
    },

    /** Adds a contact; `outer` runs it inside the caller's transaction (a savepoint of it). */
    async add(ctx: Ctx, input: ContactInput, outer?: Knex.Transaction): Promise<number> {
      const defs = await customFieldDefs(fields, ctx, outer);
      const custom = await check(ctx, input, defs, undefined, outer);
      const now = nowValue();
      return uniqueEmail(() =>
        (outer ?? db).transaction(async (trx) => {
          await restoreOptOuts(trx, secret, ctx.userId, [emailKey(input.email.trim())]);
          const id = await insertId(trx, 'contacts', {
            ...columns(input),
            user_id: ctx.userId,
            custom_fields: jsonValue(dropEmpty(custom)),
            created_at: now,
            updated_at: now,
          });
          await memberships.refreshContacts(ctx, [id], trx);
          await events.contactTypeJoined({ userId: ctx.userId, contactTypeId: input.contact_type_id, contactIds: [id] }, trx);
          // contact.created carries the contact as GET /contacts/details shows it.
          await emitHookEvents(trx, 'contact.created', [ctx.userId], async () => {
            const row = await trx('contacts').where({ id }).first();
            return [{ userId: ctx.userId, data: { contact: contactRecord(row, defs) }, contactKey: String(row.email_key) }];
          }, now);
          await recordAudit(trx, ctx, { action: 'contact.created', recordType: 'contact', recordId: id, summary: input.email.trim() }, now);
          return id;
        }),
      );
    },

    /** Updates a contact; `outer` runs it inside the caller's transaction (a savepoint of it). */
    async update(ctx: Ctx, id: number, input: ContactInput, outer?: Knex.Transaction): Promise<void> {
      const current = await live(ctx, outer).where({ id }).first('id', 'contact_type_id', 'custom_fields');
      if (!current) throw new NotFoundError();
      const custom = await check(ctx, input, await customFieldDefs(fields, ctx, outer), id, outer);
      const merged = dropEmpty({ ...parseJson<StoredCustomFields>(current.custom_fields, {}), ...custom });
      await uniqueEmail(() =>
        (outer ?? db).transaction(async (trx) => {
          await restoreOptOuts(trx, secret, ctx.userId, [emailKey(input.email.trim())]);
          const changed = await live(ctx, trx)
            .where({ id })
            .update({ ...columns(input), custom_fields: jsonValue(merged), updated_at: nowValue() });
          if (!changed) throw new NotFoundError();
          await memberships.refreshContacts(ctx, [id], trx);
          if (Number(current.contact_type_id) !== input.contact_type_id) {
            await events.contactTypeJoined({ userId: ctx.userId, contactTypeId: input.contact_type_id, contactIds: [id] }, trx);
          }
          await recordAudit(trx, ctx, { action: 'contact.updated', recordType: 'contact', recordId: id, summary: input.email.trim() });
        }),
      );
    },

    /**
     * Upserts one batch of imported contacts by email in its own transaction, moving existing
     * ones into the type, brings their rule segment memberships up to date, and announces
     * those that joined the type. Every bulk write of contacts
     * goes through here, as every single one goes through `add` / `update`.
     */
    async upsertBatch(
      ctx: Ctx,
      contactTypeId: number,
      batch: { columns: UpsertColumn[]; rows: EncodedRows; keys: () => string[]; marked?: Array<{ address: string; bounced: boolean }> },
      { durable = true } = {},
    ): Promise<UpsertCount> {
      const { columns, rows, keys, marked = [] } = batch;
      return db.transaction(async (trx) => {
        await restoreOptOuts(trx, secret, ctx.userId, keys());
        // Who was already in the type is only worth asking when someone listens for joins.
        const listened = events.hasContactTypeListeners() ? keys() : [];
        const livingKeys = () => live(ctx, trx).whereIn('email_key', listened);
        const members = listened.length > 0 ? new Set<string>(await livingKeys().where({ contact_type_id: contactTypeId }).pluck('email_key')) : undefined;
        // The batch's ids are only looked up (one more index probe a row) when segments need them.
        const withIds = memberships.liveSegments(ctx, trx);
        const { ids, ...count } = await upsertContacts(trx, { userId: ctx.userId, contactTypeId, now: nowValue(), columns, rows, withIds }, durable);
        await memberships.refreshContacts(ctx, ids, trx);
        // Rows an export marks unsubscribed or blocklisted go on the global unsubscribe list; bounced
        // or cleaned ones on the suppression list, as bounces (docs/import-export.md, Statuses).
        const unsubscribe = marked.filter((m) => !m.bounced).map((m) => m.address);
        const bounced = marked.filter((m) => m.bounced).map((m) => m.address);
        if (unsubscribe.length > 0) await addUnsubscribers(trx, { userId: ctx.userId, groupId: null }, unsubscribe);
        if (bounced.length > 0) await suppressImported(trx, ctx.userId, bounced);
        if (members) {
          const after: { id: number; email_key: string }[] = await livingKeys().select('id', 'email_key');
          const contactIds = after.filter((r) => !members.has(r.email_key)).map((r) => Number(r.id));
          await events.contactTypeJoined({ userId: ctx.userId, contactTypeId, contactIds }, trx);
        }
        return count;
      });
    },

    removeMany,
  };
}

/** Custom fields without a value are left out of the stored object. */
function dropEmpty(values: StoredCustomFields): StoredCustomFields | null {
  const kept = Object.entries(values).filter(([, v]) => v !== null && v !== undefined);
  return kept.length ? Object.fromEntries(kept) : null;
}

export type ContactsService = ReturnType<typeof createContactsService>;
