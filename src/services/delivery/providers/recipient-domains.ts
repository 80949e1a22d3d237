import type { Knex } from 'knex';
import type { Logger } from 'pino';
import { emailDomain } from '../../../db/expressions';
import type { MxLookup } from '../../../mail/domain-records';
import { providerOfMx, type Provider } from './provider-table';

/** How long a domain's classification holds before it is looked up again (in the background). */
export const DOMAIN_CHECK_MS = 24 * 3_600_000;
/** Lookups in flight at once. */
const PARALLEL = 8;

export interface DomainClassifierDeps {
  db: Knex;
  lookupMx: MxLookup;
  logger?: Pick<Logger, 'warn'>;
  now?: () => Date;
}

/**
 * Which provider each recipient domain is at, cached per domain in `recipient_domains` for a
 * day: one MX lookup per domain, never one per message. The lookups run in the background
 * (a send's domains when it starts, a batch's unknown domains while it is sent, stale ones
 * refreshed); a lookup that fails leaves the domain as it was, to be tried again.
 */
export function createDomainClassifier({ db, lookupMx, logger, now = () => new Date() }: DomainClassifierDeps) {
  // One lookup per domain at a time in this process; what it finds is the table's.
  const inFlight = new Map<string, Promise<void>>();

  async function lookUp(domain: string): Promise<void> {
    try {
      const hosts = await lookupMx(domain);
      const row = { domain, provider: providerOfMx(hosts), mx: hosts.join(',').slice(0, 2000), checked_at: now().toISOString() };
      await db('recipient_domains').insert(row).onConflict('domain').merge(['provider', 'mx', 'checked_at']);
    } catch (err) {
      logger?.warn({ err, domain }, 'looking up a recipient domain\'s mail servers failed; tried again later');
    }
  }

  function once(domain: string): Promise<void> {
    let running = inFlight.get(domain);
    if (!running) {
      running = lookUp(domain).finally(() => inFlight.delete(domain));
      inFlight.set(domain, running);
    }
    return running;
  }

  async function known(domains: string[]): Promise<Map<string, { provider: Provider; checkedAt: number }>> {
    const found = new Map<string, { provider: Provider; checkedAt: number }>();
    const unique = [...new Set(domains)];
    for (let i = 0; i < unique.length; i += 500) {
      const rows = await db('recipient_domains').whereIn('domain', unique.slice(i, i + 500)).select('domain', 'provider', 'checked_at');
      for (const row of rows) found.set(String(row.domain), { provider: String(row.provider) as Provider, checkedAt: new Date(row.checked_at).getTime() });
    }
    return found;
  }

  /** The domains of `domains` not known yet or checked more than a day ago. */
  function dueOf(domains: string[], cached: Map<string, { checkedAt: number }>): string[] {
    const stale = now().getTime() - DOMAIN_CHECK_MS;
    return [...new Set(domains)].filter((d) => d && (cached.get(d)?.checkedAt ?? -Infinity) < stale);
  }

  async function lookUpAll(due: string[]): Promise<void> {
    for (let i = 0; i < due.length; i += PARALLEL) await Promise.all(due.slice(i, i + PARALLEL).map(once));
  }

  /** Looks up the domains not known yet or checked more than a day ago; resolves when they are written. */
  async function classify(domains: string[]): Promise<void> {
    await lookUpAll(dueOf(domains, await known(domains)));
  }

  const providers = (domains: string[], cached: Map<string, { provider: Provider }>) => new Map(domains.map((d) => [d, cached.get(d)?.provider ?? 'other' as Provider]));

  return {
    /** The providers of these domains as known now (`other` for a domain not resolved yet). */
    async providersOf(domains: string[]): Promise<Map<string, Provider>> {
      return providers(domains, await known(domains));
    },

    /**
     * The providers of a claimed batch's domains, those not known yet (or stale) looked up first,
     * for as long as `wait` lets them (past it they go on in the background and read as known so
     * far). One read of the table when every domain is known, as in a steady send.
     */
    async providersLookedUp(domains: string[], wait: (lookups: Promise<void>) => Promise<void>): Promise<Map<string, Provider>> {
      const cached = await known(domains);
      const due = dueOf(domains, cached);
      if (due.length) {
        await wait(lookUpAll(due));
        for (const [domain, found] of await known(due)) cached.set(domain, found);
      }
      return providers(domains, cached);
    },

    classify,

    /** Every domain a single send's ledger holds, classified (when it starts: one query, one lookup per new domain). */
    async classifySend(sendId: number): Promise<void> {
      const rows = await db('send_messages').where({ single_send_id: sendId }).distinct(db.raw(`${emailDomain(db, 'email_key').toQuery()} as domain`));
      await classify(rows.map((r) => String(r.domain)));
    },

    /** The domains checked longest ago and more than a day ago, looked up again (a few per call). */
    async refreshStale(limit = 100): Promise<number> {
      const before = new Date(now().getTime() - DOMAIN_CHECK_MS).toISOString();
      const rows = await db('recipient_domains').where('checked_at', '<', before).orderBy('checked_at').limit(limit).select('domain');
      await classify(rows.map((r) => String(r.domain)));
      return rows.length;
    },
  };
}

export type DomainClassifier = ReturnType<typeof createDomainClassifier>;

/** The domain of an email key (its IDNA form, lower-case). */
export function domainOf(emailKey: string): string {
  return emailKey.slice(emailKey.lastIndexOf('@') + 1);
}
