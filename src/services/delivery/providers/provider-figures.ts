import type { Knex } from 'knex';
import { emailDomain } from '../../../db/expressions';
import { utcDay } from '../../../db/time-buckets';
import { FEEDBACK_EVENT, MESSAGE_STATE as M } from '../../../lib/constants';
import { NotFoundError } from '../../../lib/errors';
import { isUtr } from '../../../lib/utr';
import type { Ctx } from '../../context';
import { PROVIDERS, type Provider } from './provider-table';
import type { DomainClassifier } from './recipient-domains';
import { slowedProviders } from './provider-throttle';

/** The complaint and bounce rates at which the guard pauses (COMPLAINT_PAUSE_RATE, BOUNCE_PAUSE_RATE). */
export interface GuardLines {
  complaintPauseRate: number;
  bouncePauseRate: number;
}

/** The most frequent temporary refusals of a provider. */
export interface DeferralCount {
  code: string;
  text: string;
  count: number;
}

/** How one mailbox provider treated a set of messages. */
export interface ProviderFiguresRecord {
  provider: Provider;
  /** Handed to the provider's servers (delivered, bounced, or refused). */
  sent: number;
  delivered: number;
  /** Messages refused for now at least once (each counted once). */
  deferred: number;
  bounced: number;
  complained: number;
  /** Opened by a person (automated opens are not counted). */
  opened: number;
  clicked: number;
  top_deferrals: DeferralCount[];
}

/** The same, for one day of a sending domain. */
export interface ProviderDayRecord extends ProviderFiguresRecord {
  /** `YYYY-MM-DD` (UTC). */
  day: string;
}

const FIGURES = ['sent', 'delivered', 'deferred', 'bounced', 'complained', 'opened', 'clicked'] as const;
const TOP_DEFERRALS = 5;

/** The figures, summed per recipient domain in SQL (few rows: one per domain), then per provider as known now. */
function figuresQuery(db: Knex, messages: Knex.QueryBuilder, dayColumn?: string): Knex.QueryBuilder {
  const sum = (when: string, name: string) => db.raw(`sum(case when ${when} then 1 else 0 end) as ${name}`);
  const q = messages
    .select(db.raw(`${emailDomain(db, 'm.email_key').toQuery()} as domain`))
    .select(
      sum(`m.state in (${M.sent}, ${M.bounced}) or (m.state = ${M.failed} and coalesce(m.failure_reason, '') <> 'template_error')`, 'sent'),
      sum(`m.state = ${M.sent}`, 'delivered'),
      sum('exists (select 1 from message_deferrals d where d.message_id = m.id)', 'deferred'),
      sum(`m.state = ${M.bounced}`, 'bounced'),
      sum(`exists (select 1 from message_feedback f where f.message_id = m.id and f.event = '${FEEDBACK_EVENT.complaint}')`, 'complained'),
      sum('m.human_opened_at is not null', 'opened'),
      sum('m.clicked_at is not null', 'clicked'),
    )
    .groupByRaw(emailDomain(db, 'm.email_key').toQuery());
  if (dayColumn) q.select(db.raw(`${utcDay(db, dayColumn).toQuery()} as day`)).groupByRaw(utcDay(db, dayColumn).toQuery());
  return q;
}

function emptyFigures(provider: Provider): ProviderFiguresRecord {
  return { provider, sent: 0, delivered: 0, deferred: 0, bounced: 0, complained: 0, opened: 0, clicked: 0, top_deferrals: [] };
}

/**
 * Per-provider figures of a single send, an automation, or a sending domain per day. Ledger
 * rows do not carry their provider: each message's domain is joined to its provider when the
 * figures are read, so a domain resolved after the send moves to its provider.
 */
