import type { Knex } from 'knex';
import { jsonMerge } from './expressions';
import { isPostgres } from './index';

/**
 * The bulk write of a CSV import: a batch of contacts upserted by (account, lower-cased
 * email) inside the caller's transaction, by the fastest path each database has.
 *
 * - SQLite: prepared multi-row INSERT … ON CONFLICT statements, cached on the connection and
 *   run straight on better-sqlite3 (knex would re-prepare a 10,000-parameter statement
 *   for every call).
 * - PostgreSQL: the whole batch as one JSON parameter, unpacked by `json_to_recordset` into
 *   a single INSERT … ON CONFLICT: one round trip and one statement per batch, the rows
 *   serialised by V8's JSON.stringify instead of per-value escaping (as COPY text or array
 *   parameters would need), with no staging table.
 */

/** Contact columns an import may set; `email` and `email_key` are always among them. */
export const UPSERT_COLUMN_TYPES = {
  email: 'text',
  email_key: 'text',
  alt_email: 'text',
  country: 'integer',
  first_name: 'text',
  last_name: 'text',
  state: 'text',
  city: 'text',
  address_line1: 'text',
  address_line2: 'text',
  state_province_region: 'text',
  postal_code: 'text',
  custom_fields: 'jsonb',
} as const;
export type UpsertColumn = keyof typeof UPSERT_COLUMN_TYPES;

export interface ContactUpsert {
  userId: number;
  contactTypeId: number;
  /** created_at / updated_at of the batch (ISO string). */
  now: string;
  /** The columns the file sets, in the order of each row's values. */
  columns: UpsertColumn[];
  /** One value per column; `custom_fields` as an object (or null). Emails unique within the batch. */
  rows: unknown[][];
}

export interface UpsertCount {
  created: number;
  updated: number;
}

/** Rows per prepared SQLite statement: 13 columns × 500 stays under SQLite's 32,766 parameters. */
const SQLITE_ROWS_PER_STATEMENT = 500;

export async function upsertContacts(trx: Knex.Transaction, batch: ContactUpsert): Promise<UpsertCount> {
  if (batch.rows.length === 0) return { created: 0, updated: 0 };
  return isPostgres(trx) ? upsertPostgres(trx, batch) : upsertSqlite(trx, batch);
}

/** Later rows of the file overwrite only the columns the file has; the contact joins the import's type. */
function conflictUpdate(db: Knex, columns: UpsertColumn[]): string {
  const sets = ['contact_type_id = excluded.contact_type_id', 'updated_at = excluded.updated_at'];
  for (const column of columns) {
    if (column === 'email_key') continue;
    sets.push(column === 'custom_fields' ? `custom_fields = ${jsonMerge(db, 'contacts.custom_fields', 'excluded.custom_fields')}` : `${column} = excluded.${column}`);
  }
  return `on conflict (user_id, email_key) where deleted_at is null do update set ${sets.join(', ')}`;
}

async function upsertPostgres(trx: Knex.Transaction, batch: ContactUpsert): Promise<UpsertCount> {
  const { columns } = batch;
  const records = batch.rows.map((row) => {
    const record: Record<string, unknown> = {};
    for (let i = 0; i < columns.length; i += 1) record[columns[i]] = row[i];
    return record;
  });
  const recordType = columns.map((c) => `${c} ${UPSERT_COLUMN_TYPES[c]}`).join(', ');
  const list = columns.join(', ');
  // xmax is 0 only on a row this statement inserted: it tells created from updated.
  const sql = `with up as (
      insert into contacts (user_id, contact_type_id, created_at, updated_at, ${list})
      select ?::integer, ?::integer, ?::timestamptz, ?::timestamptz, ${list} from json_to_recordset(?::json) as r(${recordType})
      ${conflictUpdate(trx, columns)}
      returning (xmax = 0) as inserted)
    select count(*) filter (where inserted) as created, count(*) as total from up`;
  const result = await trx.raw(sql, [batch.userId, batch.contactTypeId, batch.now, batch.now, JSON.stringify(records)]);
  const { created, total } = result.rows[0];
  return { created: Number(created), updated: Number(total) - Number(created) };
}

interface SqliteStatement {
  run(...params: unknown[]): { changes: number };
  get(...params: unknown[]): Record<string, unknown>;
}
interface SqliteConnection {
  prepare(sql: string): SqliteStatement;
}
const statementCache = new WeakMap<SqliteConnection, Map<string, SqliteStatement>>();

function prepared(conn: SqliteConnection, sql: string): SqliteStatement {
  let cache = statementCache.get(conn);
  if (!cache) statementCache.set(conn, (cache = new Map()));
  let statement = cache.get(sql);
  if (!statement) cache.set(sql, (statement = conn.prepare(sql)));
  return statement;
}

async function upsertSqlite(trx: Knex.Transaction, batch: ContactUpsert): Promise<UpsertCount> {
  const conn = (await trx.client.acquireConnection()) as SqliteConnection;
  const { columns } = batch;
  const custom = columns.indexOf('custom_fields');
  const tuple = `(@user_id, @contact_type_id, @now, @now, ${columns.map(() => '?').join(', ')})`;
  const statementFor = (rows: number) =>
    prepared(
      conn,
      `insert into contacts (user_id, contact_type_id, created_at, updated_at, ${columns.join(', ')}) values ${Array(rows).fill(tuple).join(', ')} ${conflictUpdate(trx, columns)}`,
    );
  const named = { user_id: batch.userId, contact_type_id: batch.contactTypeId, now: batch.now };
  // Ids only grow (AUTOINCREMENT) and the transaction holds the only writer: rows above the
  // batch's starting id are the ones it created.
  const firstId = Number(prepared(conn, 'select coalesce(max(id), 0) as id from contacts').get().id);

  const values = (row: unknown[]) => (custom < 0 || row[custom] === null ? row : row.map((v, i) => (i === custom ? JSON.stringify(v) : v)));
  let i = 0;
  if (batch.rows.length >= SQLITE_ROWS_PER_STATEMENT) {
    const many = statementFor(SQLITE_ROWS_PER_STATEMENT);
    for (; i + SQLITE_ROWS_PER_STATEMENT <= batch.rows.length; i += SQLITE_ROWS_PER_STATEMENT) {
      const params: unknown[] = [];
      for (let j = i; j < i + SQLITE_ROWS_PER_STATEMENT; j += 1) params.push(...values(batch.rows[j]));
      many.run(params, named);
    }
  }
  // The remainder row by row: one cached statement instead of one per remainder size.
  const one = statementFor(1);
  for (; i < batch.rows.length; i += 1) one.run(values(batch.rows[i]), named);
  const created = Number(prepared(conn, 'select count(*) as n from contacts where id > ?').get(firstId).n);
  return { created, updated: batch.rows.length - created };
}
