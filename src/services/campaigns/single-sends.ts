import type { Knex } from 'knex';
import { insertId, jsonValue, nowValue, parseJson } from '../../db/dialect';
import { listPage, Paging } from '../../db/paging';
import { LIMITS, SINGLE_SEND_STATUS } from '../../lib/constants';
import { ConflictError, FieldErrors, NotFoundError } from '../../lib/errors';
import { unauthenticatedError } from '../delivery/relays';
import { plainDateTime, timestamp } from '../../lib/time';
import { isUtr, newUtr } from '../../lib/utr';
import { messages, throwIfAny } from '../../lib/validation';
import { localTimeSpan, SCHEDULE_LOCAL_TIME, utcToZoned, zonedToUtc } from '../../lib/zoned-time';
import type { CampaignRefs, RecipientRef } from './campaign-refs';
import type { Ctx, ServiceDeps } from '../context';
import type { SenderRecord, SendersService } from './senders';
import type { TrackingService } from '../delivery/recipients';
import type { AbTestRecord, AbTestsService } from './ab-tests';
import { accountTracking, switchesOf, TrackingSwitches, withDefaults } from './tracking-switches';
import { liquidErrors } from './template-syntax';
import { recordAudit, summaries } from '../shared/audit-writer';
import { notEditableError, SINGLE_SEND_EDITABLE, SINGLE_SEND_TRANSITIONS, transitionSingleSends } from '../shared/single-send-state';

// The worker parses the stored references with the same function.
export { parseRecipientRef } from './campaign-refs';
export type { RecipientRef } from './campaign-refs';

export interface SingleSendInput extends TrackingSwitches {
  template_id: number;
  template_json: string | null;
  template_html: string | null;
  sender_id: number;
  unsubscribe_group_id: number;
  single_send_name: string;
  subject: string;
  preheader: string;
  recipient_id: RecipientRef[];
  exclude_specific_recipient_id: RecipientRef[];
  /** 0 at once, 1 at the date and time in the account's zone, 2 (extension) at the date and time in each recipient's zone */
  schedule_type: 0 | 1 | 2;
  /** `YYYY-MM-DD` in the account's time zone (or each recipient's, type 2); the zero date when not scheduled */
  schedule_date: string;
  /** `HH:MM:SS` in the account's time zone; the zero time when not scheduled */
  schedule_time: string;
  /** Extension: listed in the account's public archive once completed; absent: 0 on create, unchanged on update. */
  archive?: 0 | 1;
  /** Extension: the account's relay its mail goes through first (null: the usual choice); absent: unchanged on update. */
  relay_id?: number | null;
}

/** What a duplicate (and a resend) copies: the content and targeting, never status, schedule state or statistics. */
export const COPIED = [
  'template_id', 'template_json', 'template_html', 'sender_id', 'unsubscribe_group_id', 'from_sender', 'reply_to',
  'sender_name', 'sender_address', 'subject', 'preheader', 'schedule_type', 'schedule_date', 'schedule_time',
  'track_opens', 'track_clicks', 'relay_id',
] as const;

// `failed` (messages given up after their retries), `unique_clicks`, `total_clicks` and `template_errors` (delivered
// messages in which a Liquid value failed and was left empty) are extensions of the reference's record.
const STATISTICS = ['triggered', 'delivered', 'unique_opens', 'total_opens', 'bounces', 'unsubscribes', 'failed', 'unique_clicks', 'total_clicks', 'template_errors'] as const;

/**
 * `schedule_date` / `schedule_time` of a scheduled send: its due instant on the account's
 * clock now (`account_time_zone`, selected with the row), so a changed time zone shows the
 * same instant in the new zone. A copy not yet saved has no instant and keeps what it copied.
 */
function scheduleOf(row: Record<string, unknown>): { date: string; time: string } {
  if (Number(row.schedule_type) === 1 && row.due_at && row.account_time_zone) {
    const instant = new Date(row.due_at as string | Date);
    if (!Number.isNaN(instant.getTime())) return utcToZoned(instant, String(row.account_time_zone));
  }
  return { date: String(row.schedule_date), time: String(row.schedule_time) };
}

