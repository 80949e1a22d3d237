import { toCount } from '../../db/dialect';
import { utcHour } from '../../db/time-buckets';
import { MESSAGE_STATE, SINGLE_SEND_STATUS } from '../../lib/constants';
import { shownVariants } from '../delivery/ledger';
import type { Turns } from '../../lib/turns';
import { previewSingleSend, samplePerson } from '../delivery/messages';
import type { RenderedMessage } from '../../mail/render';
import type { ContactsService } from '../audience/contacts';
import type { FieldsService } from '../audience/fields';
import type { Ctx, ServiceDeps } from '../context';
import type { SingleSendsService } from './single-sends';
import { firstContactOf } from './test-sends';

/** Unique opens in one period: `start` is its first hour (`2026-11-22T09`, UTC). */
export interface OpenBucket {
  start: string;
  opens: number;
}

/** Messages of a send that failed for one reason. */
export interface FailureReason {
  reason: string;
  messages: number;
}

/** Hours are grouped into days once the opens span more than this many. */
const HOURLY_SPAN = 48;

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

    /** Why the send's failed messages failed: the most frequent reasons first (at most `limit`). */
    async failures(ctx: Ctx, singleSendId: number, limit = 10): Promise<FailureReason[]> {
      const rows = (await db('send_messages')
        .where({ single_send_id: singleSendId, user_id: ctx.userId, state: MESSAGE_STATE.failed })
        .select({ reason: 'last_error' })
        .count({ n: '*' })
        .groupBy('last_error')
        .orderBy([{ column: 'n', order: 'desc' }, { column: 'reason' }])
        .limit(limit)) as unknown as { reason: string | null; n: unknown }[];
      return rows.map((r) => ({ reason: r.reason ?? 'unknown', messages: toCount(r.n) }));
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
