import type { Knex } from 'knex';
import { isPostgres } from './index';

/**
 * Every difference between SQLite and PostgreSQL that the services need lives here,
 * so the services themselves are written once.
 */

/** The current time as the value stored in timestamp columns (ISO 8601, UTC). */
export function nowValue(): string {
  return new Date().toISOString();
}

/** Inserts one row and returns its id on both databases. */
export async function insertId(db: Knex | Knex.Transaction, table: string, row: Record<string, unknown>): Promise<number> {
  const [inserted] = await db(table).insert(row).returning('id');
  return Number(typeof inserted === 'object' ? inserted.id : inserted);
}

/** A JSON value ready for a JSON column (jsonb on PostgreSQL, text on SQLite). */
export function jsonValue(value: unknown): string | null {
  return value === null || value === undefined ? null : JSON.stringify(value);
}

/** Reads a JSON column: PostgreSQL returns parsed values, SQLite returns text. */
export function parseJson<T>(value: unknown, fallback: T): T {
  if (value === null || value === undefined || value === '') return fallback;
  if (typeof value === 'string') {
    try {
      return JSON.parse(value) as T;
    } catch {
      return fallback;
    }
  }
  return value as T;
}

/** A count(*) result as a number (PostgreSQL returns bigint counts as strings). */
export function toCount(value: unknown): number {
  return value === null || value === undefined ? 0 : Number(value);
}

/** Case-insensitive key used for email uniqueness per account. */
/**
 * Rows per multi-row INSERT: knex writes SQLite multi-row inserts with ON CONFLICT as a
 * compound SELECT (at most 500 terms); PostgreSQL is bounded by 65535 bind parameters.
 */
export function rowsPerInsert(db: Knex, columns: number): number {
  return isPostgres(db) ? Math.floor(60000 / columns) : Math.min(400, Math.floor(30000 / columns));
}

/**
 * Updates the planner's statistics of a table after a bulk change (PostgreSQL's autovacuum
 * would only do it later; until then estimates are off by orders of magnitude). SQLite plans
 * these queries from its indexes and needs nothing.
 */
export async function refreshStatistics(db: Knex | Knex.Transaction, table: string): Promise<void> {
  if (isPostgres(db as Knex)) await db.raw('analyze ??', [table]);
}

/**
 * After rows were deleted or overwritten so that nothing of them may stay (a privacy erasure):
 * PostgreSQL keeps the old versions as dead tuples until a VACUUM removes them, so one runs on
 * the tables now; SQLite already overwrote the freed space (secure_delete, src/db/index.ts), and
 * the old pages still in the write-ahead log go with a checkpoint that truncates it. Outside a
 * transaction (a VACUUM cannot run in one).
 */
export async function reclaimFreedSpace(db: Knex, tables: string[]): Promise<void> {
  if (isPostgres(db)) await db.raw(`vacuum ${tables.map(() => '??').join(', ')}`, tables);
  else await db.raw('pragma wal_checkpoint(truncate)');
}

/** Rows changed by a raw INSERT / UPDATE / DELETE: pg reports rowCount, better-sqlite3 changes. */
export function affectedRows(result: unknown): number {
  const r = result as { rowCount?: number | null; changes?: number } | undefined;
  return Number(r?.rowCount ?? r?.changes ?? 0);
}

/**
 * Inserts rows in chunks, skipping those that collide with a unique key on `conflict`
 * (ON CONFLICT DO NOTHING on both databases); answers how many were added (the table's key is
 * `id`). Call it inside a transaction for all-or-nothing.
 */
export async function insertIgnoringDuplicates(
  db: Knex | Knex.Transaction,
  table: string,
  rows: Record<string, unknown>[],
  conflict: string[],
): Promise<number> {
  if (rows.length === 0) return 0;
  const chunk = rowsPerInsert(db as Knex, Object.keys(rows[0]).length);
  let added = 0;
  for (let i = 0; i < rows.length; i += chunk) {
    added += (await db(table).insert(rows.slice(i, i + chunk)).onConflict(conflict).ignore().returning('id')).length;
  }
  return added;
}

/** True for a unique-constraint violation (PostgreSQL 23505, SQLite SQLITE_CONSTRAINT_UNIQUE). */
export function isUniqueViolation(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === '23505' || code === 'SQLITE_CONSTRAINT_UNIQUE';
}

/** `column` (a JSON object) without `key`, for an UPDATE. Keys are plain identifiers ([A-Za-z0-9_]). */
export function jsonWithoutKey(db: Knex, column: string, key: string): Knex.Raw {
  return isPostgres(db) ? db.raw('?? - ?', [column, key]) : db.raw('json_remove(??, ?)', [column, `$."${key}"`]);
}

/** A WHERE condition: the JSON object in `column` has `key`. */
export function jsonHasKey(db: Knex, column: string, key: string): Knex.Raw {
  return isPostgres(db) ? db.raw('jsonb_exists(??, ?)', [column, key]) : db.raw('json_type(??, ?) is not null', [column, `$."${key}"`]);
}

/**
 * On PostgreSQL, runs the query as a named prepared statement: each pooled connection parses
 * and plans it once, not on every call (the backend's CPU of a small hot read). `name` must
 * belong to this one query text: a second text under the same name fails on the connection.
 */
export function preparedAs<Q extends Knex.QueryBuilder | Knex.Raw>(db: Knex, query: Q, name: string): Q {
  return isPostgres(db) ? (query.options({ name }) as Q) : query;
}