export function singleSendRecord(row: Record<string, unknown>) {
  const text = (value: unknown) => (value === null || value === undefined ? null : String(value));
  const schedule = scheduleOf(row);
  return {
    id: Number(row.id),
    user_id: Number(row.user_id),
    template_id: Number(row.template_id),
    recipient_id: parseJson<RecipientRef[]>(row.recipient_id, []),
    exclude_specific_recipient_id: parseJson<RecipientRef[]>(row.exclude_specific_recipient_id, []),
    sender_id: Number(row.sender_id),
    unsubscribe_group_id: Number(row.unsubscribe_group_id),
    single_send_name: String(row.single_send_name),
    from_sender: String(row.from_sender),
    reply_to: String(row.reply_to),
    sender_name: text(row.sender_name),
    sender_address: text(row.sender_address),
    subject: String(row.subject),
    preheader: String(row.preheader),
    schedule_type: Number(row.schedule_type),
    schedule_date: schedule.date,
    schedule_time: schedule.time,
    status: Number(row.status),
    utr: String(row.utr),
    template_json: text(row.template_json),
    template_html: text(row.template_html),
    ...(Object.fromEntries(STATISTICS.map((name) => [name, Number(row[name] ?? 0)])) as Record<(typeof STATISTICS)[number], number>),
    // Extensions: open and click tracking of this send (0 or 1).
    ...switchesOf(row),
    // Extension: listed in the account's public archive once completed (0 or 1).
    archive: Number(row.archive ?? 0) === 1 ? 1 : 0,
    // Extension: a resend to non-openers names the send whose non-openers it goes to (its utr).
    resend_of: text(row.resend_of_utr),
    // Extension: the account's relay its mail goes through first; null: the account's usual choice.
    relay_id: row.relay_id === null || row.relay_id === undefined ? null : Number(row.relay_id),
    // Filled in by list() and get() from the sending engine (the n-th unique open → that message's token).
    unique_open_token: {} as Record<string, string>,
    // Extension, filled in by list() and get(): the send's A/B test; null when it has none.
    ab: null as AbTestRecord | null,
    sent_at: plainDateTime(row.sent_at),
    created_at: timestamp(row.created_at),
    updated_at: timestamp(row.updated_at),
  };
}

export type SingleSendRecord = ReturnType<typeof singleSendRecord>;

/** The answer to a schedule more than PAST_SCHEDULE_GRACE_MS in the past (extension). */
export const SCHEDULE_IN_PAST = 'The schedule date must be a date after now.';
export const PAST_SCHEDULE_GRACE_MS = 60_000;
/** The same for a send on each recipient's clock whose time has passed in every zone. */
export const LOCAL_TIME_PASSED = 'The schedule date and time have already passed in every time zone.';

/**
 * When a scheduled send is due, and the last moment its time still lies ahead somewhere: type 1
 * once, in the account's zone; type 2 (each recipient's clock) starts in the first zone to
 * reach the time (UTC+14), and its time has passed everywhere after the last (UTC−12).
 */
export function scheduledInstants(type: number, date: string, time: string, accountZone: string): { due: Date; last: Date; passed: string } {
  if (type === SCHEDULE_LOCAL_TIME) {
    const { first, last } = localTimeSpan(date, time);
    return { due: first, last, passed: LOCAL_TIME_PASSED };
  }
  const due = zonedToUtc(date, time, accountZone);
  return { due, last: due, passed: SCHEDULE_IN_PAST };
}

/** A saved send's due instant; for a scheduled one, the last moment its time lies ahead and the answer once it has passed. */
interface Schedule {
  due: string;
  last?: Date;
  passed?: string;
}

interface SingleSendDeps extends Pick<ServiceDeps, 'db' | 'config'> {
  refs: CampaignRefs;
  senders: Pick<SendersService, 'postalAddress'>;
  /** unique_open_token of each send, kept by the sending engine (services/tracking.ts). */
  tracking: Pick<TrackingService, 'uniqueOpenTokens'>;
  /** The sends' A/B tests, shown with them. */
  abTests: Pick<AbTestsService, 'recordsOf'>;
}

