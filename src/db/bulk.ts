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
 * - PostgreSQL: COPY into a session-private (temporary, so unlogged) staging table, then one
 *   INSERT … SELECT … ON CONFLICT per batch. COPY's text format is the cheapest input
 *   PostgreSQL parses (about five times cheaper per row here than `json_to_recordset` over one
 *   JSON parameter); a batch waits for its write as that text in one Buffer (`CopyRows`), not
 *   as a string or object per row, so it costs the garbage collector nothing.
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
  /** The batch's rows (`ImportRows.encoded`). */
  rows: EncodedRows;
  /**
   * Answer the ids of the batch's contacts (only needed to keep rule segments current): yes or
   * no, or a query that finds a row when they are needed (asked in the write's own statement on
   * PostgreSQL, saving a round trip per batch).
   */
  withIds: boolean | Knex.QueryBuilder;
}

/**
 * A batch's rows in the form its database path writes: COPY text lines on PostgreSQL (a later
 * line of the same email wins in the merge); on SQLite the values of rows with unique emails
 * (a later row replaced the earlier one) back to back, `width` values a row, JSON as text;
 * `count` is the rows of the file the batch stands for, repeats included: each repeat counts
 * as an update.
 */
export interface EncodedRows {
  rows: Buffer | unknown[];
  /** Values per row (SQLite). */
  width?: number;
  count: number;
}

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

/**
 * WAL pages SQLite lets grow while an import writes before a commit copies them back into the
 * database file (its default is 1,000). An import's batches rewrite the same index pages over
 * and over: checkpointed every 10,000 pages, each reaches the file once where it did up to ten
 * times (5% of an import's time). Restored once the last import running ends.
 */
const IMPORT_WAL_AUTOCHECKPOINT = 10_000;
const bulkWriters = new WeakMap<Knex, { running: number; before: number }>();

/** Runs an import (`fn`) with the database set for long runs of writes (see above; nothing on PostgreSQL). */
export async function withBulkWrites<T>(db: Knex, fn: () => Promise<T>): Promise<T> {
  if (isPostgres(db)) return fn();
  let state = bulkWriters.get(db);
  if (!state) {
    const [row] = (await db.raw('pragma wal_autocheckpoint')) as { wal_autocheckpoint: number }[];
    // Another import may have started meanwhile.
    state = bulkWriters.get(db) ?? { running: 0, before: Number(row?.wal_autocheckpoint ?? 1000) };
    bulkWriters.set(db, state);
  }
  if (state.running++ === 0) await db.raw(`pragma wal_autocheckpoint = ${IMPORT_WAL_AUTOCHECKPOINT}`);
  try {
    return await fn();
  } finally {
    if (--state.running === 0) {
      bulkWriters.delete(db);
      await db.raw(`pragma wal_autocheckpoint = ${state.before}`);
    }
  }
}

/**
 * Rows per batch (one transaction each). Rows wait in memory until their batch is written:
 * SQLite writes a batch in one 500-row statement; PostgreSQL pays five round trips per
 * batch (begin, staging, COPY, merge, commit), each waiting for the event loop that also parses the
 * file, and its rows wait as COPY text in a Buffer (see `CopyRows`), outside the JS heap.
 */
export function importBatchRows(db: Knex): number {
  return isPostgres(db) ? 10_000 : SQLITE_ROWS_PER_STATEMENT;
}

/**
 * A batch being filled, in file order; the newest row can be moved to start the next batch.
 * Made once per lane and reused (`clear`) once written, so a long import allocates nothing per batch.
 */
export interface ImportRows {
  /** How full the batch is (rows put; SQLite's batches count a repeated email once). */
  readonly size: number;
  /** Adds a row of values (in the upsert's column order) whose email key is `key`. */
  put(key: string, values: unknown[]): void;
  /** Moves the newest row into `next` (empty), as its first row. */
  moveLastTo(next: ImportRows): void;
  /** The rows as `upsertContacts` takes them (valid until `clear`). */
  encoded(): EncodedRows;
  /** The batch's email keys, each once (only asked when someone listens for joins). */
  keys(): string[];
  clear(): void;
}

/** An empty batch of the form the database's path writes. */
export function newImportRows(db: Knex): ImportRows {
  return isPostgres(db) ? new CopyRows() : new ValueRows();
}

