import type { Knex } from 'knex';
import { likeOperator, likePattern } from '../../db/expressions';
import { timestamp } from '../../lib/time';
import type { Ctx } from '../context';
import { contactTypeRecord, ContactTypeRecord } from './contact-types';
import { customFieldObject, CustomFieldDef } from './custom-field-values';
import { parseJson } from '../../db/dialect';
import { json, jsonTextSql } from '../../db/json-text';

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
  custom_field: Record<string, { field_name: string; field_value: string | null }> | null;
  deleted_at: string | null;
  created_at: string | null;
  updated_at: string | null;
  fullname: string;
  contact_type?: ContactTypeRecord;
}

export function fullName(first: unknown, last: unknown): string {
  return [first, last].map((v) => String(v ?? '').trim()).filter(Boolean).join(' ');
}

const text = (v: unknown) => (v === null || v === undefined ? '' : String(v));

/** Contact types already shaped, by id: a list of many contacts shares a few types. */
export type ContactTypeCache = Map<number, ContactTypeRecord>;

export function contactRecord(row: Record<string, unknown>, defs: CustomFieldDef[], view: 'list' | 'details', types: ContactTypeCache = new Map()): ContactRecord {
  const country = view === 'list' ? row.country_name : row.country;
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
    custom_field: customFieldObject(defs, row.custom_fields),
    deleted_at: timestamp(row.deleted_at),
    created_at: timestamp(row.created_at),
    updated_at: timestamp(row.updated_at),
    fullname: fullName(row.first_name, row.last_name),
  };
  if (view === 'list') {
    let type = types.get(record.contact_type_id);
    if (!type) {
      type = contactTypeRecord({
        id: row.contact_type_id,
        user_id: row.user_id,
        name: row.ct_name,
        deleted_at: row.ct_deleted_at,
        created_at: row.ct_created_at,
        updated_at: row.ct_updated_at,
      });
      types.set(record.contact_type_id, type);
    }
    record.contact_type = type;
  }
  return record;
}

/**
 * The list's JSON of one contact, written straight from the row: the same text as
 * `JSON.stringify(contactRecord(row, defs, 'list'))`, without building a record, a custom-field
 * object and a contact type per row (with many readers of a long list, making and dropping
 * those objects was where the time went). Each contact type is written once per list.
 */
export function contactListJson(defs: CustomFieldDef[]): (row: Record<string, unknown>) => string {
  const types = new Map<unknown, string>();
  const customField = customFieldJson(defs);
  return (row) => {
    let type = types.get(row.contact_type_id);
    if (type === undefined) {
      type = JSON.stringify(contactTypeRecord({ id: row.contact_type_id, user_id: row.user_id, name: row.ct_name, deleted_at: row.ct_deleted_at, created_at: row.ct_created_at, updated_at: row.ct_updated_at }));
      types.set(row.contact_type_id, type);
    }
    return `{"id":${num(row.id)},"user_id":${num(row.user_id)},"contact_type_id":${num(row.contact_type_id)},"first_name":${str(row.first_name)},"last_name":${str(row.last_name)},"email":${str(row.email)},"alt_email":${nullable(row.alt_email)},"country":${nullable(row.country_name)},"state":${str(row.state)},"city":${str(row.city)},"address_line1":${str(row.address_line1)},"address_line2":${str(row.address_line2)},"state_province_region":${str(row.state_province_region)},"postal_code":${str(row.postal_code)},"custom_field":${customField(row.custom_fields)},"deleted_at":${time(row.deleted_at)},"created_at":${time(row.created_at)},"updated_at":${time(row.updated_at)},"fullname":${JSON.stringify(fullName(row.first_name, row.last_name))},"contact_type":${type}}`;
  };
}

/**
 * `query` (contactListQuery) with the account's contact types written as list JSON once per
 * statement (`list_types`), for contactListRowSql: per row they were a fifth of its work.
 * A contact's type shows the contact's user_id, which is the account's.
 */
export function withListTypes(db: Knex, ctx: Ctx, query: Knex.QueryBuilder): Knex.QueryBuilder {
  const type = jsonTextSql(db).object([
    ['id', json.number('ct.id')],
    ['user_id', json.number('ct.user_id')],
    ['name', json.requiredText('ct.name')],
    ['deleted_at', json.timestamp('ct.deleted_at')],
    ['created_at', json.timestamp('ct.created_at')],
    ['updated_at', json.timestamp('ct.updated_at')],
  ]);
  return query.withMaterialized('list_types', db('contact_types as ct').where('ct.user_id', ctx.userId).select('ct.id', db.raw(`${type} as j`)));
}

