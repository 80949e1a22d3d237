import { finished } from 'node:stream/promises';
import type { Knex } from 'knex';
import type { PoolClient as PgClient } from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { jsonMerge } from './expressions';
import { isPostgres } from './index';

/**
 * The bulk write of a CSV import: a batch of contacts upserted by (account, lower-cased
 * email) inside the caller's transaction, by the fastest path each database has.
 *
 * - SQLite: prepared multi-row INSERT … ON CONFLICT statements, cached on the connection and
 *   run straight on better-sqlite3 (knex would re-prepare a 10,000-parameter statement
 *   for every call).
 * - PostgreSQL: COPY into a session-private staging table, then one INSERT … SELECT … ON
 *   CONFLICT per batch. COPY's text format is the cheapest input PostgreSQL parses (about
 *   five times cheaper per row here than `json_to_recordset` over one JSON parameter).
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
  /** Rows as `encodeRow` made them, emails unique within the batch. */
  rows: EncodedRow[];
  /** Answer the ids of the batch's contacts (only needed to keep rule segments current). */
  withIds: boolean;
}

/** A row of values (one per column; `custom_fields` an object or null) in the form its database path writes. */
export type EncodedRow = unknown;

export interface UpsertCount {
  created: number;
  updated: number;
}

/** A written batch: its counts and (when asked) the ids of its contacts (created or updated), for set-based follow-ups. */
export interface UpsertResult extends UpsertCount {
  ids: number[];
}

/** Rows per prepared SQLite statement: 13 columns × 500 stays under SQLite's 32,766 parameters. */
const SQLITE_ROWS_PER_STATEMENT = 500;

/**
 * `durable: false` lets PostgreSQL commit the batch without waiting for its WAL flush (SQLite
 * in WAL mode with synchronous=NORMAL never waits); the caller makes the last batch durable.
 */
