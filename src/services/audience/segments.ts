import { audited, recordAudit } from '../shared/audit-writer';
import type { Knex } from 'knex';
import { restoreOptOuts } from './erased-opt-outs';
import { affectedRows, insertId, jsonValue, nowValue, parseJson, refreshStatistics, toCount } from '../../db/dialect';
import { emailKey } from '../../lib/email-key';
import { idChunks, listPage, Paging } from '../../db/paging';
import { FieldErrors, NotFoundError, ValidationError } from '../../lib/errors';
import { messages, throwIfAny } from '../../lib/validation';
import type { AudienceEvents } from './audience-events';
import type { ContactTypesService } from './contact-types';
import type { Ctx, ServiceDeps } from '../context';
import { CountryResolver, loadCountryResolver } from '../reference/country-lookup';
import { customFieldDefs, CustomFieldSource } from './custom-field-values';
import { storedRules } from './segment-memberships';
import { arity, checkRules, compileRules, rulesMove, SegmentField, SegmentRules, segmentFields } from './segment-rules';
import { SEGMENT_ENGAGEMENT, SINGLE_SEND_STATUS } from '../../lib/constants';
import { isUtr } from '../../lib/utr';
import type { SegmentClock } from './segment-memberships';
import {
recipientListQuery,
segmentEmailsCount,
segmentRecipientRecord,
SegmentRecipientRecord,
segmentRecord,
SegmentRecord,
} from './segment-records';

/** What save and update take (docs/segments.md, "What the rules mean"). */
export interface SegmentInput {
  segment_name: string;
  contact_type_id: number;
  select_field: unknown[];
  select_operator: unknown[];
  value: unknown[];
  query_type: unknown;
}

export interface RecipientInput {
  segment_id: number;
  first_name: string;
  last_name: string;
  email: string;
}

interface Deps extends Pick<ServiceDeps, 'db' | 'secret'> {
  fields: CustomFieldSource;
  contactTypes: Pick<ContactTypesService, 'exists'>;
  events: AudienceEvents;
  /** When relative dates are evaluated (tests move it). */
  clock: SegmentClock;
}

