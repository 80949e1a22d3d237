import type { Knex } from 'knex';
import { MESSAGE_KIND } from '../lib/constants';
import type { LedgerRow } from './sources';

/**
 * Rows of a claimed batch whose address was unsubscribed (globally or from the message's group)
 * or bounced after the row was queued: they are marked suppressed instead of sent.
 */
export async function suppressedRowIds(db: Knex, rows: LedgerRow[], groupOf: (row: LedgerRow) => number | null): Promise<Set<number>> {
  const campaign = rows.filter((r) => r.kind !== MESSAGE_KIND.system);
  const suppressed = new Set<number>();
  if (!campaign.length) return suppressed;
  const keys = [...new Set(campaign.map((r) => r.email_key))];
  const users = [...new Set(campaign.map((r) => Number(r.user_id)))];
  const groups = [...new Set(campaign.map(groupOf).filter((g): g is number => g !== null))];

  const byUser = new Set<string>();
  for (const table of ['global_unsubscribes', 'suppressed_addresses']) {
    const found = await db(table).whereIn('user_id', users).whereIn('email_key', keys).select('user_id', 'email_key');
    for (const f of found) byUser.add(`${f.user_id}:${f.email_key}`);
  }
  const byGroup = new Set<string>();
  if (groups.length) {
    const found = await db('unsubscribe_group_recipients')
      .whereIn('unsubscribe_groups_id', groups)
      .whereIn('email_key', keys)
      .select('unsubscribe_groups_id', 'email_key');
    for (const f of found) byGroup.add(`${f.unsubscribe_groups_id}:${f.email_key}`);
  }
  for (const row of campaign) {
    const group = groupOf(row);
    if (byUser.has(`${row.user_id}:${row.email_key}`) || (group !== null && byGroup.has(`${group}:${row.email_key}`))) {
      suppressed.add(Number(row.id));
    }
  }
  return suppressed;
}
