import type { Knex } from 'knex';
import { parseJson } from '../../../db/dialect';
import { takeWarmupSlot } from '../../../db/warmup-slots';
import { PROVIDERS, providerLabel } from './provider-table';

/** The schedule a warm-up starts from unless given its own: daily caps per provider over the first week. */
export const DEFAULT_WARMUP = [1000, 1500, 2000, 3000, 5000, 7000, 10000] as const;
/** After the schedule, each day's cap is this much more than the day before's. */
const GROWTH = 1.3;
/** A cap past this is no cap. */
const NO_CAP = 10_000_000;
const DAY_MS = 86_400_000;

const dayOf = (date: Date) => date.toISOString().slice(0, 10);

/** The cap per provider on the day of `now` (Infinity: none any more). */
export function warmupCap(schedule: readonly number[], startedAt: Date, now: Date): number {
  if (!schedule.length) return Infinity;
  const index = Math.floor((Date.parse(dayOf(now)) - Date.parse(dayOf(startedAt))) / DAY_MS);
  if (index < 0) return schedule[0];
  if (index < schedule.length) return schedule[index];
  const cap = Math.round(schedule[schedule.length - 1] * GROWTH ** (index - schedule.length + 1));
  return cap > NO_CAP ? Infinity : cap;
}

/** The next UTC midnight: when a message past today's cap is tried again. */
export function nextDay(now: Date): Date {
  return new Date(Date.parse(dayOf(now)) + DAY_MS);
}

/** A sending domain's warm-up as the worker uses it. */
export interface Warmup {
  sendingDomainId: number;
  schedule: number[];
  startedAt: Date;
}

/**
 * Warm-up caps: a sending domain with a schedule sends each provider at most its cap of the day
 * (UTC); the rest stays queued for the next day, not attempted.
 */
export function createWarmups(db: Knex) {
  return {
    /** The warm-ups of these accounts' domains, keyed `userId|domain`. */
    async of(userIds: number[]): Promise<Map<string, Warmup>> {
      if (!userIds.length) return new Map();
      const rows = await db('sending_domains').whereIn('user_id', userIds).whereNotNull('warmup').select('id', 'user_id', 'domain', 'warmup', 'warmup_started_at');
      return new Map(rows.map((r) => [`${Number(r.user_id)}|${String(r.domain)}`, { sendingDomainId: Number(r.id), schedule: parseJson<number[]>(r.warmup, []), startedAt: new Date(r.warmup_started_at) }]));
    },

    /** Takes one message of today's cap; false when the cap is reached. */
    async take(warmup: Warmup, provider: string, now: Date): Promise<boolean> {
      const cap = warmupCap(warmup.schedule, warmup.startedAt, now);
      if (cap === Infinity) return true;
      return takeWarmupSlot(db, warmup.sendingDomainId, provider, dayOf(now), cap);
    },
  };
}

/** Today's cap and use per provider of a sending domain, for its page. */
export async function warmupToday(db: Knex, domain: { id: number; warmup: number[] | null; warmup_started_at: string | null }, now = new Date()) {
  if (!domain.warmup || !domain.warmup_started_at) return undefined;
  const cap = warmupCap(domain.warmup, new Date(domain.warmup_started_at), now);
  const used = await db('warmup_usage').where({ sending_domain_id: domain.id, day: dayOf(now) }).select('provider', 'used');
  const usedBy = new Map(used.map((r) => [String(r.provider), Number(r.used)]));
  return { cap: cap === Infinity ? null : cap, providers: PROVIDERS.map((p) => ({ provider: p, label: providerLabel(p), used: usedBy.get(p) ?? 0 })) };
}
