import { toCount } from '../../db/dialect';
import { utcHour } from '../../db/time-buckets';
import { MESSAGE_STATE, SEND_PAUSE_REASONS, SendPauseReason, SINGLE_SEND_STATUS } from '../../lib/constants';
import { shownVariants } from '../delivery/ledger';
import type { Turns } from '../../lib/turns';
import { previewSingleSend, samplePerson } from '../delivery/messages';
import type { RenderedMessage } from '../../mail/render';
import type { ContactsService } from '../audience/contacts';
import type { FieldsService } from '../audience/fields';
import type { Ctx, ServiceDeps } from '../context';
import type { SingleSendsService } from './single-sends';
import { firstContactOf } from './test-sends';
import { signingDomainOf } from '../../mail/dkim';
import { storedAnswer } from '../../mail/transport';
import { sendingDomainRecord, type SendingDomainRecord } from '../accounts/sending-domains';

/** Unique opens in one period: `start` is its first hour (`2026-11-22T09`, UTC). */
export interface OpenBucket {
  start: string;
  opens: number;
}

/** Messages of a send that failed for one reason. */
export interface FailureReason {
  reason: string;
  messages: number;
  /**
   * What was done about them: `policy` refused for the sender's authentication or reputation,
   * `template_error` not rendered, `unconfirmed` maybe taken (never sent again), `retried` tried
   * again until given up, `refused` refused at once (a provider's final answer).
   */
  kind: 'policy' | 'template_error' | 'unconfirmed' | 'retried' | 'refused';
}

/** Why the service (or a person) paused a send, and what its page needs to say what to fix. */
export interface PauseExplained {
  /** `by_hand`: a person (or an API key) paused it; the others are the service's reasons. */
  reason: SendPauseReason | 'by_hand';
  /** Messages failed for that reason, and those attempted (delivered, bounced or failed). */
  failed: number;
  attempted: number;
  /** The latest such failure as the receiving server (or the renderer) worded it. */
  example: string | null;
  /** The sending domain of the From address (the longest that covers it), or null when it has none. */
  domain: SendingDomainRecord | null;
  /** How many notification recipients were told (by email) of a pause by the service. */
  notified: number;
}

/** Hours are grouped into days once the opens span more than this many. */
const HOURLY_SPAN = 48;

/** A ledger row's failure as people read it: the answer without library codes, a template's error without its marker. */
const failureText = (stored: string) => storedAnswer(stored.replace(/^template_error: /, ''));

interface Deps extends Pick<ServiceDeps, 'db' | 'config' | 'secret'> {
  singleSends: Pick<SingleSendsService, 'get'>;
  contacts: Pick<ContactsService, 'get'>;
  fields: Pick<FieldsService, 'listCustom'>;
  /** Whose turn it is to render (see Turns). */
  renderTurns: Turns;
}