export function createSingleSendsService({ db, config, refs, senders, tracking, abTests }: SingleSendDeps) {
  const live = (ctx: Ctx, q: Knex | Knex.Transaction = db) => q('single_sends').where({ user_id: ctx.userId }).whereNull('deleted_at');
  /** The row's columns and the account's time zone, which its schedule is shown in (one query). */
  const withZone = (ctx: Ctx) => [
    'single_sends.*',
    db('accounts').where('accounts.id', ctx.userId).select('time_zone').as('account_time_zone'),
    db('single_sends as original').whereRaw('original.id = single_sends.resend_of').select('original.utr').as('resend_of_utr'),
    // Whether it has an A/B test, so a send without one costs no further round trip.
    db('ab_tests').whereRaw('ab_tests.single_send_id = single_sends.id').select('ab_tests.id').as('ab_test_id'),
  ];

  async function findRow(ctx: Ctx, utr: string): Promise<Record<string, unknown> | undefined> {
    return isUtr(utr) ? live(ctx).where({ utr }).first(withZone(ctx)) : undefined;
  }

  async function requireRow(ctx: Ctx, utr: string): Promise<Record<string, unknown>> {
    const row = await findRow(ctx, utr);
    if (!row) throw new NotFoundError();
    return row;
  }

  /** Every reference checked against the account at once; answers the (verified) sender. */
  async function checkReferences(ctx: Ctx, input: SingleSendInput, schedule: Schedule, editorDesign: boolean, starting: boolean): Promise<SenderRecord> {
    const [template, sender, group, recipients, excluded] = await Promise.all([
      refs.templateError(input.template_id),
      refs.sender(ctx, input.sender_id, true),
      refs.groupError(ctx, input.unsubscribe_group_id),
      refs.recipientsError(ctx, input.recipient_id, 'recipient_id'),
      refs.recipientsError(ctx, input.exclude_specific_recipient_id, 'exclude_specific_recipient_id'),
    ]);
    const errors: FieldErrors = {};
    if (template) errors.template_id = [template];
    // The API takes one of the pair; the dashboard's visual editor saves its project with the HTML it exported.
    if (input.template_json && input.template_html && !editorDesign) {
      errors.template_json = ['The template json field prohibits template html from being present.'];
    }
    const unauthenticated = !sender.error && starting ? await unauthenticatedError(db, config.domains.requireDomainAuth, ctx.userId, [sender.sender!.from_email]) : undefined;
    if (sender.error || unauthenticated) errors.sender_id = [(sender.error ?? unauthenticated)!];
    if (group) errors.unsubscribe_group_id = [group];
    if (recipients) errors.recipient_id = [recipients];
    if (excluded) errors.exclude_specific_recipient_id = [excluded];
    if (input.relay_id && !(await db('relays').where({ id: input.relay_id, user_id: ctx.userId }).first('id'))) errors.relay_id = [messages.selected('relay_id')];
    liquidErrors({ subject: input.subject, preheader: input.preheader, template_html: input.template_html }, errors);
    // A schedule in the past would send at once, which nobody means: a minute's grace for a slow form.
    if (schedule.last && schedule.last.getTime() < Date.now() - PAST_SCHEDULE_GRACE_MS) errors.schedule_date = [schedule.passed!];
    throwIfAny(errors);
    return sender.sender!;
  }

  /** When a saved send is due: now, or its date and time read in the account's time zone (or first reached anywhere, type 2). */
  async function scheduleOfInput(ctx: Ctx, input: SingleSendInput): Promise<Schedule> {
    if (input.schedule_type === 0) return { due: nowValue() };
    const account = await db('accounts').where({ id: ctx.userId }).first('time_zone');
    const { due, last, passed } = scheduledInstants(input.schedule_type, input.schedule_date, input.schedule_time, account?.time_zone ?? 'UTC');
    return { due: due.toISOString(), last, passed };
  }

  /** The stored columns of a saved send: the input, the sender's addresses and the due instant. */
  /** `starting`: a ready send (not a draft), which REQUIRE_DOMAIN_AUTH refuses from an unauthenticated domain. */
  async function savedColumns(ctx: Ctx, input: SingleSendInput, editorDesign: boolean, starting: boolean): Promise<Record<string, unknown>> {
    const schedule = await scheduleOfInput(ctx, input);
    const due = schedule.due;
    const sender = await checkReferences(ctx, input, schedule, editorDesign, starting);
    return {
      ...input,
      recipient_id: jsonValue(input.recipient_id),
      exclude_specific_recipient_id: jsonValue(input.exclude_specific_recipient_id),
      from_sender: sender.from_email,
      reply_to: sender.reply_to_email,
      sender_name: sender.from_name,
      sender_address: await senders.postalAddress(sender),
      due_at: due,
      updated_at: nowValue(),
    };
  }

  /** After a guarded UPDATE changed nothing: the record vanished (404) or started meanwhile (409). */
  async function refusal(ctx: Ctx, utr: string, action: 'update' | 'delete'): Promise<Error> {
    const row = await findRow(ctx, utr);
    return row ? notEditableError(Number(row.status), action) : new NotFoundError();
  }

  /** A saved (not draft) send is released: it starts when due, now or at its schedule. */
  function releaseEntry(utr: string, input: SingleSendInput) {
    const now = input.schedule_type === 0;
    return {
      action: now ? ('single_send.started' as const) : ('single_send.scheduled' as const),
      recordType: 'single_send',
      recordId: utr,
      summary: summaries.released(input.single_send_name, { now, date: input.schedule_date, time: input.schedule_time, recipientsClock: input.schedule_type === SCHEDULE_LOCAL_TIME }),
    };
  }

  return {
    async list(ctx: Ctx, paging?: Paging) {
      const tested: number[] = [];
      const result = await listPage(live(ctx).select(withZone(ctx)).orderBy('id', 'desc'), paging, (row) => {
        if (row.ab_test_id !== null && row.ab_test_id !== undefined) tested.push(Number(row.id));
        return singleSendRecord(row);
      });
      const tokens = await tracking.uniqueOpenTokens(result.rows.map((r) => r.id));
      const tests = await abTests.recordsOf(tested);
      for (const record of result.rows) {
        record.unique_open_token = tokens.get(record.id) ?? {};
        record.ab = tests.get(record.id) ?? null;
      }
      return result;
    },

    async get(ctx: Ctx, utr: string): Promise<SingleSendRecord> {
      const row = await requireRow(ctx, utr);
      const record = singleSendRecord(row);
      record.unique_open_token = (await tracking.uniqueOpenTokens([record.id])).get(record.id) ?? {};
      if (row.ab_test_id !== null && row.ab_test_id !== undefined) record.ab = (await abTests.recordsOf([record.id])).get(record.id) ?? null;
      return record;
    },

    /**
     * Saves a ready send (status 1), due now or at its schedule; the dashboard saves a draft
     * (status 0, not due) instead, which its confirm step sends. Answers its utr.
     */
    async create(ctx: Ctx, input: SingleSendInput, { draft = false, editorDesign = false } = {}): Promise<string> {
      const saved = await savedColumns(ctx, input, editorDesign, !draft);
      const columns: Record<string, unknown> = { ...saved, archive: input.archive ?? 0, ...(draft ? { due_at: null } : {}), ...withDefaults(input, await accountTracking(db, ctx.userId)) };
      const utr = newUtr();
      await db.transaction(async (trx) => {
        await insertId(trx, 'single_sends', {
          ...columns,
          user_id: ctx.userId,
          utr,
          status: draft ? SINGLE_SEND_TRANSITIONS.saveDraft.to : SINGLE_SEND_TRANSITIONS.save.to,
          created_at: columns.updated_at,
        });
        await recordAudit(trx, ctx, [
          { action: 'single_send.created', recordType: 'single_send', recordId: utr, summary: input.single_send_name },
          ...(draft ? [] : [releaseEntry(utr, input)]),
        ]);
      });
      return utr;
    },

    /** Replaces a send that has not started; it becomes ready (1) again with a new due time. */
    async update(ctx: Ctx, utr: string, input: SingleSendInput, { draft = false, editorDesign = false } = {}): Promise<string> {
      const row = await requireRow(ctx, utr);
      if (!SINGLE_SEND_EDITABLE.includes(Number(row.status))) throw notEditableError(Number(row.status), 'update');
      const columns = { ...(await savedColumns(ctx, input, editorDesign, !draft)), ...(draft ? { due_at: null } : {}), ...withDefaults(input, switchesOf(row)) };
      const changed = await db.transaction(async (trx) => {
        const n = await transitionSingleSends(live(ctx, trx).where({ utr }), draft ? 'saveDraft' : 'save', columns);
        if (n) {
          await recordAudit(trx, ctx, [
            { action: 'single_send.updated', recordType: 'single_send', recordId: utr, summary: input.single_send_name },
            ...(draft ? [] : [releaseEntry(utr, input)]),
          ]);
        }
        return n;
      });
      if (!changed) throw await refusal(ctx, utr, 'update');
      return utr;
    },

    /**
     * Shows or hides a send in the account's public archive, at any status: unlike the rest of
     * a send, this may change after it went out (someone may want a past issue taken down).
     */
    async setArchive(ctx: Ctx, utr: string, archive: 0 | 1): Promise<void> {
      const changed = isUtr(utr)
        ? await db.transaction(async (trx) => {
            const n = await live(ctx, trx).where({ utr }).update({ archive, updated_at: nowValue() });
            if (n) await recordAudit(trx, ctx, { action: 'single_send.updated', recordType: 'single_send', recordId: utr, summary: archive ? 'Shown in the public archive' : 'Hidden from the public archive' });
            return n;
          })
        : 0;
      if (!changed) throw new NotFoundError();
    },

    /** A copy named `Copy of …` at status 0 (initiate): it sends nothing until it is updated. */
    async duplicate(ctx: Ctx, utr: string): Promise<string> {
      const row = await requireRow(ctx, utr);
      const now = nowValue();
      const copyUtr = newUtr();
      // The copy has no instant yet: it keeps the schedule as the account's clock shows it now.
      const schedule = scheduleOf(row);
      const name = `Copy of ${row.single_send_name}`.slice(0, LIMITS.string);
      await db.transaction(async (trx) => {
        await insertId(trx, 'single_sends', {
          ...Object.fromEntries(COPIED.map((column) => [column, row[column]])),
          schedule_date: schedule.date,
          schedule_time: schedule.time,
          recipient_id: jsonValue(parseJson(row.recipient_id, [])),
          exclude_specific_recipient_id: jsonValue(parseJson(row.exclude_specific_recipient_id, [])),
          user_id: ctx.userId,
          single_send_name: name,
          status: SINGLE_SEND_STATUS.initiate,
          utr: copyUtr,
          created_at: now,
          updated_at: now,
        });
        await recordAudit(trx, ctx, { action: 'single_send.created', recordType: 'single_send', recordId: copyUtr, summary: summaries.copied(name, String(row.single_send_name)) });
      });
      return copyUtr;
    },

    /** Cancels a send that has not started: it is soft-deleted and never sends. */
    async remove(ctx: Ctx, utr: string): Promise<void> {
      const row = await requireRow(ctx, utr);
      if (!SINGLE_SEND_EDITABLE.includes(Number(row.status))) throw notEditableError(Number(row.status), 'delete');
      const now = nowValue();
      const changed = await db.transaction(async (trx) => {
        const n = await transitionSingleSends(live(ctx, trx).where({ utr }), 'cancel', { deleted_at: now, updated_at: now, due_at: null });
        if (n) await recordAudit(trx, ctx, { action: 'single_send.deleted', recordType: 'single_send', recordId: utr, summary: String(row.single_send_name) }, now);
        return n;
      });
      if (!changed) throw await refusal(ctx, utr, 'delete');
    },

    /** Bulk delete by id: all or nothing; refused while any of them is sending or sent. */
    async removeMany(ctx: Ctx, ids: number[]): Promise<void> {
      await db.transaction(async (trx) => {
        const rows = await live(ctx, trx).whereIn('id', ids).select('id', 'status', 'utr', 'single_send_name');
        if (rows.length === 0) throw new NotFoundError();
        const started = rows.filter((row) => !SINGLE_SEND_EDITABLE.includes(Number(row.status))).map((row) => row.id);
        if (started.length > 0) {
          throw new ConflictError(`Single sends ${started.join(', ')} are sending or sent and cannot be deleted; leave them out and try again.`);
        }
        const now = nowValue();
        const changed = await transitionSingleSends(live(ctx, trx).whereIn('id', ids), 'cancel', { deleted_at: now, updated_at: now, due_at: null });
        // A send the worker started between the read and the update rolls the whole delete back.
        if (changed !== rows.length) throw new ConflictError('A single send started meanwhile and cannot be deleted; try again.');
        await recordAudit(trx, ctx, rows.map((r) => ({ action: 'single_send.deleted' as const, recordType: 'single_send', recordId: String(r.utr), summary: String(r.single_send_name) })), now);
      });
    },
  };
}

export type SingleSendsService = ReturnType<typeof createSingleSendsService>;