export function createSegmentsService({ db, secret, contactTypes, fields, events, clock }: Deps) {
  const at = (ctx: Ctx) => ({ userId: ctx.userId, now: clock.now() });
  const live = (ctx: Ctx, q: Knex | Knex.Transaction = db) => q('segments').where({ user_id: ctx.userId }).whereNull('deleted_at');

  async function liveSegment(ctx: Ctx, id: number, q: Knex | Knex.Transaction = db): Promise<Record<string, unknown>> {
    const row = await live(ctx, q).where({ id }).first();
    if (!row) throw new NotFoundError();
    return row;
  }

  /** Live contacts of the account in the segment's contact type (over `contacts c`). */
  const contactScope = (ctx: Ctx, contactTypeId: number) => ({
    sql: 'c.user_id = ? and c.contact_type_id = ? and c.deleted_at is null',
    bindings: [ctx.userId, contactTypeId],
  });

  /**
   * Checks the input against the account; every failing field is reported at once. Answers
   * the rules with the fields and countries they were checked against, to compile them.
   */
  async function check(ctx: Ctx, input: SegmentInput): Promise<{ rules: SegmentRules; fields: Map<string, SegmentField>; countryOf: CountryResolver }> {
    const errors: FieldErrors = {};
    const [typeOk, defs, countryOf] = await Promise.all([contactTypes.exists(ctx, input.contact_type_id), customFieldDefs(fields, ctx), loadCountryResolver(db)]);
    if (!typeOk) errors.contact_type_id = [messages.selected('contact_type_id')];
    let rules: SegmentRules | undefined;
    const known = segmentFields(defs);
    try {
      rules = checkRules({ fields: input.select_field, operators: input.select_operator, values: input.value, queryType: input.query_type }, known, countryOf);
    } catch (err) {
      if (!(err instanceof ValidationError)) throw err;
      Object.assign(errors, err.fields);
    }
    if (rules) Object.assign(errors, await unknownSends(ctx, rules));
    throwIfAny(errors);
    return { rules: rules!, fields: known, countryOf };
  }

  /** Engagement values that name no single send of the account (`value.k` messages). */
  async function unknownSends(ctx: Ctx, rules: SegmentRules): Promise<FieldErrors> {
    const named: { at: string; utr: string }[] = [];
    let next = 0;
    rules.fields.forEach((name, i) => {
      const count = arity(rules.operators[i]);
      if (name === SEGMENT_ENGAGEMENT.field && count === 1 && rules.values[next] !== SEGMENT_ENGAGEMENT.anySend) named.push({ at: `value.${next}`, utr: rules.values[next] });
      next += count;
    });
    if (named.length === 0) return {};
    // Only UUIDs are looked up (PostgreSQL compares a uuid column with nothing else); other text names no send.
    const utrs = named.map((n) => n.utr).filter(isUtr);
    const found = new Set<string>(utrs.length ? (await db('single_sends').where({ user_id: ctx.userId }).whereIn('utr', utrs).pluck('utr')).map(String) : []);
    return Object.fromEntries(named.filter((n) => !found.has(n.utr)).map((n) => [n.at, [messages.selected(n.at)]]));
  }

  /** The statement of `count` (column `n`), checked and compiled, not yet run (wrapped: a query builder is awaitable). */
  async function countQuery(ctx: Ctx, input: SegmentInput): Promise<{ query: Knex.QueryBuilder }> {
    const { rules, fields: known, countryOf } = await check(ctx, input);
    const where = compileRules(db, rules, known, countryOf, at(ctx));
    const scope = contactScope(ctx, input.contact_type_id);
    return { query: db('contacts as c').whereRaw(`${scope.sql} and ${where.sql}`, [...scope.bindings, ...where.bindings]).count({ n: '*' }) };
  }

  const ruleColumns = (rules: SegmentRules) => ({
    select_field: jsonValue(rules.fields),
    select_operator: jsonValue(rules.operators),
    value: jsonValue(rules.values),
    query_type: rules.queryType,
  });

  /**
   * Brings a segment's rule members up to date in two set-based statements: members that no
   * longer match (or whose contact changed email or was deleted) leave, matching contacts
   * that are not yet recipients join. Members that still match keep their row, so its
   * `created_at` is when the contact joined. Stored (manual) recipients are never touched,
   * and a stored address is not added again by the rules.
   */
  async function refresh(ctx: Ctx, segmentId: number, trx?: Knex.Transaction): Promise<{ joined: number; left: number }> {
    if (!trx) return db.transaction((t) => refresh(ctx, segmentId, t));
    const segment = await liveSegment(ctx, segmentId, trx);
    const [defs, countryOf] = await Promise.all([customFieldDefs(fields, ctx, trx), loadCountryResolver(trx)]);
    const rules = storedRules(segment);
    const where = compileRules(trx, rules, segmentFields(defs), countryOf, at(ctx));
    const scope = contactScope(ctx, Number(segment.contact_type_id));
    // Written so that no plan can turn them quadratic. PostgreSQL estimates a few conditions
    // on JSON values as matching one row; with the rules inside a join or NOT EXISTS it then
    // rescans every match for every recipient. So the delete joins contacts on the primary key
    // only and tests the rules on the joined row (a NULL test counts as no match); the insert
    // lets the unique (segment_id, email_key) index skip the addresses already there.
    const left = await trx.raw(
      `delete from segment_recipients where id in (
         select sr.id from segment_recipients sr left join contacts c on c.id = sr.contact_id
         where sr.segment_id = ? and sr.source = 'rule'
           and (c.id is null or not coalesce(c.email_key = sr.email_key and ${scope.sql} and ${where.sql}, false)))`,
      [segmentId, ...scope.bindings, ...where.bindings],
    );
    const now = nowValue();
    const joined = await trx.raw(
      `insert into segment_recipients
         (user_id, segment_id, contact_id, source, first_name, last_name, email, email_key, country, state, city, address_line1, created_at, updated_at)
       select ?, ?, c.id, 'rule', c.first_name, c.last_name, c.email, c.email_key,
         (select co.name from countries co where co.id = c.country), c.state, c.city, c.address_line1, ?, ?
       from contacts c
       where ${scope.sql} and ${where.sql}
       on conflict (segment_id, email_key) do nothing`,
      [ctx.userId, segmentId, now, now, ...scope.bindings, ...where.bindings],
    );
    const counts = { joined: affectedRows(joined), left: affectedRows(left) };
    // Large changes leave the planner's row estimates stale for the next refresh.
    if (counts.joined + counts.left > 10_000) await refreshStatistics(trx, 'segment_recipients');
    if (counts.joined > 0) await events.segmentJoined({ userId: ctx.userId, segmentId, joinedAt: now }, trx);
    return counts;
  }

  /**
   * Rules on relative dates or engagement change with time and with events no contact write
   * announces: their members are brought up to date whenever they are read.
   */
  async function refreshIfMoving(ctx: Ctx, segment: Record<string, unknown>): Promise<void> {
    if (rulesMove(storedRules(segment))) await refresh(ctx, Number(segment.id));
  }

  return {
    async list(ctx: Ctx, paging?: Paging) {
      const query = live(ctx).select('segments.*', segmentEmailsCount(db)).orderBy('id', 'desc');
      return listPage(query, paging, segmentRecord);
    },

    /** Ids and names of the live segments, newest first (for pickers and labels; no member counts). */
    async names(ctx: Ctx): Promise<{ id: number; segment_name: string }[]> {
      const rows = await live(ctx).orderBy('id', 'desc').select('id', 'segment_name');
      return rows.map((r: Record<string, unknown>) => ({ id: Number(r.id), segment_name: String(r.segment_name) }));
    },

    /**
     * The sends an engagement condition can name, newest first: single sends that started
     * (running, paused, completed or cancelled after starting), by name and utr.
     */
    async sendChoices(ctx: Ctx, limit = 100): Promise<{ utr: string; name: string }[]> {
      const rows = await db('single_sends')
        .where({ user_id: ctx.userId })
        .whereNull('deleted_at')
        .whereIn('status', [SINGLE_SEND_STATUS.running, SINGLE_SEND_STATUS.paused, SINGLE_SEND_STATUS.completed, SINGLE_SEND_STATUS.cancelled])
        .orderBy('id', 'desc')
        .limit(limit)
        .select('utr', 'single_send_name', 'subject');
      return rows.map((r: Record<string, unknown>) => ({ utr: String(r.utr), name: `${String(r.single_send_name)} (${String(r.subject ?? '')})` }));
    },

    /** True when the id names a live segment of this account. */
    async exists(ctx: Ctx, id: number): Promise<boolean> {
      return Boolean(await live(ctx).where({ id }).first('id'));
    },

    async get(ctx: Ctx, id: number): Promise<SegmentRecord> {
      const row = await live(ctx).where({ id }).select('segments.*', segmentEmailsCount(db)).first();
      if (!row) throw new NotFoundError();
      return segmentRecord(row);
    },

    /** Creates the segment and fills it from its rules, in one transaction. */
    async save(ctx: Ctx, input: SegmentInput): Promise<number> {
      const { rules } = await check(ctx, input);
      return db.transaction(async (trx) => {
        const now = nowValue();
        const id = await insertId(trx, 'segments', {
          user_id: ctx.userId,
          contact_type_id: input.contact_type_id,
          segment_name: input.segment_name.trim(),
          ...ruleColumns(rules),
          created_at: now,
          updated_at: now,
        });
        await refresh(ctx, id, trx);
        await recordAudit(trx, ctx, { action: 'segment.created', recordType: 'segment', recordId: id, summary: input.segment_name.trim() }, now);
        return id;
      });
    },

    async update(ctx: Ctx, id: number, input: SegmentInput): Promise<void> {
      await liveSegment(ctx, id);
      const { rules } = await check(ctx, input);
      await db.transaction(async (trx) => {
        const changed = await live(ctx, trx)
          .where({ id })
          .update({ contact_type_id: input.contact_type_id, segment_name: input.segment_name.trim(), ...ruleColumns(rules), updated_at: nowValue() });
        if (!changed) throw new NotFoundError();
        await refresh(ctx, id, trx);
        await recordAudit(trx, ctx, { action: 'segment.updated', recordType: 'segment', recordId: id, summary: input.segment_name.trim() });
      });
    },

    async remove(ctx: Ctx, id: number): Promise<void> {
      const now = nowValue();
      await audited(db, ctx, async (trx) => {
        const changed = await live(ctx, trx).where({ id }).update({ deleted_at: now, updated_at: now });
        if (!changed) throw new NotFoundError();
      }, () => ({ action: 'segment.deleted', recordType: 'segment', recordId: id }));
    },

    refresh,

    /** Brings every live segment of the account whose rules move with time or engagement up to date. */
    async refreshMoving(ctx: Ctx): Promise<number> {
      const rows: Record<string, unknown>[] = await live(ctx).select('id', 'select_operator');
      const moving = rows.filter((r) => rulesMove({ operators: parseJson<string[]>(r.select_operator, []) }));
      for (const row of moving) await refresh(ctx, Number(row.id));
      return moving.length;
    },

    /**
     * Every account's segments whose rules move with time or engagement, brought up to date
     * (the worker's maintenance run, hourly): a live automation on such a segment then enrols
     * the contacts that roll into it even when nobody reads or sends the segment. Answers how
     * many segments were refreshed.
     */
    async refreshAllMoving(shouldStop: () => boolean = () => false): Promise<number> {
      const rows: Record<string, unknown>[] = await db('segments').whereNull('deleted_at').orderBy('id').select('id', 'user_id', 'select_operator');
      let refreshed = 0;
      for (const row of rows) {
        if (shouldStop()) break;
        if (!rulesMove({ operators: parseJson<string[]>(row.select_operator, []) })) continue;
        await refresh({ userId: Number(row.user_id) }, Number(row.id));
        refreshed += 1;
      }
      return refreshed;
    },

    /** Moves the segments' clock (tests). */
    setClock(now: () => Date): void {
      clock.now = now;
    },

    /**
     * How many contacts of the type the conditions match, before they are saved (the
     * dashboard's live count): checked and compiled as `save` does, counted with the same
     * condition the refresh fills the segment with.
     */
    async count(ctx: Ctx, input: SegmentInput): Promise<number> {
      const row = await (await countQuery(ctx, input)).query.first();
      return toCount(row?.n);
    },

    countQuery,

    /**
     * The recipients of a live segment of the account, as a query not yet run (columns id,
     * contact_id, email, email_key, first_name, last_name, source of `segment_recipients`),
     * for set-based use such as `insert … select`. Call `refresh` first to bring rule members
     * up to date. A deleted or foreign segment has none.
     */
    recipients(ctx: Ctx, segmentId: number, trx?: Knex.Transaction): Knex.QueryBuilder {
      return (trx ?? db)('segment_recipients as sr')
        .join('segments as s', 's.id', 'sr.segment_id')
        .where({ 's.id': segmentId, 's.user_id': ctx.userId })
        .whereNull('s.deleted_at')
        .select('sr.id', 'sr.contact_id', 'sr.email', 'sr.email_key', 'sr.first_name', 'sr.last_name', 'sr.source');
    },

    async recipientsPage(ctx: Ctx, segmentId: number, paging: Paging) {
      await refreshIfMoving(ctx, await liveSegment(ctx, segmentId));
      return listPage(recipientListQuery(db, ctx.userId, segmentId).orderBy('sr.id', 'desc'), paging, segmentRecipientRecord);
    },

    /** Every recipient newest first, in chunks, for streaming. */
    async *recipientChunks(ctx: Ctx, segmentId: number): AsyncGenerator<SegmentRecipientRecord[]> {
      await refreshIfMoving(ctx, await liveSegment(ctx, segmentId));
      for await (const rows of idChunks(recipientListQuery(db, ctx.userId, segmentId), 'sr.id')) yield rows.map(segmentRecipientRecord);
    },

    /**
     * Stores a recipient by hand. An address already in the segment keeps one row, now stored
     * by hand (so a refresh no longer removes it), with the given names.
     */
    async storeRecipient(ctx: Ctx, input: RecipientInput): Promise<void> {
      if (!(await live(ctx).where({ id: input.segment_id }).first('id'))) {
        throw ValidationError.of('segment_id', messages.selected('segment_id'));
      }
      const now = nowValue();
      const email = input.email.trim();
      await restoreOptOuts(db, secret, ctx.userId, [emailKey(email)]);
      await db('segment_recipients')
        .insert({
          user_id: ctx.userId,
          segment_id: input.segment_id,
          source: 'manual',
          first_name: input.first_name.trim(),
          last_name: input.last_name.trim(),
          email,
          email_key: emailKey(email),
          created_at: now,
          updated_at: now,
        })
        .onConflict(['segment_id', 'email_key'])
        .merge(['source', 'first_name', 'last_name', 'email', 'updated_at']);
    },

    /** Deletes recipients of the account's live segments (rule members come back at the next refresh). */
    async removeRecipients(ctx: Ctx, recipientIds: number[]): Promise<void> {
      const changed = await db('segment_recipients')
        .whereIn('id', recipientIds)
        .where({ user_id: ctx.userId })
        .whereIn('segment_id', live(ctx).select('id'))
        .delete();
      if (!changed) throw new NotFoundError();
    },
  };
}

export type SegmentsService = ReturnType<typeof createSegmentsService>;
