import type { Knex } from 'knex';
import type { SenderDomainStatus } from '../../../lib/constants';
import { openSecret } from '../../../lib/crypto';
import { ValidationError } from '../../../lib/errors';
import { DkimKey, signingDomainOf } from '../../../mail/dkim';
import type { DomainRecord } from '../../../mail/domain-records';
import { parseJson } from '../../../db/dialect';

/** The purpose the domains' DKIM private keys are sealed under (src/lib/crypto.ts). */
export const DKIM_KEY_PURPOSE = 'sending-domain-dkim-key';

/**
 * The key that signs an account's mail from `address`: its verified sending domain's that is
 * the address's domain or a parent of it (the longest such), or undefined (the transport then
 * signs with the instance's DKIM_DOMAIN, when set).
 */
export async function signingKeyOf(db: Knex, secret: string, userId: number, address: string): Promise<SigningDomain | undefined> {
  const rows = await db('sending_domains').where({ user_id: userId, status: 'verified' }).select('domain', 'dkim_selector', 'dkim_private_key_sealed', 'records');
  const domain = signingDomainOf(address, rows.map((r) => String(r.domain)));
  const row = domain ? rows.find((r) => r.domain === domain) : undefined;
  if (!row) return undefined;
  const returnPath = parseJson<DomainRecord[]>(row.records, []).find((r) => r.purpose === 'return_path' && r.status === 'ok');
  return {
    dkim: { domain: String(row.domain), selector: String(row.dkim_selector), privateKey: openSecret(secret, DKIM_KEY_PURPOSE, String(row.dkim_private_key_sealed)) },
    ...(returnPath ? { returnPathDomain: returnPath.host } : {}),
  };
}

/** What a verified sending domain gives a message: its key, and its bounce subdomain when that checked out. */
export interface SigningDomain {
  dkim: DkimKey;
  returnPathDomain?: string;
}

/**
 * A sender's `domain_status` as a column of a query of `table` (which has `user_id` and
 * `from_email`): the status of the longest verified or failing sending domain of its account
 * that is its address's domain or a parent of it; null when none is (unauthenticated).
 */
export function domainStatusColumn(db: Knex, table: string): Knex.QueryBuilder {
  return db('sending_domains as sd')
    .whereRaw(`sd.user_id = ${table}.user_id`)
    .whereIn('sd.status', ['verified', 'failing'])
    .where((q) => q.whereRaw(`lower(${table}.from_email) like ('%@' || sd.domain)`).orWhereRaw(`lower(${table}.from_email) like ('%.' || sd.domain)`))
    .orderByRaw('length(sd.domain) desc')
    .limit(1)
    .select('sd.status')
    .as('domain_status');
}

/** How each address of an account stands: verified or failing by its (longest) sending domain, else unauthenticated. */
export async function domainStatusesOf(db: Knex, userId: number): Promise<(address: string) => SenderDomainStatus> {
  const rows = await db('sending_domains').where({ user_id: userId }).whereIn('status', ['verified', 'failing']).select('domain', 'status');
  const byDomain = new Map(rows.map((r) => [String(r.domain), String(r.status) as SenderDomainStatus]));
  return (address) => {
    const domain = signingDomainOf(address, byDomain.keys());
    return domain ? (byDomain.get(domain) ?? 'unauthenticated') : 'unauthenticated';
  };
}

export const SENDER_DOMAIN_UNAUTHENTICATED = "The sender's domain is not authenticated.";

/**
 * With REQUIRE_DOMAIN_AUTH, starting mail from an address whose sending domain is not verified
 * is a 422 on `sender_id` (a failing domain counts as not authenticated: its mail would fail DMARC).
 */
export async function refuseUnauthenticated(db: Knex, requireDomainAuth: boolean, userId: number, addresses: string[]): Promise<void> {
  const error = await unauthenticatedError(db, requireDomainAuth, userId, addresses);
  if (error) throw ValidationError.of('sender_id', error);
}

/** The `sender_id` message of refuseUnauthenticated, or undefined. */
export async function unauthenticatedError(db: Knex, requireDomainAuth: boolean, userId: number, addresses: string[]): Promise<string | undefined> {
  if (!requireDomainAuth || !addresses.length) return undefined;
  const statusOf = await domainStatusesOf(db, userId);
  return addresses.some((address) => statusOf(address) !== 'verified') ? SENDER_DOMAIN_UNAUTHENTICATED : undefined;
}
