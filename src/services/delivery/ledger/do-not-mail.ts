import type { Knex } from 'knex';
import { MESSAGE_KIND } from '../../../lib/constants';
import { instanceBounced, ON_INSTANCE_BOUNCE_LIST, type InstanceBounceList } from './instance-bounces';
import type { LedgerRow } from './ledger-row';

/**
 * The lists whose addresses campaign mail never goes to: the account's global unsubscribers and
 * suppressed (bounced, complained) addresses, and the recipients who left the message's
 * unsubscribe group. Each is keyed by `email_key` within its scope column. Expansion, enrolment
 * and the worker's last check before sending all read this list, so a new one is added here once.
 * `transactional`: the list stops transactional mail too (a receipt still goes to someone who
 * left the newsletter, never to an address that bounced or complained).
 */
export const DO_NOT_MAIL = [
  { table: 'global_unsubscribes', scope: 'user_id', of: 'account', transactional: false },
  { table: 'suppressed_addresses', scope: 'user_id', of: 'account', transactional: true },
  { table: 'unsubscribe_group_recipients', scope: 'unsubscribe_groups_id', of: 'group', transactional: false },
] as const;

/** Whose lists apply: the account's, and the message's unsubscribe group's when it has one. */
export interface Audience {
  userId: number;
  groupId: number | null;
}

/** One subquery per list that applies, each finding the address in `column` (correlated) on it. */
function listings(db: Knex, audience: Audience, column: string): Knex.QueryBuilder[] {
  return DO_NOT_MAIL.flatMap(({ table, scope, of }) => {
    const owner = of === 'account' ? audience.userId : audience.groupId;
    if (!owner) return [];
    return [db(table).select(db.raw('1')).where(`${table}.${scope}`, owner).whereRaw(`${table}.email_key = ${column}`)];
  });
}

/** Leaves out of `query` the rows whose address (`column`) the audience must not be written to. */
export function withoutUnsubscribed(query: Knex.QueryBuilder, db: Knex, audience: Audience, column: string): Knex.QueryBuilder {
  for (const listed of listings(db, audience, column)) query.whereNotExists(listed);
  return query;
}

/** A WHERE group (to pass to `where`/`orWhere`): the address in `column` is on one of the audience's lists. */
export function unsubscribedOrSuppressed(db: Knex, audience: Audience, column: string): (q: Knex.QueryBuilder) => void {
  return (q) => {
    for (const listed of listings(db, audience, column)) q.orWhereExists(listed);
  };
}

/** What a message skipped for the account's or its group's lists records. */
export const UNSUBSCRIBED_OR_SUPPRESSED = 'unsubscribed, bounced or deleted before sending';

/**
 * Rows of a claimed batch whose address was unsubscribed (globally or from the message's group)
 * or suppressed after the row was queued, with the reason each records: they are marked
 * suppressed instead of sent. One query per list for the whole batch; `instance`: the instance's
 * bounce list also applies (INSTANCE_BOUNCE_LIST), one more query, as of `instance.now`.
 */
export async function suppressedRowIds(
  db: Knex,
  rows: LedgerRow[],
  groupOf: (row: LedgerRow) => number | null,
  instance?: { list: InstanceBounceList; now: Date },
): Promise<Map<number, string>> {
  const campaign = rows.filter((r) => r.kind !== MESSAGE_KIND.system);
  const suppressed = new Map<number, string>();
  if (!campaign.length) return suppressed;
  const keys = [...new Set(campaign.map((r) => r.email_key))];
  const ownerOf = (row: LedgerRow, of: 'account' | 'group') => (of === 'account' ? Number(row.user_id) : groupOf(row));
  for (const { table, scope, of, transactional } of DO_NOT_MAIL) {
    const concerned = transactional ? campaign : campaign.filter((r) => r.kind !== MESSAGE_KIND.transactional);
    const owners = [...new Set(concerned.map((r) => ownerOf(r, of)).filter((o): o is number => o !== null))];
    if (!owners.length) continue;
    const found = await db(table).whereIn(scope, owners).whereIn('email_key', keys).select(scope, 'email_key');
    const listed = new Set(found.map((f) => `${f[scope]}:${f.email_key}`));
    for (const row of concerned) {
      const owner = ownerOf(row, of);
      if (owner !== null && listed.has(`${owner}:${row.email_key}`)) suppressed.set(Number(row.id), UNSUBSCRIBED_OR_SUPPRESSED);
    }
  }
  if (instance) {
    // Like the account's own suppressions, it stops transactional mail too: the address does not exist.
    const bounced = await instanceBounced(db, instance.list, keys, instance.now);
    for (const row of campaign) {
      if (!suppressed.has(Number(row.id)) && bounced.has(row.email_key)) suppressed.set(Number(row.id), ON_INSTANCE_BOUNCE_LIST);
    }
  }
  return suppressed;
}