export async function upsertContacts(trx: Knex.Transaction, batch: ContactUpsert, durable = true): Promise<UpsertResult> {
  if (batch.rows.length === 0) return { created: 0, updated: 0, ids: [] };
  return isPostgres(trx) ? upsertPostgres(trx, batch, durable) : upsertSqlite(trx, batch);
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

/**
 * Rows per batch (one transaction each). Rows wait in memory until their batch is written, and
 * a batch that outlives a couple of young-generation collections is promoted to the old heap,
 * where it stays as garbage until a full collection: small batches keep the server's memory
 * flat. SQLite writes a batch in one 500-row statement; PostgreSQL pays six round trips per
 * batch, each waiting for the event loop that also parses the file (about 5 ms each, against
 * 36 ms for the merge of 5,000 rows), and its rows wait as COPY text (see `encodeRow`), not as
 * objects: 10,000 rows a batch (bench:import, 500,000 rows: 68.8k rows/s with 5,000, 77.8k
 * with 10,000, peak RSS 206 → 220 MiB).
 */
export function importBatchRows(db: Knex): number {
  return isPostgres(db) ? 10_000 : SQLITE_ROWS_PER_STATEMENT;
}

/** Turns a row into what its batch holds until written: one COPY text line on PostgreSQL, the values on SQLite. */
export function rowEncoder(db: Knex): (row: unknown[]) => EncodedRow {
  return isPostgres(db) ? (row) => row.map(copyText).join('\t') : (row) => row;
}

/**
 * Batches written while the next is read: PostgreSQL runs two (a backend each, while Node
 * parses on); concurrent batches take their row locks in email order (`order by
 * email_key`), so two batches sharing emails wait, never deadlock. SQLite writes in this
 * thread, so reading on during a write gains nothing and keeps more rows alive: 0, each
 * batch is written before the next row is read.
 */
export function bulkWriters(db: Knex): number {
  return isPostgres(db) ? 2 : 0;
}

/** Session-private staging table of the PostgreSQL path; emptied by every commit. */
const STAGING = 'contact_import_rows';

/** A value in COPY's text format: `\N` for null; backslash, tab and line breaks escaped. */
function copyText(value: unknown): string {
  if (value === null || value === undefined) return '\\N';
  const text = typeof value === 'object' ? JSON.stringify(value) : String(value);
  return /[\\\t\n\r]/.test(text) ? text.replace(/[\\\t\n\r]/g, (c) => COPY_ESCAPES[c]) : text;
}
const COPY_ESCAPES: Record<string, string> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' };

async function upsertPostgres(trx: Knex.Transaction, batch: ContactUpsert, durable: boolean): Promise<UpsertResult> {
  const { columns } = batch;
  const list = columns.join(', ');
  // Batches of an import may commit without waiting for the WAL flush; the last one waits,
  // which flushes the earlier ones too, so the answer is only sent once all of it is durable.
  if (!durable) await trx.raw('set local synchronous_commit = off');
  const staging = Object.entries(UPSERT_COLUMN_TYPES).map(([c, type]) => `${c} ${type}`).join(', ');
  await trx.raw(`create temp table if not exists ${STAGING} (${staging}) on commit delete rows`);

  const text = `${(batch.rows as string[]).join('\n')}\n`;
  const client = (await trx.client.acquireConnection()) as PgClient;
  const copy = client.query(copyFrom(`copy ${STAGING} (${list}) from stdin`));
  copy.end(text);
  await finished(copy);

  // xmax is 0 only on a row this statement inserted: it tells created from updated.
  const result = await trx.raw(
    `with up as (
      insert into contacts (user_id, contact_type_id, created_at, updated_at, ${list})
      select ?::integer, ?::integer, ?::timestamptz, ?::timestamptz, ${list} from ${STAGING} order by email_key
      ${conflictUpdate(trx, columns)}
      returning id, (xmax = 0) as inserted)
    select count(*) filter (where inserted) as created, count(*) as total, ${batch.withIds ? "coalesce(json_agg(id), '[]')" : "'[]'::json"} as ids from up`,
    [batch.userId, batch.contactTypeId, batch.now, batch.now],
  );
  const { created, total, ids } = result.rows[0];
  return { created: Number(created), updated: Number(total) - Number(created), ids: (ids as unknown[]).map(Number) };
}

interface SqliteStatement {
  run(...params: unknown[]): { changes: number };
  get(...params: unknown[]): Record<string, unknown>;
  pluck(): { all(...params: unknown[]): unknown[] };
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

async function upsertSqlite(trx: Knex.Transaction, batch: ContactUpsert): Promise<UpsertResult> {
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

  const width = columns.length;
  // One parameter array, refilled for every statement (better-sqlite3 copies what it binds).
  const fill = (params: unknown[], from: number, count: number) => {
    let p = 0;
    for (let j = from; j < from + count; j += 1) {
      const row = batch.rows[j] as unknown[];
      for (let k = 0; k < width; k += 1) params[p++] = k === custom && row[k] !== null ? JSON.stringify(row[k]) : row[k];
    }
    return params;
  };
  let i = 0;
  if (batch.rows.length >= SQLITE_ROWS_PER_STATEMENT) {
    const many = statementFor(SQLITE_ROWS_PER_STATEMENT);
    const params = new Array(SQLITE_ROWS_PER_STATEMENT * width);
    for (; i + SQLITE_ROWS_PER_STATEMENT <= batch.rows.length; i += SQLITE_ROWS_PER_STATEMENT) {
      many.run(fill(params, i, SQLITE_ROWS_PER_STATEMENT), named);
    }
  }
  // The remainder row by row: one cached statement instead of one per remainder size.
  const one = statementFor(1);
  const params = new Array(width);
  for (; i < batch.rows.length; i += 1) one.run(fill(params, i, 1), named);
  const created = Number(prepared(conn, 'select count(*) as n from contacts where id > ?').get(firstId).n);
  if (!batch.withIds) return { created, updated: batch.rows.length - created, ids: [] };
  const keyAt = columns.indexOf('email_key');
  const keys = JSON.stringify(batch.rows.map((row) => (row as unknown[])[keyAt]));
  const ids = prepared(conn, 'select c.id from json_each(?) k cross join contacts c on c.user_id = ? and c.email_key = k.value and c.deleted_at is null')
    .pluck()
    .all(keys, batch.userId)
    .map(Number);
  return { created, updated: batch.rows.length - created, ids };
}
