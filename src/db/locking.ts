import type { Knex } from 'knex';
import { AUTOMATION_STATUS } from '../lib/constants';
import { isPostgres } from './index';

/**
 * Row claiming, the one place where SQLite and PostgreSQL lock differently. PostgreSQL:
 * `FOR UPDATE SKIP LOCKED`, so any number of workers share the rows without waiting on each
 * other. SQLite: a single writer, so the statement itself is the lock.
 */
export function skipLocked(db: Knex, query: Knex.QueryBuilder): Knex.QueryBuilder {
  return isPostgres(db) ? query.forUpdate().skipLocked() : query;
}

/** `FOR UPDATE` on PostgreSQL (waits for other writers of the rows); SQLite has one writer anyway. */
export function forUpdate(db: Knex, query: Knex.QueryBuilder): Knex.QueryBuilder {
  return isPostgres(db) ? query.forUpdate() : query;
}

/**
 * Takes the rows' locks for the rest of the transaction (PostgreSQL, `FOR UPDATE` in the
 * query's order); on SQLite the transaction holds the only write lock already, so nothing runs.
 */
export async function lockRows(db: Knex, query: Knex.QueryBuilder): Promise<void> {
  if (isPostgres(db)) await query.forUpdate();
}

export interface ClaimOptions {
  limit: number;
  now: string;
  leaseUntil: string;
  owner: string;
  columns: string[];
  /** Only rows of a priority below this one (the worker's lane for urgent mail). */
  priorityBelow?: number;
}

/**
 * Takes up to `limit` ledger rows that are due (queued and due, or sending with an expired
 * lease), marks them sending under a new lease and counts the attempt, in one statement.
 * Steps of an automation that is paused (or deleted) stay queued until it is live again.
 * The state values are literals so PostgreSQL can use the partial index `send_messages_claimable`.
 */
export async function claimMessages(db: Knex, options: ClaimOptions): Promise<Record<string, unknown>[]> {
  const lock = isPostgres(db) ? 'for update skip locked' : '';
  const returning = options.columns.map((c) => db.raw('??', [c]).toQuery()).join(', ');
  const sql = `update send_messages
    set state = 1, attempts = attempts + 1, available_at = ?, lease_owner = ?, updated_at = ?
    where id in (
      select id from send_messages
      where state in (0, 1) and available_at <= ?${options.priorityBelow === undefined ? '' : ' and priority < ?'}
        and (automation_id is null or exists (
          select 1 from automations a where a.id = send_messages.automation_id and a.status = ? and a.deleted_at is null))
      order by priority, available_at
      limit ? ${lock}
    )
    returning ${returning}`;
  const below = options.priorityBelow === undefined ? [] : [options.priorityBelow];
  const result = await db.raw(sql, [options.leaseUntil, options.owner, options.now, options.now, ...below, AUTOMATION_STATUS.live, options.limit]);
  return isPostgres(db) ? result.rows : result;
}
