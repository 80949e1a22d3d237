import type { Knex } from 'knex';
import { isPostgres } from './index';

/**
 * What a backup and a restore need to know of a database's tables, and where the two
 * databases differ in reading and writing them as portable values.
 */

/** knex's own bookkeeping: a backup records the migrations in its header instead. */
// contact_counts is derived: its triggers rebuild it as a restore writes the contacts.
const BOOKKEEPING = new Set(['knex_migrations', 'knex_migrations_lock', 'contact_counts']);

export interface TableShape {
  name: string;
  columns: string[];
  /** The primary key's columns, in order (`rowid` for a SQLite table without one). */
  key: string[];
}

/** Every table of the application (not knex's, not SQLite's own), parents before the tables that refer to them. */
export async function applicationTables(db: Knex | Knex.Transaction): Promise<string[]> {
  let names: string[];
  const parents = new Map<string, Set<string>>();
  if (isPostgres(db as Knex)) {
    names = (await db.raw(`select tablename from pg_tables where schemaname = current_schema()`)).rows.map((r: { tablename: string }) => r.tablename);
    const fks = await db.raw(
      `select c.relname as child, p.relname as parent from pg_constraint k
         join pg_class c on c.oid = k.conrelid join pg_class p on p.oid = k.confrelid
        where k.contype = 'f' and k.connamespace = current_schema()::regnamespace`,
    );
    for (const { child, parent } of fks.rows as Array<{ child: string; parent: string }>) {
      (parents.get(child) ?? parents.set(child, new Set()).get(child)!).add(parent);
    }
  } else {
    // Ordinary tables only: a virtual table (the contact search's index) and its shadow tables
    // are derived, and its triggers rebuild it as a restore writes the contacts.
    names = (await db.raw(`select name from pragma_table_list where schema = 'main' and type = 'table' and name not like 'sqlite\\_%' escape '\\'`)).map((r: { name: string }) => r.name);
    for (const name of names) {
      const fks: Array<{ table: string }> = await db.raw(`pragma foreign_key_list(${quote(name)})`);
      parents.set(name, new Set(fks.map((fk) => fk.table)));
    }
  }
  names = names.filter((n) => !BOOKKEEPING.has(n)).sort();
  // Depth-first: each table after its parents (a self-reference or a circle does not stop it).
  const ordered: string[] = [];
  const seen = new Set<string>();
  const visit = (name: string) => {
    if (seen.has(name)) return;
    seen.add(name);
    for (const parent of [...(parents.get(name) ?? [])].sort()) if (parent !== name && names.includes(parent)) visit(parent);
    ordered.push(name);
  };
  names.forEach(visit);
  return ordered;
}

const quote = (name: string) => `"${name.replace(/"/g, '""')}"`;

/** A table's columns (in their order) and primary key. */
export async function tableShape(db: Knex | Knex.Transaction, name: string): Promise<TableShape & { types: Record<string, string> }> {
  if (isPostgres(db as Knex)) {
    const cols = await db.raw(
      `select column_name, data_type from information_schema.columns where table_schema = current_schema() and table_name = ? order by ordinal_position`,
      [name],
    );
    const key = await db.raw(
      `select a.attname from pg_index i join pg_attribute a on a.attrelid = i.indrelid and a.attnum = any(i.indkey)
        where i.indrelid = ?::regclass and i.indisprimary order by array_position(i.indkey, a.attnum)`,
      [quote(name)],
    );
    const rows = cols.rows as Array<{ column_name: string; data_type: string }>;
    const keyColumns = (key.rows as Array<{ attname: string }>).map((r) => r.attname);
    if (!keyColumns.length) throw new Error(`table ${name} has no primary key`);
    return { name, columns: rows.map((r) => r.column_name), key: keyColumns, types: Object.fromEntries(rows.map((r) => [r.column_name, r.data_type])) };
  }
  const info: Array<{ name: string; type: string; pk: number }> = await db.raw(`pragma table_info(${quote(name)})`);
  const key = info.filter((c) => c.pk > 0).sort((a, b) => a.pk - b.pk).map((c) => c.name);
  return { name, columns: info.map((c) => c.name), key: key.length ? key : ['rowid'], types: Object.fromEntries(info.map((c) => [c.name, c.type.toLowerCase()])) };
}

/**
 * Opens the snapshot a backup reads in: on PostgreSQL a repeatable-read, read-only transaction
 * (every query sees the database as it was at the first); on SQLite the transaction's first read
 * fixes the snapshot (WAL mode), and writers go on meanwhile.
 */
