import type { Knex } from 'knex';
import { MESSAGE_KIND, SuppressionReason } from '../../lib/constants';
import type { LedgerRow } from './ledger-row';

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

export interface Suppression {
  userId: number;
  email: string;
  emailKey: string;
  category: SuppressionReason;
  /** What the mail system said (the SMTP reply, the DSN's diagnostic). */
  diagnostic: string;
  /** Where it was learnt: smtp, dsn, arf, imap, ses, sendgrid, postmark, mailgun, dashboard, api. */
  source: string;
  now: string;
}

/** Puts an address on the account's suppression list; one already there keeps its first record. True when added. */
export async function suppressAddress(trx: Knex | Knex.Transaction, s: Suppression): Promise<boolean> {
  const inserted = await trx('suppressed_addresses')
    .insert({
      user_id: s.userId,
      email_key: s.emailKey,
      email_address: s.email,
      category: s.category,
      source: s.source,
      reason: s.diagnostic.slice(0, 500),
      created_at: s.now,
    })
    .onConflict(['user_id', 'email_key'])
    .ignore()
    .returning('id');
  return inserted.length > 0;
}
