import type { Knex } from 'knex';
import { isPostgres } from '.';
import { preparedAs } from './dialect';

/**
 * Rate limits shared by every process through one row each (migration 0760). Each call is one
 * atomic upsert, so concurrent processes never hand out the same slot or lose a hit. PostgreSQL
 * reads the time from the database's clock (processes on several hosts agree); SQLite, whose
 * processes share one host, from the caller's.
 */

/** One instant for the whole statement. */
const PG_NOW_MS = '(extract(epoch from statement_timestamp()) * 1000)::float8';

/**
 * Reserves the next slot of one row of a slot table (`intervalMs` after the previous one, or now
 * when the last is past) and returns how many milliseconds to wait for it.
 */
async function reserveSlot(db: Knex, table: 'mail_rate_slots' | 'relay_rate_slots', keyColumn: 'user_id' | 'relay_id', key: number, intervalMs: number): Promise<number> {
  if (isPostgres(db)) {
    const result = await db.raw(
      `insert into ${table} as s (${keyColumn}, next_at) values (?, ${PG_NOW_MS} + ?)
       on conflict (${keyColumn}) do update set next_at = greatest(s.next_at, ${PG_NOW_MS}) + ?
       returning next_at - ? - ${PG_NOW_MS} as wait_ms`,
      [key, intervalMs, intervalMs, intervalMs],
    );
    return Math.max(0, Number(result.rows[0].wait_ms));
  }
  const now = Date.now();
  const rows = await db.raw(
    `insert into ${table} (${keyColumn}, next_at) values (?, ?)
     on conflict (${keyColumn}) do update set next_at = max(next_at, ?) + ?
     returning next_at`,
    [key, now + intervalMs, now, intervalMs],
  );
  return Math.max(0, Number(rows[0].next_at) - intervalMs - now);
}

/** The account's next sending slot (MAIL_RATE). */
export function reserveMailSlot(db: Knex, userId: number, intervalMs: number): Promise<number> {
  return reserveSlot(db, 'mail_rate_slots', 'user_id', userId, intervalMs);
}

/** Counts one hit in the key's current fixed window; returns the window's hits and its end (ms since the epoch). */
export async function countApiHit(db: Knex, key: string, windowMs: number): Promise<{ hits: number; resetAt: number }> {
  if (isPostgres(db)) {
    // Every API request runs it: parsed and planned once per connection.
    const result = await preparedAs(db, db.raw(
      `insert into api_rate_windows as w (key, window_start, hits) values (?, floor(${PG_NOW_MS} / ?)::bigint * ?, 1)
       on conflict (key) do update set
         hits = case when w.window_start = excluded.window_start then w.hits + 1 else 1 end,
         window_start = excluded.window_start
       returning hits, window_start`,
      [key, windowMs, windowMs],
    ), 'api-rate-hit');
    const row = result.rows[0];
    return { hits: Number(row.hits), resetAt: Number(row.window_start) + windowMs };
  }
  const start = Math.floor(Date.now() / windowMs) * windowMs;
  const rows = await db.raw(
    `insert into api_rate_windows (key, window_start, hits) values (?, ?, 1)
     on conflict (key) do update set
       hits = case when window_start = excluded.window_start then hits + 1 else 1 end,
       window_start = excluded.window_start
     returning hits, window_start`,
    [key, start],
  );
  return { hits: Number(rows[0].hits), resetAt: Number(rows[0].window_start) + windowMs };
}

/** Takes back a hit (a request the limiter decided not to count). */
export async function uncountApiHit(db: Knex, key: string): Promise<void> {
  await db('api_rate_windows').where({ key }).where('hits', '>', 0).decrement('hits', 1);
}

/** Forgets the key's window. */
export async function resetApiHits(db: Knex, key: string): Promise<void> {
  await db('api_rate_windows').where({ key }).delete();
}

/** Drops the windows that ended before `windowStart` (keys no longer in use). */
export async function dropApiWindowsBefore(db: Knex, windowStart: number): Promise<void> {
  await db('api_rate_windows').where('window_start', '<', windowStart).delete();
}

/**
 * Takes one of `slots` slots of the key (an account's address) that is free or was taken
 * before `freeBefore` (ms since the epoch), marking it taken at `now`; false when all are taken
 * since. Each slot is one upsert whose WHERE is checked against the latest committed row, so
 * two concurrent callers can never both take the same slot (PostgreSQL makes the second wait
 * for the first's transaction, then looks again); called in order, each takes the first free.
 */
export async function takeSignupMailSlot(db: Knex, key: { userId: number; address: string }, slots: number, now: number, freeBefore: number): Promise<boolean> {
  for (let slot = 0; slot < slots; slot += 1) {
    const result = await db.raw(
      `insert into signup_mail_slots (user_id, address, slot, taken_at) values (?, ?, ?, ?)
       on conflict (user_id, address, slot) do update set taken_at = excluded.taken_at
       where signup_mail_slots.taken_at < ?
       returning slot`,
      [key.userId, key.address, slot, now, freeBefore],
    );
    if ((isPostgres(db) ? result.rows : result).length > 0) return true;
  }
  return false;
}

/**
 * Drops sign-up mail slots taken before `before` (they count for nothing). Rows another
 * transaction is taking are skipped on PostgreSQL, so the sweep never waits and never deadlocks
 * with a submission; SQLite has one writer.
 */
export async function dropSignupMailSlotsBefore(db: Knex, before: number): Promise<void> {
  const skip = isPostgres(db) ? 'for update skip locked' : '';
  await db.raw(
    `delete from signup_mail_slots where (user_id, address, slot) in (
       select user_id, address, slot from signup_mail_slots where taken_at < ? limit 500 ${skip})`,
    [before],
  );
}

/** A relay's next sending slot: its `max_rate` holds across every worker process. */
export function reserveRelaySlot(db: Knex, relayId: number, intervalMs: number): Promise<number> {
  return reserveSlot(db, 'relay_rate_slots', 'relay_id', relayId, intervalMs);
}
