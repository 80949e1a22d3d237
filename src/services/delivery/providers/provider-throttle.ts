import type { Knex } from 'knex';
import { forUpdate } from '../../../db/locking';
import type { Provider } from './provider-table';

/**
 * The deferrals that mean "you are sending us too much": a 421 reply, any 4.7.x enhanced code
 * (Gmail's 4.7.28 and 4.7.32, Outlook's 4.7.650 / 4.7.500 series), and the providers' own
 * throttling words (Yahoo's TSS04, Outlook's "rate limited"). One declaration, read by the
 * worker and documented in docs/deliverability.md.
 */
export const THROTTLING = {
  replyCodes: [421],
  enhanced: /\b4\.7\.\d{1,3}\b/,
  words: /\b(TSS0\d|TS0\d|rate[- ]limit\w*|throttl\w*|too much mail|too many (messages|connections)|unusual rate|temporarily deferred)\b/i,
} as const;

export function isThrottling(code: number | null, text: string): boolean {
  if (code !== null && (THROTTLING.replyCodes as readonly number[]).includes(code)) return true;
  if (code !== null && (code < 400 || code > 499)) return false;
  return THROTTLING.enhanced.test(text) || THROTTLING.words.test(text);
}

/** The longest wait after a deferral. */
export const MAX_BACKOFF_MS = 30 * 60_000;
/** Deliveries at a level before the rate climbs one step back. */
export const CLIMB_AFTER = 5;
/** The spacing at the first slowed level when this worker has seen no pace to halve. */
export const MIN_INTERVAL_MS = 10;

/** How the sending treats one provider (a row of provider_throttles). */
export interface ThrottleState {
  provider: Provider;
  /** 0: full speed; each level halves the rate. */
  level: number;
  /** Milliseconds between two messages to it while slowed. */
  intervalMs: number;
  backoffMs: number;
  /** No message to it before this (ms since the epoch). */
  waitUntil: number | null;
  successes: number;
  /** When this slowing began (ms since the epoch). */
  since: number | null;
  lastCode: string | null;
}

/**
 * A throttling deferral: the rate halves, and the provider waits, first SEND_RETRY_SECONDS, then
 * twice as long each time it defers again (with up to a quarter more at random, so workers do
 * not come back in step), at most 30 minutes. Deferrals of messages that were already in flight
 * while it waits change nothing more.
 */
export function afterDeferral(
  state: ThrottleState | undefined,
  at: { now: number; retryBaseMs: number; observedIntervalMs: number; random: number; code: string; provider: Provider },
): ThrottleState {
  if (state && state.waitUntil !== null && state.waitUntil > at.now) return { ...state, lastCode: at.code };
  const level = (state?.level ?? 0) + 1;
  const intervalMs = state && state.level > 0 ? state.intervalMs * 2 : Math.max(MIN_INTERVAL_MS, at.observedIntervalMs * 2);
  const backoffMs = state && state.level > 0 && state.backoffMs > 0 ? Math.min(MAX_BACKOFF_MS, state.backoffMs * 2) : Math.min(MAX_BACKOFF_MS, at.retryBaseMs);
  const waitUntil = at.now + Math.min(MAX_BACKOFF_MS, Math.round(backoffMs * (1 + 0.25 * at.random)));
  return { provider: at.provider, level, intervalMs, backoffMs, waitUntil, successes: 0, since: state?.since ?? at.now, lastCode: at.code };
}

/** A delivery: after CLIMB_AFTER of them the rate climbs one level back; at level 0 the slowing is over. */
export function afterDelivery(state: ThrottleState): ThrottleState {
  const successes = state.successes + 1;
  if (successes < CLIMB_AFTER) return { ...state, successes };
  const level = state.level - 1;
  if (level <= 0) return { ...state, level: 0, intervalMs: 0, backoffMs: 0, waitUntil: null, successes: 0, since: null };
  return { ...state, level, intervalMs: Math.max(MIN_INTERVAL_MS, Math.round(state.intervalMs / 2)), successes: 0 };
}

/** Until when a message to the provider waits (it is not attempted), or undefined: it may go. */
export function heldUntil(state: ThrottleState | undefined, now: number): number | undefined {
  return state && state.level > 0 && state.waitUntil !== null && state.waitUntil > now ? state.waitUntil : undefined;
}

const ms = (value: unknown): number | null => (value === null || value === undefined ? null : new Date(value as string).getTime());

function stateOf(row: Record<string, unknown>): ThrottleState {
  return {
    provider: String(row.provider) as Provider,
    level: Number(row.level),
    intervalMs: Number(row.interval_ms),
    backoffMs: Number(row.backoff_ms),
    waitUntil: ms(row.wait_until),
    successes: Number(row.successes),
    since: ms(row.since),
    lastCode: row.last_code === null || row.last_code === undefined ? null : String(row.last_code),
  };
}

const iso = (value: number | null) => (value === null ? null : new Date(value).toISOString());

