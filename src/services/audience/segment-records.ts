import type { Knex } from 'knex';
import { parseJson, toCount } from '../../db/dialect';
import { timestamp } from '../../lib/time';
import { fullName } from './contact-records';

export interface SegmentRecord {
  id: number;
  user_id: number;
  contact_type_id: number;
  segment_name: string;
  select_field: string[];
  select_operator: string[];
  value: string[];
  query_type: string | null;
  deleted_at: string | null;
  created_at: string | null;
  updated_at: string | null;
  segment_emails_count: number;
}

export function segmentRecord(row: Record<string, unknown>): SegmentRecord {
  return {
    id: Number(row.id),
    user_id: Number(row.user_id),
    contact_type_id: Number(row.contact_type_id),
    segment_name: String(row.segment_name),
    select_field: parseJson<string[]>(row.select_field, []),
    select_operator: parseJson<string[]>(row.select_operator, []),
    value: parseJson<string[]>(row.value, []),
    query_type: row.query_type === null || row.query_type === undefined ? null : String(row.query_type),
    deleted_at: timestamp(row.deleted_at),
    created_at: timestamp(row.created_at),
    updated_at: timestamp(row.updated_at),
    segment_emails_count: toCount(row.segment_emails_count),
  };
}

/** `segment_emails_count`: every recipient row of the segment (rule rows of deleted contacts are removed with them). */
export function segmentEmailsCount(db: Knex): Knex.QueryBuilder {
  return db('segment_recipients').count('*').whereRaw('segment_recipients.segment_id = segments.id').as('segment_emails_count');
}

export interface SegmentRecipientRecord {
  id: number;
  user_id: number;
  segment_id: number;
  contact_id: number | null;
  first_name: string;
  last_name: string;
  email: string;
  country: string | null;
  state: string | null;
  city: string | null;
  address_line1: string | null;
  created_at: string | null;
  updated_at: string | null;
  fullname: string;
}

const orNull = (v: unknown) => (v === null || v === undefined ? null : String(v));

export function segmentRecipientRecord(row: Record<string, unknown>): SegmentRecipientRecord {
  return {
    id: Number(row.id),
    user_id: Number(row.user_id),
    segment_id: Number(row.segment_id),
    contact_id: row.contact_id === null || row.contact_id === undefined ? null : Number(row.contact_id),
    first_name: String(row.first_name ?? ''),
    last_name: String(row.last_name ?? ''),
    email: String(row.email),
    country: orNull(row.country),
    state: orNull(row.state),
    city: orNull(row.city),
    address_line1: orNull(row.address_line1),
    created_at: timestamp(row.created_at),
    updated_at: timestamp(row.updated_at),
    fullname: fullName(row.first_name, row.last_name),
  };
}

/**
 * A segment's recipients as listed: a rule member shows its contact as it is now (the row
 * keeps what it was when it joined); a recipient stored by hand shows what was stored.
 */
export function recipientListQuery(db: Knex, userId: number, segmentId: number): Knex.QueryBuilder {
  const current = (column: string) => db.raw(`case when c.id is null then sr.${column} else c.${column} end as ${column}`);
  return db('segment_recipients as sr')
    .leftJoin('contacts as c', (j) => j.on('c.id', 'sr.contact_id').andOnNull('c.deleted_at').andOnVal('sr.source', '=', 'rule'))
    .leftJoin('countries as co', 'co.id', 'c.country')
    .where({ 'sr.segment_id': segmentId, 'sr.user_id': userId })
    .select(
      'sr.id',
      'sr.user_id',
      'sr.segment_id',
      'sr.contact_id',
      'sr.created_at',
      'sr.updated_at',
      ...['first_name', 'last_name', 'email', 'state', 'city', 'address_line1'].map(current),
      db.raw('case when c.id is null then sr.country else co.name end as country'),
    );
}
