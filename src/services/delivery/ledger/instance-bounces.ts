import type { Knex } from 'knex';
import { hmac, purposeKey } from '../../../lib/crypto';

/** How long an address that hard-bounced anywhere on the instance is skipped by every account. */
export const INSTANCE_BOUNCE_DAYS = 30;
const INSTANCE_BOUNCE_MS = INSTANCE_BOUNCE_DAYS * 86_400_000;

/** What a message skipped for the instance's list records: it names no other account. */
export const ON_INSTANCE_BOUNCE_LIST = `on the instance's bounce list (a hard bounce in the last ${INSTANCE_BOUNCE_DAYS} days)`;

/**
 * The instance's bounce list (INSTANCE_BOUNCE_LIST=1). Addresses are kept only as an HMAC under
 * a key of their own derived from the app secret: the table cannot be read back into addresses,
 * nor tell which account an address belongs to.
 */
export interface InstanceBounceList {
  /** The stored form of an address (its email_key). */
  hashOf(emailKey: string): string;
}

export function instanceBounceList(appSecret: string): InstanceBounceList {
  const key = purposeKey(appSecret, 'instance-bounce-list').toString('base64');
  return { hashOf: (emailKey) => hmac(key, emailKey) };
}

/** Records a hard bounce: the address is skipped from `now` for the next 30 days (a later bounce restarts them). */
export async function listInstanceBounce(trx: Knex | Knex.Transaction, list: InstanceBounceList, emailKey: string, now: string): Promise<void> {
  await trx('instance_bounces').insert({ address_hash: list.hashOf(emailKey), bounced_at: now }).onConflict('address_hash').merge(['bounced_at']);
}

/** The addresses (email keys) among `emailKeys` that hard-bounced on the instance within 30 days of `now`: one query. */
export async function instanceBounced(db: Knex, list: InstanceBounceList, emailKeys: string[], now: Date): Promise<Set<string>> {
  if (!emailKeys.length) return new Set();
  const byHash = new Map(emailKeys.map((key) => [list.hashOf(key), key]));
  const found = await db('instance_bounces')
    .whereIn('address_hash', [...byHash.keys()])
    .where('bounced_at', '>', new Date(now.getTime() - INSTANCE_BOUNCE_MS).toISOString())
    .select('address_hash');
  return new Set(found.map((row) => byHash.get(String(row.address_hash))!));
}
