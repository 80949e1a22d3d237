import type { Knex } from 'knex';
import { affectedRows, nowValue, parseJson } from '../../db/dialect';
import { lookupJoin, SqlFragment, valuesTable } from '../../db/expressions';
import { withIndexLookups } from '../../db/plans';
import { RESERVED_FIELD_NAMES } from '../../lib/constants';
import type { Ctx } from '../context';
import { CountryResolver, loadCountryResolver } from '../reference/country-lookup';
import type { AudienceEvents } from './audience-events';
import { customFieldDefs, CustomFieldSource } from './custom-field-values';
import { compileRules, segmentFields, SegmentRules } from './segment-rules';
import { SEGMENT_ENGAGEMENT } from '../../lib/constants';

/** When the segments' relative dates are evaluated: the wall clock, unless a test moves it. */
export interface SegmentClock {
  now: () => Date;
}

export const wallClock = (): SegmentClock => ({ now: () => new Date() });

/**
 * Removes the rule memberships of contacts that are being deleted (in the caller's
 * transaction), so counts and sends never see them; stored recipients stay.
 */
export async function dropRuleMemberships(trx: Knex | Knex.Transaction, contactIds: number[] | Knex.QueryBuilder): Promise<void> {
  await trx('segment_recipients').where({ source: 'rule' }).whereIn('contact_id', contactIds).delete();
}

/** The rules stored with a segment row (they were checked when it was saved). */
export function storedRules(segment: Record<string, unknown>): SegmentRules {
  return {
    fields: parseJson<string[]>(segment.select_field, []),
    operators: parseJson<string[]>(segment.select_operator, []),
    values: parseJson<string[]>(segment.value, []),
    queryType: segment.query_type === 'or' ? 'or' : 'and',
  };
}

/** Segments whose rules share one statement (each adds its compiled rules to one CASE). */
const SEGMENTS_PER_STATEMENT = 50;

/** Rule fields that need neither the account's custom fields nor the country list. */
const BUILT_IN = new Set<string>([...RESERVED_FIELD_NAMES, 'created_at', SEGMENT_ENGAGEMENT.field]);

interface Deps {
  fields: CustomFieldSource;
  events: AudienceEvents;
  clock: SegmentClock;
}

/**
 * Keeps rule segments current as contacts change: every write of contacts (add, update, each
 * import batch) recomputes the rule memberships of exactly those contacts in every live segment
 * of the account, inside the writing transaction, so a welcome automation on a segment sees a
 * contact who starts (or stops) matching at its next tick. Set-based: two statements per batch
 * of contacts and per 50 segments, whatever the batch's size; nothing at all for an account
 * without segments.
 */
export function createSegmentMemberships({ fields, events, clock }: Deps) {
  /** The account's live segments, unexecuted: a bulk write asks it inside its own statement. */
  const liveSegments = (ctx: Ctx, trx: Knex.Transaction): Knex.QueryBuilder => trx('segments').where({ user_id: ctx.userId }).whereNull('deleted_at').select('id');
  return {
    liveSegments,

    /**
     * Brings the rule memberships of the given contacts of the account up to date: they leave
     * the segments they no longer match (or whose contact type they left), and join the ones
     * they now match, unless the segment already holds their address.
     */
    refreshContacts(ctx: Ctx, contactIds: number[], trx: Knex.Transaction): Promise<{ joined: number; left: number }> {
      return refresh(ctx, contactIds, trx, () => true);
    },

    /**
     * After an open or click: the contacts at that address (one per contact type) in the
     * segments with engagement rules, so those stay current as events arrive. Costs one small
     * query when the account has no such segment.
     */
    async refreshEngaged(ctx: Ctx, emailKey: string, trx: Knex.Transaction): Promise<void> {
      const uses = (s: Record<string, unknown>) => parseJson<string[]>(s.select_field, []).includes(SEGMENT_ENGAGEMENT.field);
      const segments: Record<string, unknown>[] = await trx('segments').where({ user_id: ctx.userId }).whereNull('deleted_at').select('select_field');
      if (!segments.some(uses)) return;
      const ids: number[] = (await trx('contacts').where({ user_id: ctx.userId, email_key: emailKey }).whereNull('deleted_at').pluck('id')).map(Number);
      await refresh(ctx, ids, trx, (rules) => rules.fields.includes(SEGMENT_ENGAGEMENT.field));
    },
  };

  async function refresh(ctx: Ctx, contactIds: number[], trx: Knex.Transaction, wanted: (rules: SegmentRules) => boolean): Promise<{ joined: number; left: number }> {
      const counts = { joined: 0, left: 0 };
      if (contactIds.length === 0) return counts;
      const all: Record<string, unknown>[] = await trx('segments')
        .where({ user_id: ctx.userId })
        .whereNull('deleted_at')
        .orderBy('id')
        .select('id', 'contact_type_id', 'select_field', 'select_operator', 'value', 'query_type');
      const segments = all.filter((s) => wanted(storedRules(s)));
      if (segments.length === 0) return counts;

      const rules = segments.map(storedRules);
      const uses = (test: (name: string) => boolean) => rules.some((r) => r.fields.some(test));
      const [defs, countryOf] = await Promise.all([
        uses((name) => !BUILT_IN.has(name)) ? customFieldDefs(fields, ctx, trx) : [],
        uses((name) => name === 'country') ? loadCountryResolver(trx) : ((() => undefined) as CountryResolver),
      ]);
      const known = segmentFields(defs);
      const now = nowValue();
      const at = { userId: ctx.userId, now: clock.now() };
      const ids = valuesTable(trx, contactIds, 'integer', 'x');

      await withIndexLookups(trx, async () => {
        for (let from = 0; from < segments.length; from += SEGMENTS_PER_STATEMENT) {
          const chunk = segments.slice(from, from + SEGMENTS_PER_STATEMENT).map((segment, i) => ({
            id: Number(segment.id),
            contactTypeId: Number(segment.contact_type_id),
            where: compileRules(trx, rules[from + i], known, countryOf, at),
          }));
          const { leave, join } = statements(trx, ctx.userId, chunk, ids, now);
          counts.left += affectedRows(await trx.raw(leave.sql, leave.bindings));
          const added = affectedRows(await trx.raw(join.sql, join.bindings));
          counts.joined += added;
          if (added > 0 && events.hasSegmentListeners()) {
            const reached: number[] = await trx('segment_recipients')
              .distinct('segment_id')
              .whereIn('segment_id', chunk.map((s) => s.id))
              .where({ source: 'rule', created_at: now })
              .whereIn('contact_id', contactIds)
              .pluck('segment_id');
            for (const segmentId of reached) await events.segmentJoined({ userId: ctx.userId, segmentId: Number(segmentId), joinedAt: now }, trx);
          }
        }
      });
      return counts;
  }
}

