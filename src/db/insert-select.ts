import type { Knex } from 'knex';
import { isPostgres } from './index';

/**
 * `INSERT INTO table (columns…) SELECT values… FROM <query> ON CONFLICT DO NOTHING`: rows are
 * written set-based by the database, and rows a unique index already holds are skipped.
 * `columns` maps each target column to a column of the query or a typed parameter
 * (typedParam). Answers how many rows were added.
 */
export async function insertSelect(
  db: Knex,
  table: string,
  columns: Record<string, string | Knex.Raw>,
  query: Knex.QueryBuilder,
): Promise<number> {
  const names = Object.keys(columns).map((c) => db.raw('??', [c]).toQuery()).join(', ');
  const { sql, bindings } = query.clone().clearSelect().select(Object.values(columns)).toSQL();
  const result = await db.raw(`insert into ${db.raw('??', [table]).toQuery()} (${names}) ${sql} on conflict do nothing`, bindings);
  return Number(isPostgres(db) ? result.rowCount : result.changes);
}

/** insertSelect answering the added rows' `returning` columns instead of their number. */
export async function insertSelectReturning(
  db: Knex,
  table: string,
  columns: Record<string, string | Knex.Raw>,
  query: Knex.QueryBuilder,
  returning: string[],
): Promise<Record<string, unknown>[]> {
  const names = Object.keys(columns).map((c) => db.raw('??', [c]).toQuery()).join(', ');
  const back = returning.map((c) => db.raw('??', [c]).toQuery()).join(', ');
  const { sql, bindings } = query.clone().clearSelect().select(Object.values(columns)).toSQL();
  const result = await db.raw(`insert into ${db.raw('??', [table]).toQuery()} (${names}) ${sql} on conflict do nothing returning ${back}`, bindings);
  return isPostgres(db) ? result.rows : result;
}
