import { finished } from 'node:stream/promises';
import type { Knex } from 'knex';
import type { PoolClient as PgClient } from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { jsonMerge } from './expressions';
import type { EncodedRows } from './import-batches';
import { isPostgres } from './index';
import { cachedStatement, Connection } from './sqlite-client';

/**
 * The bulk write of a CSV import: a batch of contacts upserted by (account, lower-cased
 * email) inside the caller's transaction, by the path each database writes fastest.
 *
 * - SQLite: multi-row INSERT … ON CONFLICT statements run straight on better-sqlite3 through
 *   the connection's statement cache (sqlite-client.ts), so a 500-row statement is prepared once.
 * - PostgreSQL: COPY into a session-private (temporary, so unlogged) staging table, then one
 *   INSERT … SELECT … ON CONFLICT per batch. COPY's text format is the cheapest input
 *   PostgreSQL parses (about five times cheaper per row here than `json_to_recordset` over one
 *   JSON parameter).
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
  time_zone: 'text',
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
  /** The batch's rows (`ImportRows.encoded`). */
  rows: EncodedRows;
  /**
   * Answer the ids of the batch's contacts (only needed to keep rule segments current): yes or
   * no, or a query that finds a row when they are needed (asked in the write's own statement on
   * PostgreSQL, saving a round trip per batch).
   */
  withIds: boolean | Knex.QueryBuilder;
}

export interface UpsertCount {
  created: number;
  updated: number;
}

/** A written batch: its counts and (when asked) the ids of its contacts (created or updated), for set-based follow-ups. */
export interface UpsertResult extends UpsertCount {
  ids: number[];
}

/** Rows per prepared SQLite statement: 14 columns × 500 stays under SQLite's 32,766 parameters. */
const SQLITE_ROWS_PER_STATEMENT = 500;

/**
 * Rows per batch (one transaction each). Rows wait in memory until their batch is written:
 * SQLite writes a batch in four 500-row statements (a commit writes each index page the batch
 * touched, so fewer, larger commits write fewer pages); PostgreSQL pays five round trips per
 * batch (begin, staging, COPY, merge, commit), each waiting for the event loop that also parses the
 * file, and its rows wait as COPY text in a Buffer (see `CopyRows` in import-batches.ts), outside the JS heap.
 */
export function importBatchRows(db: Knex): number {
  return isPostgres(db) ? 10_000 : 4 * SQLITE_ROWS_PER_STATEMENT;
}

/**
 * `durable: false` lets PostgreSQL commit the batch without waiting for its WAL flush (SQLite
 * in WAL mode with synchronous=NORMAL never waits); the caller makes the last batch durable.
 */