export type SegmentMemberships = ReturnType<typeof createSegmentMemberships>;

interface CompiledSegment {
  id: number;
  contactTypeId: number;
  /** Its rules over the contact `c`. */
  where: SqlFragment;
}

/**
 * The two statements for a chunk of segments and a list of contacts `x(value)`. Both start
 * from the listed contacts, so a batch costs the same however large the segments and the
 * account are: rule rows are looked up through the contact_id index, contacts through their
 * primary key (`lookupJoin`). Each
 * segment's own rules sit in one CASE on the segment id. The account is tested inside the
 * CASE, never as a condition the planner could pick an index of the whole account for.
 */
function statements(db: Knex, userId: number, chunk: CompiledSegment[], ids: SqlFragment, now: string): { leave: SqlFragment; join: SqlFragment } {
  const bySegment = (column: string, test: (s: CompiledSegment) => SqlFragment, otherwise = ''): SqlFragment => {
    const tests = chunk.map(test);
    return {
      sql: `case ${column} ${tests.map((t) => `when ? then (${t.sql})`).join(' ')}${otherwise} end`,
      bindings: chunk.flatMap((s, i) => [s.id, ...tests[i].bindings]),
    };
  };
  // A rule row goes when its contact no longer belongs: another address, deleted, another type, or the rules fail.
  const gone = bySegment(
    'sr.segment_id',
    (s) => ({
      sql: `not coalesce(c.email_key = sr.email_key and c.user_id = ? and c.deleted_at is null and c.contact_type_id = ? and ${s.where.sql}, false)`,
      bindings: [userId, s.contactTypeId, ...s.where.bindings],
    }),
    ' else false',
  );
  const matches = bySegment('s.id', (s) => ({
    sql: `c.user_id = ? and c.contact_type_id = ? and c.deleted_at is null and ${s.where.sql}`,
    bindings: [userId, s.contactTypeId, ...s.where.bindings],
  }));
  const chunkIds = chunk.map((s) => s.id);
  return {
    leave: {
      sql: `delete from segment_recipients where id in (
        select sr.id from ${ids.sql} ${lookupJoin(db, 'join', 'segment_recipients', 'sr', 'contact_id', 'x.value')}
          ${lookupJoin(db, 'left join', 'contacts', 'c', 'id', 'sr.contact_id')}
        where sr.source = 'rule' and ${gone.sql})`,
      bindings: [...ids.bindings, ...gone.bindings],
    },
    join: {
      sql: `insert into segment_recipients
          (user_id, segment_id, contact_id, source, first_name, last_name, email, email_key, country, state, city, address_line1, created_at, updated_at)
        select ?, s.id, c.id, 'rule', c.first_name, c.last_name, c.email, c.email_key,
          (select co.name from countries co where co.id = c.country), c.state, c.city, c.address_line1, ?, ?
        from ${ids.sql} ${lookupJoin(db, 'join', 'contacts', 'c', 'id', 'x.value')} join segments s on s.contact_type_id = c.contact_type_id
        where s.id in (${chunkIds.map(() => '?').join(', ')}) and ${matches.sql}
        on conflict (segment_id, email_key) do nothing`,
      bindings: [userId, now, now, ...ids.bindings, ...chunkIds, ...matches.bindings],
    },
  };
}