/**
 * Lanes of an import: rows are dealt to a lane by their email (`importLane`), each lane writes
 * its batches one after the other, and the lanes write at the same time. PostgreSQL runs two
 * (a backend each, while Node parses on): their batches never share an email, so they never
 * wait for each other, and a later row of the file still reaches the database after an
 * earlier one of the same email. (Batches that overlapped used to wait for each other: with
 * updates spread through a file, that was nearly every batch, so the two backends took turns.)
 * SQLite writes in this thread: one lane, each batch written before the next row is read.
 */
export function importLanes(db: Knex): { lanes: number; concurrent: boolean } {
  return isPostgres(db) ? { lanes: 2, concurrent: true } : { lanes: 1, concurrent: false };
}

/** The lane (0 … lanes − 1) of an email key: FNV-1a of its UTF-16 code units. */
export function importLane(key: string, lanes: number): number {
  if (lanes === 1) return 0;
  let hash = 0x811c9dc5;
  for (let i = 0; i < key.length; i += 1) hash = Math.imul(hash ^ key.charCodeAt(i), 0x01000193);
  return (hash >>> 0) % lanes;
}

/**
 * SQLite: the values of the batch's rows back to back in one array, exactly the parameters of
 * its statements (a JSON value already as text), a repeated email overwriting its earlier row
 * in place, as a sequential upsert would leave it. A row's values array and custom-field object
 * die as soon as it is put, so what waits for the write is one array of strings: cheaper for
 * the garbage collector than an array and an object per row, and no copy when written.
 */
class ValueRows implements ImportRows {
  private values: unknown[] = [];
  private width = 0;
  private positions = new Map<string, number>();
  private repeats = 0;
  private lastKey = '';

  /** Distinct emails: a repeat replaces a row, so only a new email fills the batch. */
  get size(): number {
    return this.positions.size;
  }

  put(key: string, values: unknown[]): void {
    const width = values.length;
    this.width = width;
    const earlier = this.positions.get(key);
    let at: number;
    if (earlier !== undefined) {
      at = earlier * width;
      this.repeats += 1;
    } else {
      at = this.values.length;
      this.positions.set(key, at / width);
      this.lastKey = key;
    }
    for (let k = 0; k < width; k += 1) {
      const value = values[k];
      this.values[at + k] = value !== null && typeof value === 'object' ? JSON.stringify(value) : value;
    }
  }

  moveLastTo(next: ImportRows): void {
    // The newest row is the last one added: the batch filled up when it was added.
    const from = this.values.length - this.width;
    next.put(this.lastKey, this.values.slice(from));
    this.values.length = from;
    this.positions.delete(this.lastKey);
  }

  encoded(): EncodedRows {
    return { rows: this.values, width: this.width, count: this.positions.size + this.repeats };
  }

  keys(): string[] {
    return [...this.positions.keys()];
  }

  clear(): void {
    this.values = [];
    this.positions = new Map();
    this.repeats = 0;
  }
}

/**
 * PostgreSQL: COPY text lines in one Buffer, in file order, repeats and all: the merge keeps
 * the last line of each email (see `upsertPostgres`). Nothing per row stays on the JS heap, so
 * a batch waiting for its write is never promoted into the old generation.
 */
class CopyRows implements ImportRows {
  private bytes = Buffer.allocUnsafeSlow(2 << 20);
  private end = 0;
  /** Where the newest line starts. */
  private lastStart = 0;
  size = 0;

  put(_key: string, values: unknown[]): void {
    this.append(copyLine(values));
  }

  moveLastTo(next: ImportRows): void {
    (next as CopyRows).append(this.bytes.toString('utf8', this.lastStart, this.end));
    this.end = this.lastStart;
    this.size -= 1;
  }

  encoded(): EncodedRows {
    return { rows: this.bytes.subarray(0, this.end), count: this.size };
  }

  keys(): string[] {
    // The second value of each line is the email key (`email`, `email_key`, … in every import).
    const keys = new Set<string>();
    for (const line of this.bytes.toString('utf8', 0, this.end).split('\n')) {
      if (line !== '') keys.add(fromCopyText(line.split('\t')[1]));
    }
    return [...keys];
  }

  clear(): void {
    this.end = 0;
    this.size = 0;
  }

  private append(line: string): void {
    // UTF-8 takes at most 3 bytes per UTF-16 code unit.
    if (this.end + line.length * 3 > this.bytes.length) {
      const grown = Buffer.allocUnsafeSlow(Math.max(this.bytes.length * 2, this.end + line.length * 3));
      this.bytes.copy(grown, 0, 0, this.end);
      this.bytes = grown;
    }
    this.lastStart = this.end;
    this.end += this.bytes.write(line, this.end, 'utf8');
    this.size += 1;
  }
}