export async function upsertContacts(trx: Knex.Transaction, batch: ContactUpsert, durable = true): Promise<UpsertResult> {
  if (batch.rows.count === 0) return { created: 0, updated: 0, ids: [] };
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

/** Session-private staging table of the PostgreSQL path; emptied by every commit. */
const STAGING = 'contact_import_rows';

async function upsertPostgres(trx: Knex.Transaction, batch: ContactUpsert, durable: boolean): Promise<UpsertResult> {
  const { columns } = batch;
  const list = columns.join(', ');
  const staging = Object.entries(UPSERT_COLUMN_TYPES).map(([c, type]) => `${c} ${type}`).join(', ');
  // Batches of an import may commit without waiting for the WAL flush; the last one waits,
  // which flushes the earlier ones too, so the answer is only sent once all of it is durable.
  // One round trip (no parameters: the simple protocol takes both statements).
  await trx.raw(
    `${durable ? '' : 'set local synchronous_commit = off; '}create temp table if not exists ${STAGING} (${staging}) on commit delete rows`,
  );

  const client = (await trx.client.acquireConnection()) as PgClient;
  const copy = client.query(copyFrom(`copy ${STAGING} (${list}) from stdin`));
  copy.end(batch.rows.rows as Buffer);
  await finished(copy);

  // xmax is 0 only on a row this statement inserted: it tells created from updated. Of the
  // lines of one email, the last one wins (a fresh staging table filled by one COPY holds
  // them in file order, so by ctid), as a sequential upsert would leave it. Rows are merged in
  // email order (so concurrent imports take their row locks in one order and never deadlock),
  // compared byte by byte: any one order will do, and the database's own collation (strcoll)
  // made that sort an eighth of the merge.
  const ids = batch.withIds === true ? "coalesce(json_agg(id), '[]')" : batch.withIds ? "coalesce(json_agg(id) filter (where exists (?)), '[]')" : "'[]'::json";
  const result = await trx.raw(
    `with up as (
      insert into contacts (user_id, contact_type_id, created_at, updated_at, ${list})
      select distinct on (email_key collate "C") ?::integer, ?::integer, ?::timestamptz, ?::timestamptz, ${list}
      from ${STAGING} order by email_key collate "C", ctid desc
      ${conflictUpdate(trx, columns)}
      returning id, (xmax = 0) as inserted)
    select count(*) filter (where inserted) as created, ${ids} as ids from up`,
    [batch.userId, batch.contactTypeId, batch.now, batch.now, ...(typeof batch.withIds === 'boolean' ? [] : [batch.withIds])],
  );
  const { created, ids: found } = result.rows[0];
  return { created: Number(created), updated: batch.rows.count - Number(created), ids: (found as unknown[]).map(Number) };
}

/** What of better-sqlite3's statement the SQLite path uses. */
interface SqliteStatement {
  run(...params: unknown[]): { changes: number };
  get(...params: unknown[]): Record<string, unknown>;
  pluck(): { all(...params: unknown[]): unknown[] };
}
const statement = (conn: Connection, sql: string) => cachedStatement(conn, sql) as unknown as SqliteStatement;

async function upsertSqlite(trx: Knex.Transaction, batch: ContactUpsert): Promise<UpsertResult> {
  const conn = (await trx.client.acquireConnection()) as Connection;
  const { columns } = batch;
  const values = batch.rows.rows as unknown[];
  const withIds = typeof batch.withIds === 'boolean' ? batch.withIds : (await batch.withIds.first()) !== undefined;
  const tuple = () => `(@user_id, @contact_type_id, @now, @now, ${columns.map(() => '?').join(', ')})`;
  const statementFor = (count: number) =>
    statement(
      conn,
      `insert into contacts (user_id, contact_type_id, created_at, updated_at, ${columns.join(', ')}) values ${Array(count).fill(tuple()).join(', ')} ${conflictUpdate(trx, columns)}`,
    );
  const named = { user_id: batch.userId, contact_type_id: batch.contactTypeId, now: batch.now };
  // Ids only grow (AUTOINCREMENT) and the transaction holds the only writer: rows above the
  // batch's starting id are the ones it created.
  const firstId = Number(statement(conn, 'select coalesce(max(id), 0) as id from contacts').get().id);

  const width = columns.length;
  if (batch.rows.width !== undefined && batch.rows.width !== width) throw new Error(`rows of ${batch.rows.width} values for ${width} columns`);
  const rowCount = values.length / width;
  const many = SQLITE_ROWS_PER_STATEMENT * width;
  let i = 0;
  // A full batch is exactly one statement's parameters: bound as they are (better-sqlite3 copies what it binds).
  if (values.length === many) {
    statementFor(SQLITE_ROWS_PER_STATEMENT).run(values, named);
    i = rowCount;
  } else if (rowCount >= SQLITE_ROWS_PER_STATEMENT) {
    const full = statementFor(SQLITE_ROWS_PER_STATEMENT);
    for (; i + SQLITE_ROWS_PER_STATEMENT <= rowCount; i += SQLITE_ROWS_PER_STATEMENT) full.run(values.slice(i * width, i * width + many), named);
  }
  // The remainder row by row: one cached statement instead of one per remainder size.
  if (i < rowCount) {
    const one = statementFor(1);
    for (; i < rowCount; i += 1) one.run(values.slice(i * width, (i + 1) * width), named);
  }
  const created = Number(statement(conn, 'select count(*) as n from contacts where id > ?').get(firstId).n);
  if (!withIds) return { created, updated: batch.rows.count - created, ids: [] };
  const keyAt = columns.indexOf('email_key');
  const keys = JSON.stringify(Array.from({ length: rowCount }, (_, r) => values[r * width + keyAt]));
  const ids = statement(conn, 'select c.id from json_each(?) k cross join contacts c on c.user_id = ? and c.email_key = k.value and c.deleted_at is null')
    .pluck()
    .all(keys, batch.userId)
    .map(Number);
  return { created, updated: batch.rows.count - created, ids };
}
