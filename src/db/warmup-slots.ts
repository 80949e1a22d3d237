import type { Knex } from 'knex';

/**
 * Takes one message of a sending domain's daily cap for a provider, if any is left: one atomic
 * upsert (the row's `used` grows only while under `cap`), so workers never overrun the cap
 * together. True when taken.
 */
export async function takeWarmupSlot(db: Knex, sendingDomainId: number, provider: string, day: string, cap: number): Promise<boolean> {
  if (cap <= 0) return false;
  const rows = await db.raw(
    `insert into warmup_usage (sending_domain_id, provider, day, used) values (?, ?, ?, 1)
     on conflict (sending_domain_id, provider, day) do update set used = warmup_usage.used + 1
     where warmup_usage.used < ?
     returning used`,
    [sendingDomainId, provider, day, cap],
  );
  return (Array.isArray(rows) ? rows : rows.rows).length > 0;
}