/** How long this worker looks back to measure its pace to a provider. */
const PACE_WINDOW_MS = 10_000;

/**
 * The providers' throttling as one worker sees it: the rows of provider_throttles (shared by
 * every worker, read again at most once a second), changed in a transaction that locks the
 * provider's row; slots of a slowed provider are taken by one atomic statement.
 */
export class ProviderThrottles {
  private readonly states = new Map<string, ThrottleState>();
  private readAt = 0;
  // This worker's recent hand-overs per provider (their times), to halve its actual pace.
  private readonly recent = new Map<string, number[]>();

  constructor(
    private readonly db: Knex,
    private readonly retryBaseMs: number,
    private readonly random: () => number = Math.random,
  ) {}

  /** Reads the shared states again when the last read is older than a second. */
  async refresh(): Promise<void> {
    if (Date.now() - this.readAt < 1000) return;
    this.readAt = Date.now();
    const rows = await this.db('provider_throttles').select('*');
    this.states.clear();
    for (const row of rows) this.states.set(String(row.provider), stateOf(row));
  }

  heldUntil(provider: string, now: Date): Date | undefined {
    const until = heldUntil(this.states.get(provider), now.getTime());
    return until === undefined ? undefined : new Date(until);
  }

  /** Waits for the provider's next slot while it is slowed: answers the milliseconds to wait (0: go now). */
  async slot(provider: string, now: Date): Promise<number> {
    const state = this.states.get(provider);
    if (!state || state.level <= 0 || state.intervalMs <= 0) return 0;
    const at = now.getTime();
    const rows = await this.db.raw(
      'update provider_throttles set next_at = (case when next_at > ? then next_at else ? end) + interval_ms where provider = ? and level > 0 returning next_at, interval_ms',
      [at, at, provider],
    );
    const row = (Array.isArray(rows) ? rows : rows.rows)[0];
    return row ? Math.max(0, Number(row.next_at) - Number(row.interval_ms) - at) : 0;
  }

  /** A message was handed over to the provider. */
  async delivered(provider: string, now: Date): Promise<void> {
    const times = (this.recent.get(provider) ?? []).filter((t) => t > now.getTime() - PACE_WINDOW_MS);
    times.push(now.getTime());
    this.recent.set(provider, times.slice(-200));
    if (!this.states.get(provider)?.level) return;
    await this.change(provider, now, (state) => (state && state.level > 0 ? afterDelivery(state) : state));
  }

  /** The provider deferred a message for the sender's volume: answers until when its messages wait. */
  async deferred(provider: Provider, code: string, text: string, now: Date): Promise<Date> {
    const times = (this.recent.get(provider) ?? []).filter((t) => t > now.getTime() - PACE_WINDOW_MS);
    const observedIntervalMs = times.length > 1 ? (times[times.length - 1] - times[0]) / (times.length - 1) : 0;
    const state = await this.change(provider, now, (current) => afterDeferral(current, { now: now.getTime(), retryBaseMs: this.retryBaseMs, observedIntervalMs, random: this.random(), code, provider }), text);
    return new Date(state?.waitUntil ?? now.getTime() + this.retryBaseMs);
  }

  private async change(provider: string, now: Date, next: (state: ThrottleState | undefined) => ThrottleState | undefined, text?: string): Promise<ThrottleState | undefined> {
    const state = await this.db.transaction(async (trx) => {
      const [row] = await forUpdate(trx, trx('provider_throttles').where({ provider }).select('*'));
      const current = row ? stateOf(row) : undefined;
      const changed = next(current);
      if (!changed) return current;
      const values = {
        level: changed.level,
        interval_ms: changed.intervalMs,
        backoff_ms: changed.backoffMs,
        wait_until: iso(changed.waitUntil),
        successes: changed.successes,
        since: iso(changed.since),
        last_code: changed.lastCode,
        ...(text !== undefined ? { last_text: text.slice(0, 200) } : {}),
        updated_at: now.toISOString(),
      };
      if (row) await trx('provider_throttles').where({ provider }).update(values);
      else await trx('provider_throttles').insert({ provider, next_at: 0, last_text: null, ...values }).onConflict('provider').merge();
      return changed;
    });
    if (state) this.states.set(provider, state);
    return state;
  }
}

/** A provider slowed down now, for the reports ("Gmail is deferring: sending to it slowed since 10:42"). */
export interface SlowedProvider {
  provider: Provider;
  /** ISO time the slowing began. */
  since: string;
  level: number;
  last_code: string | null;
}

/** The providers slowed down now. */
export async function slowedProviders(db: Knex): Promise<SlowedProvider[]> {
  const rows = await db('provider_throttles').where('level', '>', 0).orderBy('provider').select('provider', 'since', 'level', 'last_code');
  return rows.map((row) => ({ provider: String(row.provider) as Provider, since: new Date(row.since).toISOString(), level: Number(row.level), last_code: row.last_code ?? null }));
}
