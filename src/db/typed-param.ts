import type { Knex } from 'knex';
import { isPostgres } from './index';

/**
 * A bound value in a SELECT list (as in INSERT … SELECT ?, …): PostgreSQL needs its type
 * spelled out, SQLite takes it as it is.
 */
export function typedParam(db: Knex, value: unknown, pgType: 'integer' | 'smallint' | 'timestamptz' | 'text'): Knex.Raw {
  return isPostgres(db) ? db.raw(`cast(? as ${pgType})`, [value as never]) : db.raw('?', [value as never]);
}