/**
 * The same text as `contactListJson`, written by the database (db/json-text.ts) from the
 * columns of `contactListQuery` and the types of `withListTypes`: NULL for a row it cannot
 * write exactly, which then goes through `contactListJson`.
 */
export function contactListRowSql(db: Knex, defs: CustomFieldDef[]): string {
  // The keys in the order JSON.stringify writes the custom_field object (index-like names first).
  const names = Object.keys(customFieldObject(defs, null) ?? {});
  return jsonTextSql(db).object([
    ['id', json.number('c.id')],
    ['user_id', json.number('c.user_id')],
    ['contact_type_id', json.number('c.contact_type_id')],
    ['first_name', json.text('c.first_name')],
    ['last_name', json.text('c.last_name')],
    ['email', json.text('c.email')],
    ['alt_email', json.nullableText('c.alt_email')],
    ['country', json.nullableText('co.name')],
    ['state', json.text('c.state')],
    ['city', json.text('c.city')],
    ['address_line1', json.text('c.address_line1')],
    ['address_line2', json.text('c.address_line2')],
    ['state_province_region', json.text('c.state_province_region')],
    ['postal_code', json.text('c.postal_code')],
    ['custom_field', json.customFields('c.custom_fields', names)],
    // The list holds live contacts only (contactListQuery: deleted_at is null).
    ['deleted_at', json.null()],
    ['created_at', json.timestamp('c.created_at')],
    ['updated_at', json.timestamp('c.updated_at')],
    ['fullname', json.fullName('c.first_name', 'c.last_name')],
    // The contact type's JSON, written once per statement for the account's types (withListTypes).
    // A contact of a type not found there would have NULL text, and go to Node.
    ['contact_type', json.written('(select lt.j from list_types lt where lt.id = c.contact_type_id)')],
  ]);
}

const num = (v: unknown) => JSON.stringify(Number(v));
const str = (v: unknown) => JSON.stringify(text(v));
const nullable = (v: unknown) => (v === null || v === undefined ? 'null' : JSON.stringify(String(v)));
const time = (v: unknown) => JSON.stringify(timestamp(v));
/** An object key JSON.stringify would move before the others (an array index). */
const INDEX_KEY = /^(0|[1-9]\d*)$/;

/** `custom_field` as JSON text: the account's fields in their order, each with its stored value or null. */
function customFieldJson(defs: CustomFieldDef[]): (stored: unknown) => string {
  if (defs.length === 0) return () => 'null';
  // Keys that are array indexes would be reordered by JSON.stringify: keep its order exactly.
  if (defs.some((d) => INDEX_KEY.test(d.field_name) && Number(d.field_name) < 2 ** 32 - 1)) return (stored) => JSON.stringify(customFieldObject(defs, stored));
  const heads = defs.map((d, i) => `${i === 0 ? '{' : ','}${JSON.stringify(d.field_name)}:{"field_name":${JSON.stringify(d.field_name)},"field_value":`);
  return (stored) => {
    const values = parseJson<Record<string, unknown>>(stored, {});
    let out = '';
    for (let i = 0; i < defs.length; i += 1) {
      const value = values[defs[i].field_name];
      out += `${heads[i]}${value === undefined || value === null ? 'null' : JSON.stringify(String(value))}}`;
    }
    return `${out}}`;
  };
}

/**
 * The live contacts of an account with what the list shows (the contact type's columns and
 * the country's name), optionally narrowed by `search` on name or email. Unordered: callers
 * page it by id.
 */
export function contactListQuery(db: Knex, ctx: Ctx, search?: string): Knex.QueryBuilder {
  const query = db('contacts as c')
    .join('contact_types as ct', 'ct.id', 'c.contact_type_id')
    .leftJoin('countries as co', 'co.id', 'c.country')
    .where('c.user_id', ctx.userId)
    .whereNull('c.deleted_at')
    .select(
      'c.*',
      'ct.name as ct_name',
      'ct.deleted_at as ct_deleted_at',
      'ct.created_at as ct_created_at',
      'ct.updated_at as ct_updated_at',
      'co.name as country_name',
    );
  const term = search?.trim();
  if (term) {
    const like = likeOperator(db);
    const pattern = likePattern(term, 'contains');
    query.where((w) => {
      for (const column of ['c.email', 'c.first_name', 'c.last_name']) w.orWhereRaw(`?? ${like} ? escape '\\'`, [column, pattern]);
      w.orWhereRaw(`(c.first_name || ' ' || c.last_name) ${like} ? escape '\\'`, [pattern]);
    });
  }
  return query;
}