export function createProviderFiguresService({ db, classifier, lines }: { db: Knex; classifier: Pick<DomainClassifier, 'providersOf'>; lines?: GuardLines }) {
  /** Figures by domain (and day) summed into providers; deferral codes likewise, unless `codes` is false. */
  async function gather(messages: () => Knex.QueryBuilder, dayColumn?: string, codes = true): Promise<Map<string, Map<Provider, ProviderFiguresRecord>>> {
    const rows = await figuresQuery(db, messages(), dayColumn);
    const deferrals = !codes ? [] : await messages()
      .join('message_deferrals as d', 'd.message_id', 'm.id')
      .select('d.domain', 'd.code', 'd.text', ...(dayColumn ? [db.raw(`${utcDay(db, dayColumn).toQuery()} as day`)] : []))
      .count({ n: '*' })
      .groupBy('d.domain', 'd.code', 'd.text', ...(dayColumn ? [db.raw(utcDay(db, dayColumn).toQuery())] : []));
    const domains = [...new Set([...rows, ...deferrals].map((r) => String(r.domain)))];
    const providerOf = await classifier.providersOf(domains);
    const byDay = new Map<string, Map<Provider, ProviderFiguresRecord>>();
    const cell = (day: string, provider: Provider) => {
      if (!byDay.has(day)) byDay.set(day, new Map());
      const providers = byDay.get(day)!;
      if (!providers.has(provider)) providers.set(provider, emptyFigures(provider));
      return providers.get(provider)!;
    };
    for (const row of rows) {
      const figures = cell(String(row.day ?? ''), providerOf.get(String(row.domain)) ?? 'other');
      for (const name of FIGURES) figures[name] += Number(row[name] ?? 0);
    }
    for (const row of deferrals) {
      const figures = cell(String(row.day ?? ''), providerOf.get(String(row.domain)) ?? 'other');
      const same = figures.top_deferrals.find((d) => d.code === row.code && d.text === row.text);
      if (same) same.count += Number(row.n);
      else figures.top_deferrals.push({ code: String(row.code), text: String(row.text), count: Number(row.n) });
    }
    for (const providers of byDay.values()) {
      for (const figures of providers.values()) figures.top_deferrals = figures.top_deferrals.sort((a, b) => b.count - a.count || a.code.localeCompare(b.code)).slice(0, TOP_DEFERRALS);
    }
    return byDay;
  }

  /** In the declaration's order, `other` last; only providers with messages. */
  const ordered = (providers: Map<Provider, ProviderFiguresRecord> | undefined) =>
    PROVIDERS.map((p) => providers?.get(p)).filter((f): f is ProviderFiguresRecord => !!f && FIGURES.some((name) => f[name] > 0));

  return {
    /** Whether a provider's complaint or bounce rate (over delivered) crossed the line at which the guard pauses. */
    crossed(figures: Pick<ProviderFiguresRecord, 'delivered' | 'complained' | 'bounced'>): { complaints: boolean; bounces: boolean } {
      if (!lines || figures.delivered <= 0) return { complaints: false, bounces: false };
      return { complaints: figures.complained / figures.delivered >= lines.complaintPauseRate, bounces: figures.bounced / figures.delivered >= lines.bouncePauseRate };
    },

    /** The providers the sending is slowed down for now (they deferred for the sender's volume). */
    slowed: () => slowedProviders(db),

    /** `GET /single-send/providers?utr=`. */
    async ofSingleSend(ctx: Ctx, utr: string): Promise<ProviderFiguresRecord[]> {
      const send = isUtr(utr) ? await db('single_sends').where({ user_id: ctx.userId, utr }).whereNull('deleted_at').first('id') : undefined;
      if (!send) throw new NotFoundError();
      const figures = await gather(() => db('send_messages as m').where({ 'm.user_id': ctx.userId, 'm.single_send_id': Number(send.id) }));
      return ordered(figures.get(''));
    },

    /** `GET /automations/providers?utr=`: every email of the automation. */
    async ofAutomation(ctx: Ctx, utr: string): Promise<ProviderFiguresRecord[]> {
      const automation = isUtr(utr) ? await db('automations').where({ user_id: ctx.userId, utr }).whereNull('deleted_at').first('id') : undefined;
      if (!automation) throw new NotFoundError();
      const figures = await gather(() => db('send_messages as m').where({ 'm.user_id': ctx.userId, 'm.automation_id': Number(automation.id) }));
      return ordered(figures.get(''));
    },

    /** The messages sent from a sending domain since `since`, per provider (the guard's window; no deferral codes, which it does not read). */
    async ofDomainSince(userId: number, domain: string, since: string, afterId = 0): Promise<ProviderFiguresRecord[]> {
      return ordered((await gather(() => fromDomain(db, userId, domain, since).where('m.id', '>', afterId), undefined, false)).get(''));
    },

    /**
     * `GET /domains/providers?id=&days=`: the messages sent from the sending domain (their From
     * address's domain) over the last `days` UTC days, per day and provider, oldest day first.
     */
    async ofSendingDomain(ctx: Ctx, id: number, days: number, now = new Date()): Promise<ProviderDayRecord[]> {
      const domain = await db('sending_domains').where({ user_id: ctx.userId, id }).first('domain');
      if (!domain) throw new NotFoundError();
      const since = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() - (days - 1))).toISOString();
      const figures = await gather(() => fromDomain(db, ctx.userId, String(domain.domain), since), 'm.updated_at');
      return [...figures.keys()].sort().flatMap((day) => ordered(figures.get(day)).map((f) => ({ day, ...f })));
    },
  };
}

/**
 * The account's messages written since `since` whose From address is at `domain`: a single
 * send's From (or its sender's), an automation email's sender's.
 */
export function fromDomain(db: Knex, userId: number, domain: string, since: string): Knex.QueryBuilder {
  return db('send_messages as m')
    .leftJoin('single_sends as s', 's.id', 'm.single_send_id')
    .leftJoin('senders as ss', 'ss.id', 's.sender_id')
    .leftJoin('automation_schedules as sc', 'sc.id', 'm.automation_schedule_id')
    .leftJoin('senders as sa', 'sa.id', 'sc.sender_id')
    .where('m.user_id', userId)
    .where('m.updated_at', '>=', since)
    .whereRaw(`lower(coalesce(nullif(s.from_sender, ''), ss.from_email, sa.from_email, '')) like ?`, [`%@${domain.toLowerCase()}`]);
}

export type ProviderFiguresService = ReturnType<typeof createProviderFiguresService>;
