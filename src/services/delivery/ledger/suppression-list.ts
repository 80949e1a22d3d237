import type { Knex } from 'knex';
import type { SuppressionReason } from '../../../lib/constants';
import { bounceClass, type BounceClass } from '../../../lib/bounce-class';

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
  /** The refusal's class; by default read from the diagnostic when it is a bounce (none for complaints and hand-made ones). */
  bounceClass?: BounceClass | null;
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
      bounce_class: s.bounceClass !== undefined ? s.bounceClass : s.category.endsWith('_bounce') ? bounceClass(null, s.diagnostic) : null,
      created_at: s.now,
    })
    .onConflict(['user_id', 'email_key'])
    .ignore()
    .returning('id');
  return inserted.length > 0;
}
