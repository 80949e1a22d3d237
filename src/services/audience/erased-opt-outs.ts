import type { Knex } from 'knex';
import { hmac } from '../../lib/crypto';

/**
 * The opt-outs of an erased address (its global unsubscribe, group unsubscribes and suppression)
 * must outlive the address, or the account could mail it again once it comes back in an import.
 * Erasure keeps them under a keyed hash of the address's key instead (HMAC with the app secret:
 * without the secret a list of addresses cannot be checked against them), and the address is
 * matched again by that hash when it comes back into the account: as a contact, a segment
 * recipient or a signup. The rows then carry the address again, so every check of the lists
 * (sending, enrolment, signups) reads them as it reads any other row; none hashes per row.
 */

/** The lists, each with the column that scopes a row within the account. */
const OPT_OUT_LISTS = [
  { table: 'global_unsubscribes', scope: 'user_id' },
  { table: 'unsubscribe_group_recipients', scope: 'unsubscribe_groups_id' },
  { table: 'suppressed_addresses', scope: 'user_id' },
] as const;

export const OPT_OUT_TABLES = OPT_OUT_LISTS.map((l) => l.table);

/** What an erased address's key becomes in the lists: never a valid address (no `@`). */
export function hiddenKey(secret: string, key: string): string {
  return `#${hmac(secret, `opt-out:${key}`)}`;
}

/** What a list row keeps of an erased address, where it kept its own words (a bounce's diagnostic). */
export const ERASED_TEXT = '(erased)';

/**
 * Replaces `key` by its hash in the account's lists. A row already there under the hash (the
 * address was erased before, and listed again since) stays, and the new one goes.
 */
export async function hideOptOuts(trx: Knex.Transaction, secret: string, userId: number, key: string): Promise<number> {
  const hidden = hiddenKey(secret, key);
  let changed = 0;
  for (const { table, scope } of OPT_OUT_LISTS) {
    const rows: Record<string, unknown>[] = await trx(table).where({ user_id: userId }).whereIn('email_key', [key, hidden]).select('id', scope, 'email_key');
    const alreadyHidden = new Set(rows.filter((r) => r.email_key === hidden).map((r) => String(r[scope])));
    const plain = rows.filter((r) => r.email_key === key);
    const drop = plain.filter((r) => alreadyHidden.has(String(r[scope]))).map((r) => Number(r.id));
    const hide = plain.filter((r) => !alreadyHidden.has(String(r[scope]))).map((r) => Number(r.id));
    if (drop.length) await trx(table).whereIn('id', drop).delete();
    if (hide.length) {
      const words = table === 'suppressed_addresses' ? { reason: ERASED_TEXT } : {};
      await trx(table).whereIn('id', hide).update({ email_key: hidden, email_address: hidden, ...words });
    }
    changed += plain.length;
  }
  return changed;
}

/**
 * Gives the account's hashed list rows of these address keys their address back (see above), so
 * the lists hold for them again; called in the transaction that brings the addresses in,
 * before anything there reads the lists. A row also there under the address itself wins.
 */
export async function restoreOptOuts(trx: Knex | Knex.Transaction, secret: string, userId: number, keys: string[]): Promise<void> {
  if (!keys.length) return;
  // Most accounts never erased anyone: an index probe per list spares hashing every imported key.
  const holding = [];
  for (const list of OPT_OUT_LISTS) {
    if (await trx(list.table).where({ user_id: userId }).where('email_key', '>=', '#').where('email_key', '<', '$').first('id')) holding.push(list);
  }
  if (!holding.length) return;
  const byHidden = new Map(keys.map((key) => [hiddenKey(secret, key), key]));
  for (const { table, scope } of holding) {
    const found: Record<string, unknown>[] = await trx(table).where({ user_id: userId }).whereIn('email_key', [...byHidden.keys()]).select('id', scope, 'email_key');
    for (const row of found) {
      const key = byHidden.get(String(row.email_key))!;
      const twin = await trx(table).where({ [scope]: row[scope], email_key: key }).first('id');
      if (twin) await trx(table).where({ id: row.id }).delete();
      else await trx(table).where({ id: row.id }).update({ email_key: key, email_address: key });
    }
  }
}