/** Session-private staging table of the PostgreSQL path; emptied by every commit. */
const STAGING = 'contact_import_rows';

/** A row as one line of COPY's text format, newline included. */
function copyLine(values: unknown[]): string {
  let line = copyText(values[0]);
  for (let i = 1; i < values.length; i += 1) line += `\t${copyText(values[i])}`;
  return `${line}\n`;
}

/** A value in COPY's text format: `\N` for null; backslash, tab and line breaks escaped. */
function copyText(value: unknown): string {
  if (value === null || value === undefined) return '\\N';
  const text = typeof value === 'string' ? value : typeof value === 'object' ? JSON.stringify(value) : String(value);
  return COPY_SPECIAL.test(text) ? text.replace(/[\\\t\n\r]/g, (c) => COPY_ESCAPES[c]) : text;
}
const COPY_SPECIAL = /[\\\t\n\r]/;
const COPY_ESCAPES: Record<string, string> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' };
const COPY_UNESCAPES: Record<string, string> = { '\\': '\\', t: '\t', n: '\n', r: '\r' };

/** A value written by `copyText` (not null) read back. */
function fromCopyText(text: string): string {
  return text.includes('\\') ? text.replace(/\\(.)/g, (_, c: string) => COPY_UNESCAPES[c]) : text;
}

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

interface SqliteStatement {
  run(...params: unknown[]): { changes: number };
  get(...params: unknown[]): Record<string, unknown>;
  pluck(): { all(...params: unknown[]): unknown[] };
}
interface SqliteConnection {
  prepare(sql: string): SqliteStatement;
}
const statementCache = new WeakMap<SqliteConnection, Map<string, SqliteStatement>>();

/** The connection's statement under `key` (the SQL itself, or a short name of it built by `sql` only when first prepared). */
function prepared(conn: SqliteConnection, key: string, sql: () => string = () => key): SqliteStatement {
  let cache = statementCache.get(conn);
  if (!cache) statementCache.set(conn, (cache = new Map()));
  let statement = cache.get(key);
  if (!statement) cache.set(key, (statement = conn.prepare(sql())));
  return statement;
}

async function upsertSqlite(trx: Knex.Transaction, batch: ContactUpsert): Promise<UpsertResult> {
  const conn = (await trx.client.acquireConnection()) as SqliteConnection;
  const { columns } = batch;
  const values = batch.rows.rows as unknown[];
  const withIds = typeof batch.withIds === 'boolean' ? batch.withIds : (await batch.withIds.first()) !== undefined;
  const tuple = () => `(@user_id, @contact_type_id, @now, @now, ${columns.map(() => '?').join(', ')})`;
  // Keyed by the columns and the row count, so a batch neither builds nor hashes the 500-row SQL again.
  const statementFor = (count: number) =>
    prepared(
      conn,
      `upsert ${count} ${columns.join(',')}`,
      () => `insert into contacts (user_id, contact_type_id, created_at, updated_at, ${columns.join(', ')}) values ${Array(count).fill(tuple()).join(', ')} ${conflictUpdate(trx, columns)}`,
    );
  const named = { user_id: batch.userId, contact_type_id: batch.contactTypeId, now: batch.now };
  // Ids only grow (AUTOINCREMENT) and the transaction holds the only writer: rows above the
  // batch's starting id are the ones it created.
  const firstId = Number(prepared(conn, 'select coalesce(max(id), 0) as id from contacts').get().id);

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
    const statement = statementFor(SQLITE_ROWS_PER_STATEMENT);
    for (; i + SQLITE_ROWS_PER_STATEMENT <= rowCount; i += SQLITE_ROWS_PER_STATEMENT) statement.run(values.slice(i * width, i * width + many), named);
  }
  // The remainder row by row: one cached statement instead of one per remainder size.
  if (i < rowCount) {
    const one = statementFor(1);
    for (; i < rowCount; i += 1) one.run(values.slice(i * width, (i + 1) * width), named);
  }
  const created = Number(prepared(conn, 'select count(*) as n from contacts where id > ?').get(firstId).n);
  if (!withIds) return { created, updated: batch.rows.count - created, ids: [] };
  const keyAt = columns.indexOf('email_key');
  const keys = JSON.stringify(Array.from({ length: rowCount }, (_, r) => values[r * width + keyAt]));
  const ids = prepared(conn, 'select c.id from json_each(?) k cross join contacts c on c.user_id = ? and c.email_key = k.value and c.deleted_at is null')
    .pluck()
    .all(keys, batch.userId)
    .map(Number);
  return { created, updated: batch.rows.count - created, ids };
}
