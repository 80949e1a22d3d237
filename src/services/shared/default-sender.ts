import type { Knex } from 'knex';

/** A sender as a message's From: its name and address. */
export interface FromAddress {
  id: number;
  name: string;
  address: string;
}

/**
 * The account's default sender: its oldest verified sender still there. A team invitation comes
 * from it when there is one, and a new signup form proposes it for its confirmation mail, so the
 * account's mail to people carries the account's name and domain rather than the service's.
 */
export async function defaultSender(db: Knex, userId: number): Promise<FromAddress | undefined> {
  const row = await db('senders').where({ user_id: userId, is_verified: 1 }).whereNull('deleted_at').orderBy('id').first('id', 'nickname', 'from_name', 'from_email');
  return row && { id: Number(row.id), name: String(row.from_name || row.nickname || ''), address: String(row.from_email) };
}
