import type { Knex } from 'knex';
import { insertIgnoringDuplicates, nowValue } from '../../db/dialect';
import { emailKey } from '../../lib/email-key';
import { timestamp } from '../../lib/time';

/** A global unsubscriber or a recipient of an unsubscribe group: the reference gives both one shape. */
export interface UnsubscriberRecord {
  id: number;
  user_id: number;
  unsubscribe_groups_id: number | null;
  email_address: string;
  created_at: string | null;
  updated_at: string | null;
}

export function unsubscriberRecord(row: Record<string, unknown>): UnsubscriberRecord {
  return {
    id: Number(row.id),
    user_id: Number(row.user_id),
    unsubscribe_groups_id: row.unsubscribe_groups_id === null || row.unsubscribe_groups_id === undefined ? null : Number(row.unsubscribe_groups_id),
    email_address: String(row.email_address),
    created_at: timestamp(row.created_at),
    updated_at: timestamp(row.updated_at),
  };
}

/**
 * Adds addresses (already split, de-duplicated and validated) in one transaction. An address
 * already present under the unique key `conflict` keeps its row: adding twice succeeds.
 */
export async function addUnsubscribers(
  db: Knex,
  table: string,
  conflict: string[],
  owner: { user_id: number; unsubscribe_groups_id: number | null },
  addresses: string[],
): Promise<void> {
  const now = nowValue();
  const rows = addresses.map((address) => ({
    ...owner,
    email_address: address,
    email_key: emailKey(address),
    created_at: now,
    updated_at: now,
  }));
  await db.transaction((trx) => insertIgnoringDuplicates(trx, table, rows, conflict));
}

/**
 * Puts addresses an imported file marks bounced or cleaned (Mailchimp's cleaned members, a
 * `bounced` status) on the account's suppression list as hard bounces, learnt from the import;
 * one already there keeps its first record.
 */
export async function suppressImported(trx: Knex.Transaction, userId: number, addresses: string[]): Promise<void> {
  const now = nowValue();
  const rows = addresses.map((address) => ({
    user_id: userId,
    email_address: address,
    email_key: emailKey(address),
    category: 'hard_bounce',
    source: 'import',
    reason: 'marked bounced or cleaned in the imported file',
    created_at: now,
  }));
  await insertIgnoringDuplicates(trx, 'suppressed_addresses', rows, ['user_id', 'email_key']);
}