export async function beginSnapshot(trx: Knex.Transaction): Promise<void> {
  if (isPostgres(trx as unknown as Knex)) await trx.raw('set transaction isolation level repeatable read read only');
}

/**
 * The select list that reads a table as portable values: timestamps as ISO 8601 UTC text with
 * every digit PostgreSQL keeps (microseconds), JSON as its text; SQLite keeps both as text already.
 */
export function portableColumns(db: Knex | Knex.Transaction, shape: TableShape & { types: Record<string, string> }): Knex.Raw[] {
  const pg = isPostgres(db as Knex);
  return shape.columns.map((column) => {
    const type = shape.types[column];
    if (pg && type === 'timestamp with time zone') return db.raw(`to_char(?? at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as ??`, [column, column]);
    if (pg && type === 'timestamp without time zone') return db.raw(`to_char(??, 'YYYY-MM-DD"T"HH24:MI:SS.US') as ??`, [column, column]);
    if (pg && (type === 'json' || type === 'jsonb' || type === 'date' || type === 'uuid')) return db.raw('??::text as ??', [column, column]);
    return db.raw('??', [column]);
  });
}

/** One page of a table in key order, after the row whose key is `after` (from the start when undefined). */
export function keysetPage(db: Knex | Knex.Transaction, shape: TableShape & { types: Record<string, string> }, after: Knex.Value[] | undefined, limit: number): Knex.QueryBuilder {
  const query = db(shape.name).select([...portableColumns(db, shape), ...(shape.key[0] === 'rowid' ? [db.raw('rowid as "__rowid"')] : [])]);
  if (after) {
    const columns = shape.key.map(() => '??').join(', ');
    const values = shape.key.map(() => '?').join(', ');
    query.whereRaw(`(${columns}) > (${values})`, [...shape.key, ...after]);
  }
  return query.orderBy(shape.key).limit(limit);
}

/** A value as it was read, ready for a JSON line (PostgreSQL's bigint comes as text). */
export function portableValue(value: unknown, type: string): unknown {
  if (type === 'bigint' && typeof value === 'string' && Number.isSafeInteger(Number(value))) return Number(value);
  if ((type === 'json' || type === 'jsonb') && typeof value === 'string') return JSON.stringify(JSON.parse(value));
  if (Buffer.isBuffer(value)) throw new Error('binary columns are not supported by the backup');
  return value;
}

const MICROSECONDS = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3})\d{3}Z$/;

/**
 * A value of the file as the target stores it: SQLite keeps timestamps as the service writes
 * them (milliseconds, compared as text), so PostgreSQL's microseconds are cut to milliseconds.
 */
export function storedValue(db: Knex | Knex.Transaction, value: unknown, type: string): unknown {
  if (!isPostgres(db as Knex) && typeof value === 'string' && (type === 'datetime' || type.startsWith('timestamp'))) {
    return value.replace(MICROSECONDS, '$1Z');
  }
  return value;
}

/**
 * Makes a restore's writes independent of the order of rows within its transaction: SQLite
 * checks foreign keys at commit; PostgreSQL reads timestamps without a zone as UTC.
 */
export async function prepareRestore(trx: Knex.Transaction): Promise<void> {
  if (isPostgres(trx as unknown as Knex)) await trx.raw(`set local time zone 'UTC'`);
  else await trx.raw('pragma defer_foreign_keys = on');
}

/** After rows were written with their ids: PostgreSQL's sequences continue after the largest (SQLite's follow by themselves). */
export async function resetSequences(trx: Knex.Transaction): Promise<void> {
  if (!isPostgres(trx as unknown as Knex)) return;
  const serials = await trx.raw(
    `select table_name, column_name from information_schema.columns
      where table_schema = current_schema() and column_default like 'nextval(%'`,
  );
  for (const { table_name: table, column_name: column } of serials.rows as Array<{ table_name: string; column_name: string }>) {
    await trx.raw(`select setval(pg_get_serial_sequence(?, ?), coalesce((select max(??) from ??), 0) + 1, false)`, [quote(table), column, column, table]);
  }
}

/** Whether a table has at least one row. */
export async function hasRows(db: Knex | Knex.Transaction, table: string): Promise<boolean> {
  return Boolean(await db(table).first(db.raw('1 as one')));
}

/** Whether knex's migration table exists (a database nothing has run on has none). */
export async function hasMigrationTable(db: Knex): Promise<boolean> {
  return db.schema.hasTable('knex_migrations');
}
