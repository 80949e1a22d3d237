import type { Knex } from 'knex';
import { nowValue } from '../../../db/dialect';
import { NotFoundError } from '../../../lib/errors';
import type { Ctx } from '../../context';
import { recordAudit } from '../../shared/audit-writer';
import type { ProviderFiguresService } from './provider-figures';
import { isProvider, providerLabel, PROVIDERS, type Provider } from './provider-table';

/** The guard's lines (COMPLAINT_PAUSE_RATE, BOUNCE_PAUSE_RATE, GUARD_MIN_DELIVERED). */
export interface GuardSettings {
  complaintPauseRate: number;
  bouncePauseRate: number;
  guardMinDelivered: number;
}

/** A sending domain's mail to one provider, paused by the guard. */
export interface ProviderPause {
  id: number;
  userId: number;
  sendingDomainId: number;
  domain: string;
  provider: Provider;
  reason: string;
}

/** How long a message held by a pause waits before it is looked at again. */
export const PAUSED_RECHECK_MS = 10 * 60_000;
/** The guard's window. */
const WINDOW_MS = 24 * 3_600_000;

const percent = (part: number, whole: number) => `${(Math.round((10_000 * part) / whole) / 100).toString()}%`;

/**
 * The complaint and bounce guard: per sending domain and provider over the last 24 hours, when
 * complaints reach COMPLAINT_PAUSE_RATE of delivered or hard bounces BOUNCE_PAUSE_RATE, with at
 * least GUARD_MIN_DELIVERED delivered, that domain's mail to that provider pauses (one row of
 * provider_pauses: its messages stay queued) until an admin resumes it from the domain's page.
 * Providers are judged one by one; `other` gathers unrelated domains and is never paused.
 */
