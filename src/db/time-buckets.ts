import type { Knex } from 'knex';
import { isPostgres } from './index';

/**
 * The UTC hour of a timestamp column as text (`2026-11-22T09`), to group by. SQLite keeps
 * timestamps as the ISO strings the services write; PostgreSQL as timestamptz.
 */
export function utcHour(db: Knex, column: string): Knex.Raw {
  return isPostgres(db) ? db.raw(`to_char(?? at time zone 'UTC', 'YYYY-MM-DD"T"HH24')`, [column]) : db.raw('substr(??, 1, 13)', [column]);
}

/** The UTC day of a timestamp column as text (`2026-11-22`), to group by. */
export function utcDay(db: Knex, column: string): Knex.Raw {
  return isPostgres(db) ? db.raw(`to_char(?? at time zone 'UTC', 'YYYY-MM-DD')`, [column]) : db.raw('substr(??, 1, 10)', [column]);
}
