import type { Knex } from 'knex';
import { isPostgres } from './index';

/** Delta rows of one account past which a read folds them into one row per type. */
const FOLD_AT = 64;

/**
 * The live (not deleted) contacts of an account by contact type id. On PostgreSQL the sum of
 * the `contact_counts` deltas that triggers on contacts write in every writing transaction
 * (migration 20261126_2331): exact, and a few index entries however many contacts the account
 * holds. Once they pile up, the read folds them into one row per type, in one statement that
 * a concurrent fold or write cannot make count twice. On SQLite, a count of the
 * (user_id, contact_type_id, deleted_at) index.
 */
export async function liveContactCounts(db: Knex, userId: number): Promise<Map<number, number>> {
  if (!isPostgres(db)) {
    const rows: Array<{ contact_type_id: number; n: number }> = await db('contacts')
      .where({ user_id: userId })
      .whereNull('deleted_at')
      .groupBy('contact_type_id')
      .select('contact_type_id', db.raw('count(*) as n'));
    return new Map(rows.map((r) => [Number(r.contact_type_id), Number(r.n)]));
  }
  const { rows } = await db.raw(
    'select contact_type_id, sum(n) as n, count(*) as deltas from contact_counts where user_id = ? group by contact_type_id',
    [userId],
  );
  const typed = rows as Array<{ contact_type_id: number; n: string; deltas: string }>;
  if (typed.reduce((sum, r) => sum + Number(r.deltas), 0) > FOLD_AT) {
    await db.raw(
      `with gone as (delete from contact_counts where user_id = ? returning contact_type_id, n)
       insert into contact_counts (user_id, contact_type_id, n)
         select ?, contact_type_id, sum(n) from gone group by contact_type_id having sum(n) <> 0`,
      [userId, userId],
    );
  }
  return new Map(typed.filter((r) => Number(r.n) !== 0).map((r) => [Number(r.contact_type_id), Number(r.n)]));
}

/** The live contacts of an account, all types together. */
export async function liveContactTotal(db: Knex, userId: number): Promise<number> {
  return [...(await liveContactCounts(db, userId)).values()].reduce((a, b) => a + b, 0);
}

/**
 * `contacts_count` of a `contact_types` row as a column of the same query (one round trip for a
 * list of types): the deltas' sum on PostgreSQL (folded by `liveContactCounts` reads), a count
 * of the (user_id, contact_type_id, deleted_at) index on SQLite.
 */
export function liveContactCountColumn(db: Knex): Knex.Raw {
  return isPostgres(db)
    ? db.raw('(select coalesce(sum(n), 0) from contact_counts where contact_counts.user_id = contact_types.user_id and contact_counts.contact_type_id = contact_types.id) as contacts_count')
    : db.raw('(select count(*) from contacts where contacts.user_id = contact_types.user_id and contacts.contact_type_id = contact_types.id and contacts.deleted_at is null) as contacts_count');
}

/** The account's live contacts as a subquery, for a select of several counts in one round trip (see `liveContactCounts`). */
export function liveContactTotalQuery(db: Knex, userId: number): Knex.QueryBuilder {
  return isPostgres(db)
    ? db('contact_counts').where({ user_id: userId }).select(db.raw('coalesce(sum(n), 0)'))
    : db('contacts').where({ user_id: userId }).whereNull('deleted_at').count('*');
}
