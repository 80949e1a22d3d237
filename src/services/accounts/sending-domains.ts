import { insertId, nowValue, parseJson } from '../../db/dialect';
import { listPage, Paging } from '../../db/paging';
import { DOMAIN_RECHECK_MS, DomainStatus, MAX_SENDING_DOMAINS } from '../../lib/constants';
import { sealSecret } from '../../lib/crypto';
import { ConflictError, NotFoundError, ValidationError } from '../../lib/errors';
import { timestamp } from '../../lib/time';
import { messages } from '../../lib/validation';
import { generateDkimKeyPair, newSelector } from '../../mail/dkim';
import { checkRecords, createDnsResolve, DnsResolve, DnsUnavailableError, DomainRecord, expectedRecords, isAuthenticated, RecordOptions } from '../../mail/domain-records';
import type { Ctx, ServiceDeps } from '../context';
import type { EventsService } from '../delivery/notices';
import { DKIM_KEY_PURPOSE } from '../delivery/relays';
import { audited, recordAudit } from '../shared/audit-writer';


export interface SendingDomainRecord {
  id: number;
  user_id: number;
  domain: string;
  dkim_selector: string;
  status: DomainStatus;
  records: DomainRecord[];
  last_checked_at: string | null;
  verified_at: string | null;
  created_at: string | null;
  updated_at: string | null;
  /** Daily caps per mailbox provider from `warmup_started_at`, one a day (docs/deliverability.md); null: no warm-up. */
  warmup: number[] | null;
  warmup_started_at: string | null;
}

const COLUMNS = ['id', 'user_id', 'domain', 'dkim_selector', 'dkim_public_key', 'status', 'records', 'last_checked_at', 'verified_at', 'created_at', 'updated_at', 'warmup', 'warmup_started_at'];

/** Days a warm-up schedule may list, and the largest daily cap. */
export const WARMUP_LIMITS = { days: 60, cap: 10_000_000 } as const;

/** `warmup`: null, or a list of 1 to 60 whole numbers from 1 to 10,000,000; else a 422. */
function warmupInput(value: unknown): number[] | null {
  if (value === null || value === 'null') return null;
  const list = Array.isArray(value) ? value.map((v) => (typeof v === 'string' && /^\d+$/.test(v.trim()) ? Number(v) : v)) : undefined;
  if (!list || !list.length || list.length > WARMUP_LIMITS.days || !list.every((v) => Number.isInteger(v) && v >= 1 && v <= WARMUP_LIMITS.cap)) {
    throw ValidationError.of('warmup', `The warmup must be null or a list of 1 to ${WARMUP_LIMITS.days} daily caps, each a whole number from 1 to ${WARMUP_LIMITS.cap}.`);
  }
  return list as number[];
}

export function sendingDomainRecord(row: Record<string, unknown>): SendingDomainRecord {
  return {
    id: Number(row.id),
    user_id: Number(row.user_id),
    domain: String(row.domain),
    dkim_selector: String(row.dkim_selector),
    status: String(row.status) as DomainStatus,
    records: parseJson<DomainRecord[]>(row.records, []),
    last_checked_at: timestamp(row.last_checked_at),
    verified_at: timestamp(row.verified_at),
    created_at: timestamp(row.created_at),
    updated_at: timestamp(row.updated_at),
    warmup: parseJson<number[] | null>(row.warmup, null),
    warmup_started_at: timestamp(row.warmup_started_at),
  };
}

