import type { Knex } from 'knex';
import { affectedRows, nowValue, parseJson } from '../../db/dialect';
import type { SqlFragment } from '../../db/expressions';
import { RESERVED_FIELD_NAMES } from '../../lib/constants';
import type { Ctx } from '../context';
import { CountryResolver, loadCountryResolver } from '../reference/country-lookup';
import type { AudienceEvents } from './audience-events';
import { customFieldDefs, CustomFieldSource } from './custom-field-values';
import { compileRules, segmentFields, SegmentRules } from './segment-rules';

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
const BUILT_IN = new Set<string>([...RESERVED_FIELD_NAMES, 'created_at']);

interface Deps {
  fields: CustomFieldSource;
  events: AudienceEvents;
}

/**
 * Keeps rule segments current as contacts change: every write of contacts (add, update, each
 * import batch) recomputes the rule memberships of exactly those contacts in every live segment
 * of the account, inside the writing transaction, so a welcome automation on a segment sees a
 * contact who starts (or stops) matching at its next tick. Set-based: two statements per batch
 * of contacts and per 50 segments, whatever the batch's size; nothing at all for an account
 * without segments.
 */
export function createSegmentMemberships({ fields, events }: Deps) {
  return {
    /**
     * Brings the rule memberships of the given contacts (ids, or a query of ids) up to date:
     * they leave the segments they no longer match (or whose contact type they left), and join
     * the ones they now match, unless the segment already holds their address.
     */
    async refreshContacts(ctx: Ctx, contactIds: number[] | Knex.QueryBuilder, trx: Knex.Transaction): Promise<{ joined: number; left: number }> {
      const counts = { joined: 0, left: 0 };
      if (Array.isArray(contactIds) && contactIds.length === 0) return counts;
      const segments: Record<string, unknown>[] = await trx('segments')
        .where({ user_id: ctx.userId })
        .whereNull('deleted_at')
        .orderBy('id')
        .select('id', 'contact_type_id', 'select_field', 'select_operator', 'value', 'query_type');
      if (segments.length === 0) return counts;

      const rules = segments.map(storedRules);
      const uses = (test: (name: string) => boolean) => rules.some((r) => r.fields.some(test));
      const [defs, countryOf] = await Promise.all([
        uses((name) => !BUILT_IN.has(name)) ? customFieldDefs(fields, ctx, trx) : [],
        uses((name) => name === 'country') ? loadCountryResolver(trx) : ((() => undefined) as CountryResolver),
      ]);
      const known = segmentFields(defs);
      const ids = idList(contactIds);
      const now = nowValue();

      for (let from = 0; from < segments.length; from += SEGMENTS_PER_STATEMENT) {
        const chunk = segments.slice(from, from + SEGMENTS_PER_STATEMENT).map((segment, i) => ({
          id: Number(segment.id),
          contactTypeId: Number(segment.contact_type_id),
          where: compileRules(trx, rules[from + i], known, countryOf),
        }));
        const chunkIds = chunk.map((s) => s.id);
        const inChunk = chunkIds.map(() => '?').join(', ');
        // Whether contact `c` belongs to the segment named by `column`, by that segment's own rules.
        const matches = (column: string): SqlFragment => ({
          sql: `case ${column} ${chunk.map((s) => `when ? then (c.contact_type_id = ? and ${s.where.sql})`).join(' ')} end`,
          bindings: chunk.flatMap((s) => [s.id, s.contactTypeId, ...s.where.bindings]),
        });
        const leaving = matches('sr.segment_id');
        const left = await trx.raw(
          `delete from segment_recipients where id in (
             select sr.id from segment_recipients sr left join contacts c on c.id = sr.contact_id
             where sr.source = 'rule' and sr.contact_id in (${ids.sql}) and sr.segment_id in (${inChunk})
               and not coalesce(c.email_key = sr.email_key and c.user_id = ? and c.deleted_at is null and ${leaving.sql}, false))`,
          [...ids.bindings, ...chunkIds, ctx.userId, ...leaving.bindings],
        );
        const joining = matches('s.id');
        const joined = await trx.raw(
          `insert into segment_recipients
             (user_id, segment_id, contact_id, source, first_name, last_name, email, email_key, country, state, city, address_line1, created_at, updated_at)
           select ?, s.id, c.id, 'rule', c.first_name, c.last_name, c.email, c.email_key,
             (select co.name from countries co where co.id = c.country), c.state, c.city, c.address_line1, ?, ?
           from contacts c join segments s on s.contact_type_id = c.contact_type_id
           where c.id in (${ids.sql}) and c.user_id = ? and c.deleted_at is null and s.id in (${inChunk}) and ${joining.sql}
           on conflict (segment_id, email_key) do nothing`,
          [ctx.userId, now, now, ...ids.bindings, ctx.userId, ...chunkIds, ...joining.bindings],
        );
        counts.left += affectedRows(left);
        const added = affectedRows(joined);
        counts.joined += added;
        if (added > 0 && events.hasSegmentListeners()) {
          const reached: number[] = await trx('segment_recipients')
            .distinct('segment_id')
            .whereIn('segment_id', chunkIds)
            .where({ source: 'rule', created_at: now })
            .whereIn('contact_id', contactIds)
            .pluck('segment_id');
          for (const segmentId of reached) await events.segmentJoined({ userId: ctx.userId, segmentId: Number(segmentId), joinedAt: now }, trx);
        }
      }
      return counts;
    },
  };
}

export type SegmentMemberships = ReturnType<typeof createSegmentMemberships>;

/** The contacts as the inside of `in (…)`: placeholders for ids, or the query's own SQL. */
function idList(contactIds: number[] | Knex.QueryBuilder): SqlFragment {
  if (Array.isArray(contactIds)) return { sql: contactIds.map(() => '?').join(', '), bindings: contactIds };
  const { sql, bindings } = contactIds.toSQL();
  return { sql, bindings: [...bindings] as Knex.Value[] };
}
