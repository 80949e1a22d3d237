import type { Knex } from 'knex';

/**
 * Removes the rule memberships of contacts that are being deleted (in the caller's
 * transaction), so counts and sends never see them; stored recipients stay.
 */
export async function dropRuleMemberships(trx: Knex | Knex.Transaction, contactIds: number[] | Knex.QueryBuilder): Promise<void> {
  await trx('segment_recipients').where({ source: 'rule' }).whereIn('contact_id', contactIds).delete();
}
