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

/** An unsubscribe list: the recipients of unsubscribe group `groupId`, or the account's global list when it is null. */
export interface UnsubscribeList {
  userId: number;
  groupId: number | null;
}

/**
 * The one writer of unsubscribe lists (the API and dashboard, imports, the preference page and
 * one-click, complaints). Adds addresses (already split, de-duplicated and validated) all or
 * none, in the caller's transaction or its own; an address already on the list keeps its row,
 * so adding twice succeeds. Answers how many were added.
 */
export async function addUnsubscribers(db: Knex | Knex.Transaction, list: UnsubscribeList, addresses: string[], now: string = nowValue()): Promise<number> {
  const [table, conflict] = list.groupId === null
    ? ['global_unsubscribes', ['user_id', 'email_key']]
    : ['unsubscribe_group_recipients', ['unsubscribe_groups_id', 'email_key']];
  const rows = addresses.map((address) => ({
    user_id: list.userId,
    unsubscribe_groups_id: list.groupId,
    email_address: address,
    email_key: emailKey(address),
    created_at: now,
    updated_at: now,
  }));
  const write = (trx: Knex | Knex.Transaction) => insertIgnoringDuplicates(trx, table, rows, conflict);
  return db.isTransaction ? write(db) : db.transaction(write);
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