/** What the dashboard shows about a send beyond its record: its message for one contact, its opens over time. */
export function createSendInsightsService({ db, config, secret, singleSends, contacts, fields, renderTurns }: Deps) {
  return {
    /**
     * The send's message as the worker would build it for a contact of the account: the one
     * chosen, else the first of its audience, else a made-up sample contact (`sample`), so
     * placeholders never show as empty text.
     */
    async preview(ctx: Ctx, utr: string, contactId?: number): Promise<RenderedMessage & { to: string; sample: boolean }> {
      const [send, chosen] = await Promise.all([singleSends.get(ctx, utr), contactId ? contacts.get(ctx, contactId) : undefined]);
      const contact = chosen ? { id: chosen.id, email: chosen.email } : await firstContactOf(db, ctx, send.recipient_id);
      const sample = contact ? undefined : samplePerson((await fields.listCustom(ctx)).map((f) => f.field_name));
      // Once it went out, an A/B test's send is shown as its winner went (see shownVariants).
      const abVariant = send.status >= SINGLE_SEND_STATUS.running ? (await shownVariants(db, [send.id])).get(send.id) : undefined;
      const target = { userId: ctx.userId, singleSendId: send.id, contact, sample, abVariant };
      const message = await previewSingleSend(db, secret, config.baseUrl, target, renderTurns);
      return { ...(message ?? { subject: send.subject, html: '', text: '' }), to: contact?.email ?? '', sample: !contact };
    },

    /**
     * How many messages of a send on each recipient's clock (`schedule_type` 2) are still
     * waiting for their recipient's local time: never tried yet and due later than `now`.
     */
    async waitingForLocalTime(ctx: Ctx, singleSendId: number, now: Date = new Date()): Promise<number> {
      const row = await db('send_messages')
        .where({ single_send_id: singleSendId, user_id: ctx.userId, attempts: 0 })
        .whereIn('state', [MESSAGE_STATE.queued, MESSAGE_STATE.paused])
        .where('available_at', '>', now.toISOString())
        .count({ n: '*' })
        .first();
      return toCount(row?.n);
    },

    /** Why the send's failed messages failed, and what was done about them: the most frequent reasons first (at most `limit`). */
    async failures(ctx: Ctx, singleSendId: number, limit = 10): Promise<FailureReason[]> {
      const rows = (await db('send_messages')
        .where({ single_send_id: singleSendId, user_id: ctx.userId, state: MESSAGE_STATE.failed })
        .select({ reason: 'last_error', why: 'failure_reason' })
        .max({ attempts: 'attempts' })
        .count({ n: '*' })
        .groupBy('last_error', 'failure_reason')
        .orderBy([{ column: 'n', order: 'desc' }, { column: 'reason' }])
        .limit(limit)) as unknown as { reason: string | null; why: string | null; attempts: unknown; n: unknown }[];
      const kindOf = (r: (typeof rows)[number]): FailureReason['kind'] =>
        r.why === 'policy' || r.why === 'template_error' || r.why === 'unconfirmed' ? r.why : toCount(r.attempts) > 1 ? 'retried' : 'refused';
      return rows.map((r) => ({ reason: failureText(r.reason ?? 'unknown'), messages: toCount(r.n), kind: kindOf(r) }));
    },

    /** Why a paused send of the account is paused, with what its page shows to fix it (undefined when it is not paused). */
    async pauseOf(ctx: Ctx, singleSendId: number): Promise<PauseExplained | undefined> {
      const send = await db('single_sends').where({ id: singleSendId, user_id: ctx.userId, status: SINGLE_SEND_STATUS.paused }).first('pause_reason', 'from_sender', 'delivered', 'bounces', 'failed');
      if (!send) return undefined;
      const reason = (SEND_PAUSE_REASONS as readonly string[]).includes(String(send.pause_reason)) ? (send.pause_reason as PauseExplained['reason']) : 'by_hand';
      const failing = reason === 'policy' || reason === 'template_error';
      const [failed, example, domains, notified] = await Promise.all([
        failing ? db('send_messages').where({ single_send_id: singleSendId, state: MESSAGE_STATE.failed, failure_reason: reason }).count({ n: '*' }).first() : undefined,
        failing ? db('send_messages').where({ single_send_id: singleSendId, failure_reason: reason }).orderBy('id', 'desc').first('last_error') : undefined,
        reason === 'by_hand' ? [] : db('sending_domains').where({ user_id: ctx.userId }).select('*'),
        reason === 'by_hand' ? undefined : db('notification_recipients').where({ user_id: ctx.userId }).count({ n: '*' }).first(),
      ]);
      const name = signingDomainOf(String(send.from_sender), domains.map((d: { domain: string }) => String(d.domain)));
      const domain = domains.find((d: { domain: string }) => d.domain === name);
      return {
        reason,
        failed: toCount(failed?.n),
        attempted: toCount(send.delivered) + toCount(send.bounces) + toCount(send.failed),
        example: example?.last_error ? failureText(String(example.last_error)) : null,
        domain: domain ? sendingDomainRecord(domain) : null,
        notified: toCount(notified?.n),
      };
    },

    /**
     * Unique opens of one of the account's sends per hour since the first open (per day when
     * they span more than two days), empty periods included; counted by the database.
     */
    async opensOverTime(ctx: Ctx, singleSendId: number): Promise<{ unit: 'hour' | 'day'; buckets: OpenBucket[] }> {
      const hour = utcHour(db, 'opened_at');
      const rows = (await db('send_messages')
        .where({ single_send_id: singleSendId, user_id: ctx.userId })
        .whereNotNull('opened_at')
        .select({ hour })
        .count({ n: '*' })
        .groupByRaw(hour.toQuery())
        .orderBy('hour')) as unknown as { hour: string; n: unknown }[];
      return fillBuckets(rows.map((r) => ({ start: String(r.hour), opens: toCount(r.n) })));
    },
  };
}

const HOUR_MS = 3600_000;
const hourOf = (start: string) => Date.parse(`${start}:00:00Z`);
const hourText = (ms: number) => new Date(ms).toISOString().slice(0, 13);

/** Every hour (or day) from the first to the last, with zero where nobody opened. */
export function fillBuckets(hours: OpenBucket[]): { unit: 'hour' | 'day'; buckets: OpenBucket[] } {
  if (hours.length === 0) return { unit: 'hour', buckets: [] };
  const first = hourOf(hours[0].start);
  const last = hourOf(hours[hours.length - 1].start);
  const unit = (last - first) / HOUR_MS + 1 > HOURLY_SPAN ? 'day' : 'hour';
  const step = unit === 'day' ? 24 * HOUR_MS : HOUR_MS;
  const keyOf = (ms: number) => (unit === 'day' ? `${hourText(ms).slice(0, 10)}T00` : hourText(ms));
  const counts = new Map<string, number>();
  for (const h of hours) counts.set(keyOf(hourOf(h.start)), (counts.get(keyOf(hourOf(h.start))) ?? 0) + h.opens);
  const buckets: OpenBucket[] = [];
  for (let at = hourOf(keyOf(first)); at <= last; at += step) buckets.push({ start: keyOf(at), opens: counts.get(keyOf(at)) ?? 0 });
  return { unit, buckets };
}

export type SendInsightsService = ReturnType<typeof createSendInsightsService>;