const HOST_NAME = /^(?=.{1,253}$)(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

/** The domain as stored: trimmed, lower case, IDNA ASCII, without a trailing dot; undefined when it is no domain name. */
export function normalDomain(input: string): string | undefined {
  const trimmed = input.trim().toLowerCase().replace(/\.$/, '');
  // Anything a URL would read as more than a host name (user, port, path) is no domain.
  if (!trimmed || /[\s/@:?#[\]\\%]/.test(trimmed)) return undefined;
  let ascii: string;
  try {
    ascii = new URL(`http://${trimmed}`).hostname;
  } catch {
    return undefined;
  }
  return HOST_NAME.test(ascii) ? ascii : undefined;
}

/** When the next status follows from a check: `verified` needs DKIM and DMARC; a verified domain that loses them is `failing`. */
function nextStatus(current: DomainStatus, records: DomainRecord[]): DomainStatus {
  if (isAuthenticated(records)) return 'verified';
  return current === 'pending' ? 'pending' : 'failing';
}

export interface SendingDomainsDeps extends Pick<ServiceDeps, 'db' | 'config' | 'secret'> {
  events: Pick<EventsService, 'notify'>;
  /** DNS lookups (tests may pass their own); default: DNS_SERVERS or the system resolver. */
  resolve?: DnsResolve;
}

/**
 * An account's sending domains: each has its own DKIM key pair (the private key sealed with the
 * app secret), the DNS records it needs, and the outcome of the last check of them. Checks run
 * when asked (verify) and daily from the worker (recheckDue), which tells the account's
 * notification recipients when a verified domain starts failing.
 */
export function createSendingDomainsService({ db, config, secret, events, resolve: givenResolve }: SendingDomainsDeps) {
  const resolve = givenResolve ?? createDnsResolve(config.domains.dnsServers);
  const options: RecordOptions = { spfInclude: config.domains.spfInclude, bounceDomain: config.bounceDomain };
  const owned = (ctx: Ctx) => db('sending_domains').where({ user_id: ctx.userId });

  async function find(ctx: Ctx, id: number): Promise<Record<string, unknown>> {
    const row = await owned(ctx).where({ id }).first(COLUMNS);
    if (!row) throw new NotFoundError();
    return row;
  }

  /**
   * Checks one domain's records now and stores what was found, moving its status. The update is
   * guarded by the status it was read with, so of two processes checking at once only one moves
   * it (and only that one notifies). Answers the stored row.
   */
  /** `ctx` is who asked for the check; the worker's daily look is the system. */
  async function check(row: Record<string, unknown>, now: Date, ctx: Ctx = { userId: Number(row.user_id) }): Promise<Record<string, unknown>> {
    const keys = { domain: String(row.domain), selector: String(row.dkim_selector), publicKey: String(row.dkim_public_key) };
    const records = await checkRecords(keys, options, resolve);
    const from = String(row.status) as DomainStatus;
    const to = nextStatus(from, records);
    const at = now.toISOString();
    const patch: Record<string, unknown> = { records: JSON.stringify(records), status: to, last_checked_at: at, updated_at: at };
    if (to === 'verified' && from !== 'verified') patch.verified_at = at;
    const moved = await db.transaction(async (trx) => {
      const changed = await trx('sending_domains').where({ id: row.id, status: from }).update(patch);
      if (changed && from === 'verified' && to === 'failing') await events.notify(Number(row.user_id), failingMessage(String(row.domain), records), trx);
      if (changed && patch.verified_at) await recordAudit(trx, ctx, { action: 'sending_domain.verified', recordType: 'sending_domain', recordId: Number(row.id), summary: String(row.domain) }, at);
      return changed;
    });
    return moved ? { ...row, ...patch } : await db('sending_domains').where({ id: row.id }).first(COLUMNS);
  }

  return {
    async list(ctx: Ctx, paging?: Paging) {
      return listPage(owned(ctx).orderBy('id', 'desc').select(COLUMNS), paging, sendingDomainRecord);
    },

    async get(ctx: Ctx, id: number): Promise<SendingDomainRecord> {
      return sendingDomainRecord(await find(ctx, id));
    },

    /** A new domain with a new RSA 2048 key pair, pending until its records are found. */
    async save(ctx: Ctx, input: { domain: string }): Promise<SendingDomainRecord> {
      const domain = normalDomain(input.domain);
      if (!domain) throw ValidationError.of('domain', 'The domain must be a domain name such as example.com.');
      if (await owned(ctx).where({ domain }).first('id')) throw ValidationError.of('domain', messages.taken('domain'));
      const count = await owned(ctx).count({ n: '*' }).first();
      if (Number(count?.n ?? 0) >= MAX_SENDING_DOMAINS) throw new ConflictError(`An account has at most ${MAX_SENDING_DOMAINS} sending domains; delete one first.`);
      const pair = await generateDkimKeyPair();
      const now = new Date();
      const selector = newSelector(now);
      const at = nowValue();
      const row = {
        user_id: ctx.userId,
        domain,
        dkim_selector: selector,
        dkim_public_key: pair.publicKey,
        dkim_private_key_sealed: sealSecret(secret, DKIM_KEY_PURPOSE, pair.privateKey),
        status: 'pending',
        records: JSON.stringify(expectedRecords({ domain, selector, publicKey: pair.publicKey }, options)),
        created_at: at,
        updated_at: at,
      };
      let id: number;
      try {
        id = await audited(db, ctx, (trx) => insertId(trx, 'sending_domains', row), (created) => ({
          action: 'sending_domain.created', recordType: 'sending_domain', recordId: created, summary: domain,
        }));
      } catch (err) {
        // Two saves of the same domain at once: the unique index refuses the second.
        if (await owned(ctx).where({ domain }).first('id')) throw ValidationError.of('domain', messages.taken('domain'));
        throw err;
      }
      return sendingDomainRecord(await find(ctx, id));
    },

    /** Checks the domain's DNS now; a DNS server that does not answer is a 409 and changes nothing. */
    /** `POST /domains/update?id=`: its warm-up schedule, or null for none (a new schedule starts today; a changed one keeps its start). */
    async update(ctx: Ctx, id: number, input: { warmup: unknown }): Promise<SendingDomainRecord> {
      const warmup = warmupInput(input.warmup);
      const row = await find(ctx, id);
      const now = nowValue();
      const startedAt = warmup ? (row.warmup && row.warmup_started_at ? row.warmup_started_at : now) : null;
      await db.transaction(async (trx) => {
        await trx('sending_domains').where({ id: row.id }).update({ warmup: warmup ? JSON.stringify(warmup) : null, warmup_started_at: startedAt, updated_at: now });
        const summary = warmup ? `${String(row.domain)}: warm-up ${warmup.join(', ')} a day per provider` : `${String(row.domain)}: no warm-up`;
        await recordAudit(trx, ctx, { action: 'sending_domain.warmup_changed', recordType: 'sending_domain', recordId: Number(row.id), summary }, now);
      });
      return sendingDomainRecord(await db('sending_domains').where({ id: row.id }).first(COLUMNS));
    },

    async verify(ctx: Ctx, id: number): Promise<SendingDomainRecord> {
      const row = await db('sending_domains').where({ user_id: ctx.userId, id }).first([...COLUMNS]);
      if (!row) throw new NotFoundError();
      try {
        return sendingDomainRecord(await check(row, new Date(), ctx));
      } catch (err) {
        if (err instanceof DnsUnavailableError) throw new ConflictError(`The DNS lookup did not answer; nothing was changed. Try again in a minute. (${err.message})`);
        throw err;
      }
    },

    async remove(ctx: Ctx, ids: number[]): Promise<void> {
      await db.transaction(async (trx) => {
        const rows = await trx('sending_domains').where({ user_id: ctx.userId }).whereIn('id', ids).select('id', 'domain');
        if (!rows.length) throw new NotFoundError();
        await trx('sending_domains').whereIn('id', rows.map((r) => r.id)).delete();
        await recordAudit(trx, ctx, rows.map((r) => ({ action: 'sending_domain.deleted' as const, recordType: 'sending_domain', recordId: Number(r.id), summary: String(r.domain) })));
      });
    },

    /**
     * The worker's daily look: every verified or failing domain last checked a day ago or more
     * is checked again. Answers how many were checked; a domain whose DNS did not answer keeps
     * its status and is tried at the next run.
     */
    async recheckDue(now: Date, onError: (err: unknown, domain: string) => void = () => undefined): Promise<number> {
      const before = new Date(now.getTime() - DOMAIN_RECHECK_MS).toISOString();
      const due = await db('sending_domains')
        .whereIn('status', ['verified', 'failing'])
        .where((q) => q.whereNull('last_checked_at').orWhere('last_checked_at', '<=', before))
        .orderBy('last_checked_at')
        .limit(500)
        .select(COLUMNS);
      let checked = 0;
      for (const row of due) {
        try {
          await check(row, now);
          checked += 1;
        } catch (err) {
          onError(err, String(row.domain));
        }
      }
      return checked;
    },
  };
}

/** The notification when a verified domain's records stop checking out. */
function failingMessage(domain: string, records: DomainRecord[]) {
  const wrong = records.filter((r) => r.status !== 'ok' && (r.purpose === 'dkim' || r.purpose === 'dmarc'));
  const lines = wrong.map((r) => `- ${r.type} record at ${r.host} is ${r.status === 'missing' ? 'missing' : 'not what it should be'}; it should be:\n  ${r.value}`);
  return {
    subject: `Sending domain failing: ${domain}`,
    text: `The DNS records of your sending domain ${domain} no longer check out, so its mail is no longer signed with its own key and may be refused by Gmail and Outlook.\n\n${lines.join('\n')}\n\nPublish the records again, then press "Check now" on the Domains page.`,
  };
}

export type SendingDomainsService = ReturnType<typeof createSendingDomainsService>;