export function createProviderGuard({ db, figures, settings }: { db: Knex; figures: Pick<ProviderFiguresService, 'ofDomainSince'>; settings: GuardSettings }) {
  function reasonOf(domain: string, provider: Provider, f: { delivered: number; complained: number; bounced: number }): string | undefined {
    const name = providerLabel(provider);
    const tail = `Its messages stay queued. Find out why (the send reports show each provider's figures), then resume ${domain}'s mail to ${name} from the sending domain's page.`;
    if (f.complained / f.delivered >= settings.complaintPauseRate) {
      return `Spam complaints from ${name} reached ${percent(f.complained, f.delivered)} of the ${f.delivered} delivered from ${domain} in the last 24 hours (the line is ${percent(settings.complaintPauseRate, 1)}): mail from ${domain} to ${name} is paused. ${tail}`;
    }
    if (f.bounced / f.delivered >= settings.bouncePauseRate) {
      return `Hard bounces at ${name} reached ${percent(f.bounced, f.delivered)} of the ${f.delivered} delivered from ${domain} in the last 24 hours (the line is ${percent(settings.bouncePauseRate, 1)}): mail from ${domain} to ${name} is paused. ${tail}`;
    }
    return undefined;
  }

  /** Writes a pause (a new one, or again after a resume): false when it is paused already. */
  async function pause(domain: { id: number; user_id: number; domain: string }, provider: Provider, reason: string, now: Date, onPaused?: (pause: ProviderPause, trx: Knex.Transaction) => Promise<void>): Promise<boolean> {
    return db.transaction(async (trx) => {
      const values = { user_id: domain.user_id, sending_domain_id: domain.id, provider, paused_reason: reason, paused_at: now.toISOString(), resumed_at: null, resumed_after_id: null };
      const [row] = await trx('provider_pauses')
        .insert(values)
        .onConflict(['sending_domain_id', 'provider'])
        .merge(['paused_reason', 'paused_at', 'resumed_at', 'resumed_after_id'])
        .whereNotNull('provider_pauses.resumed_at')
        .returning('id');
      if (!row) return false;
      const id = Number((row as { id?: number }).id ?? row);
      await onPaused?.({ id, userId: Number(domain.user_id), sendingDomainId: Number(domain.id), domain: String(domain.domain), provider, reason }, trx);
      return true;
    });
  }

  return {
    /** Judges every sending domain's last 24 hours; `onPaused` runs in the transaction of each new pause. */
    async check(now: Date, onPaused?: (pause: ProviderPause, trx: Knex.Transaction) => Promise<void>): Promise<number> {
      const dayAgo = new Date(now.getTime() - WINDOW_MS).toISOString();
      let paused = 0;
      const pauses = await db('provider_pauses').select('sending_domain_id', 'provider', 'resumed_at', 'resumed_after_id');
      for (const domain of await db('sending_domains').select('id', 'user_id', 'domain')) {
        const ofDomain = pauses.filter((p) => Number(p.sending_domain_id) === Number(domain.id));
        // What a resume let go is judged afresh: only messages written after it count for that provider.
        const afterFor = (provider: string) => Number(ofDomain.find((p) => p.provider === provider && p.resumed_at)?.resumed_after_id ?? 0);
        for (const afterId of new Set([0, ...PROVIDERS.map(afterFor)])) {
          for (const f of await figures.ofDomainSince(Number(domain.user_id), String(domain.domain), dayAgo, afterId)) {
            if (afterFor(f.provider) !== afterId || f.provider === 'other' || f.delivered < settings.guardMinDelivered) continue;
            if (ofDomain.some((p) => p.provider === f.provider && !p.resumed_at)) continue;
            const reason = reasonOf(String(domain.domain), f.provider, f);
            if (reason && (await pause(domain, f.provider, reason, now, onPaused))) paused += 1;
          }
        }
      }
      return paused;
    },

    /** The pauses of these accounts, keyed `userId|from domain|provider` (the worker asks once per batch). */
    async pausedKeys(userIds: number[]): Promise<Set<string>> {
      if (!userIds.length) return new Set();
      const rows = await db('provider_pauses as p').join('sending_domains as d', 'd.id', 'p.sending_domain_id').whereIn('p.user_id', userIds).whereNull('p.resumed_at').select('p.user_id', 'd.domain', 'p.provider');
      return new Set(rows.map((r) => pauseKey(Number(r.user_id), String(r.domain), String(r.provider))));
    },

    /** A sending domain's paused providers, for its page. */
    async ofDomain(ctx: Ctx, sendingDomainId: number): Promise<Array<{ provider: Provider; label: string; reason: string; paused_at: string }>> {
      const rows = await db('provider_pauses').where({ user_id: ctx.userId, sending_domain_id: sendingDomainId }).whereNull('resumed_at').orderBy('provider').select('provider', 'paused_reason', 'paused_at');
      return rows.map((r) => ({ provider: String(r.provider) as Provider, label: providerLabel(String(r.provider)), reason: String(r.paused_reason), paused_at: new Date(r.paused_at).toISOString() }));
    },

    /** An admin resumes a sending domain's mail to a provider: its queued messages go on. */
    async resume(ctx: Ctx, sendingDomainId: number, provider: string): Promise<void> {
      await db.transaction(async (trx) => {
        const domain = await trx('sending_domains').where({ user_id: ctx.userId, id: sendingDomainId }).first('domain');
        if (!domain || !isProvider(provider)) throw new NotFoundError();
        const last = await trx('send_messages').max({ id: 'id' }).first();
        const removed = await trx('provider_pauses')
          .where({ user_id: ctx.userId, sending_domain_id: sendingDomainId, provider })
          .whereNull('resumed_at')
          .update({ resumed_at: nowValue(), resumed_after_id: Number(last?.id ?? 0) });
        if (!removed) throw new NotFoundError();
        await recordAudit(trx, ctx, { action: 'sending_domain.provider_resumed', recordType: 'sending_domain', recordId: sendingDomainId, summary: `${String(domain.domain)}: mail to ${providerLabel(provider)} resumed` });
      });
    },
  };
}

export type ProviderGuard = ReturnType<typeof createProviderGuard>;

/** The key of a pause as the worker looks it up: the account, its From address's domain, the provider. */
export function pauseKey(userId: number, fromDomain: string, provider: string): string {
  return `${userId}|${fromDomain.toLowerCase()}|${provider}`;
}
