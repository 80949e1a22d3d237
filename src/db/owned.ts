import type { Knex } from 'knex';
import { NotFoundError } from '../lib/errors';

/**
 * Hard-deletes the rows of `table` among `ids` that belong to the account. Ids of other
 * accounts or of no row are ignored; none matching is "Record Not Found" (single and bulk
 * deletes of the reference behave alike).
 */
export async function deleteOwned(db: Knex, table: string, userId: number, ids: number[]): Promise<number> {
  const deleted = await db(table).where({ user_id: userId }).whereIn('id', ids).delete();
  if (deleted === 0) throw new NotFoundError();
  return deleted;
}
