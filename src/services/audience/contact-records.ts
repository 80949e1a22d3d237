import type { Knex } from 'knex';
import { contactSearchCandidates, likeOperator, likePattern } from '../../db/expressions';
import { timestamp } from '../../lib/time';
import type { Ctx } from '../context';
import { contactTypeRecord, ContactTypeRecord } from './contact-types';
import { customFieldObject, CustomFieldDef } from './custom-field-values';

/** A contact as the reference shapes it; `contact_type` only in the list. */
export interface ContactRecord {
  id: number;
  user_id: number;
  contact_type_id: number;
  first_name: string;
  last_name: string;
  email: string;
  alt_email: string | null;
  /** The country's name in the list, its id as a string in the details. */
  country: string | null;
  state: string;
  city: string;
  address_line1: string;
  address_line2: string;
  state_province_region: string;
  postal_code: string;
  /** Extension: the contact's own IANA time zone; null when it has none (a send derives one). */
  time_zone: string | null;
  custom_field: Record<string, { field_name: string; field_value: string | null }> | null;
  deleted_at: string | null;
  created_at: string | null;
  updated_at: string | null;
  fullname: string;
  contact_type?: ContactTypeRecord;
}

export function fullName(first: unknown, last: unknown): string {
  const a = text(first).trim();
  const b = text(last).trim();
  return a && b ? `${a} ${b}` : a || b;
}

const text = (v: unknown) => (v === null || v === undefined ? '' : String(v));

/** The account's contact types (deleted ones too) shaped as the list shows them, by id: loaded once per list. */
export type ContactTypesById = Map<number, ContactTypeRecord>;

export async function contactTypesById(db: Knex, ctx: Ctx): Promise<ContactTypesById> {
  const rows: Record<string, unknown>[] = await db('contact_types').where({ user_id: ctx.userId }).select('id', 'user_id', 'name', 'deleted_at', 'created_at', 'updated_at');
  return new Map(rows.map((row) => [Number(row.id), contactTypeRecord(row)]));
}

/** A contact as the details show it, or as the list shows it (`types` given: the country's name and the type). */
export function contactRecord(row: Record<string, unknown>, defs: CustomFieldDef[], types?: ContactTypesById): ContactRecord {
  const country = types ? row.country_name : row.country;
  const record: ContactRecord = {
    id: Number(row.id),
    user_id: Number(row.user_id),
    contact_type_id: Number(row.contact_type_id),
    first_name: text(row.first_name),
    last_name: text(row.last_name),
    email: text(row.email),
    alt_email: row.alt_email === null || row.alt_email === undefined ? null : String(row.alt_email),
    country: country === null || country === undefined ? null : String(country),
    state: text(row.state),
    city: text(row.city),
    address_line1: text(row.address_line1),
    address_line2: text(row.address_line2),
    state_province_region: text(row.state_province_region),
    postal_code: text(row.postal_code),
    time_zone: row.time_zone === null || row.time_zone === undefined || row.time_zone === '' ? null : String(row.time_zone),
    custom_field: customFieldObject(defs, row.custom_fields),
    deleted_at: timestamp(row.deleted_at),
    created_at: timestamp(row.created_at),
    updated_at: timestamp(row.updated_at),
    fullname: fullName(row.first_name, row.last_name),
  };
  if (types) record.contact_type = types.get(record.contact_type_id);
  return record;
}

/**
 * The live contacts of an account (`contacts c`, no columns chosen), optionally narrowed by
 * `search`: a substring of the email or of the full name, ignoring case. The full name holds the
 * first and the last name, so it alone answers a search on either (and one index serves it).
 */
export function liveContacts(db: Knex, ctx: Ctx, search?: string): Knex.QueryBuilder {
  const query = db('contacts as c').where('c.user_id', ctx.userId).whereNull('c.deleted_at');
  const term = search?.trim();
  if (term) {
    const like = likeOperator(db);
    const pattern = likePattern(term, 'contains');
    const candidates = contactSearchCandidates(db, 'c.id', term);
    if (candidates) query.whereRaw(candidates.sql, candidates.bindings);
    query.where((w) => {
      w.whereRaw(`c.email ${like} ? escape '\\'`, [pattern]);
      w.orWhereRaw(`(c.first_name || ' ' || c.last_name) ${like} ? escape '\\'`, [pattern]);
    });
  }
  return query;
}

/** The live contacts of an account with the country's name the list shows. Unordered: callers page it by id. */
export function contactListQuery(db: Knex, ctx: Ctx, search?: string): Knex.QueryBuilder {
  return liveContacts(db, ctx, search).leftJoin('countries as co', 'co.id', 'c.country').select('c.*', 'co.name as country_name');
}
