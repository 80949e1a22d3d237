import type { Knex } from 'knex';
import { isPostgres } from './index';

/**
 * SQL expressions that are written differently on SQLite and PostgreSQL: JSON extraction,
 * case-insensitive matching, numeric casts, JSON merge and error codes. Services and the
 * segment compiler build their queries from these, never from dialect-specific text.
 */

export type SqlFragment = { sql: string; bindings: Knex.Value[] };

/** Text of one key of a JSON object column (`custom_fields`), or NULL when absent. */
export function jsonText(db: Knex, column: string, key: string): SqlFragment {
  return isPostgres(db)
    ? { sql: `(${column} ->> ?)`, bindings: [key] }
    : { sql: `json_extract(${column}, ?)`, bindings: [`$."${key.replace(/"/g, '')}"`] };
}

/**
 * A text expression as a number. On PostgreSQL a value that is not a number becomes NULL
 * instead of failing the whole query (a field may have been re-created with another type).
 */
export function asNumber(db: Knex, text: SqlFragment): SqlFragment {
  if (isPostgres(db)) {
    return {
      // No `?` in the pattern: knex would take it for a placeholder.
      sql: `(case when ${text.sql} ~ '^\\s*-{0,1}[0-9]+(\\.[0-9]+){0,1}\\s*$' then (${text.sql})::numeric end)`,
      bindings: [...text.bindings, ...text.bindings],
    };
  }
  return { sql: `cast(${text.sql} as real)`, bindings: text.bindings };
}

/** `LIKE` that ignores case on both databases (SQLite's LIKE already does for ASCII). */
export function likeOperator(db: Knex): string {
  return isPostgres(db) ? 'ilike' : 'like';
}

/** A LIKE pattern matching `term` literally (%, _ and \ escaped; use with `escape '\'`). */
export function likePattern(term: string, where: 'exact' | 'contains' | 'starts' | 'ends'): string {
  const escaped = term.replace(/[\\%_]/g, (c) => `\\${c}`);
  if (where === 'exact') return escaped;
  if (where === 'starts') return `${escaped}%`;
  if (where === 'ends') return `%${escaped}`;
  return `%${escaped}%`;
}

/**
 * On SQLite, `idColumn in (…)` the contacts whose email or full name may contain `term`, from
 * the trigram index `contacts_search`; null on PostgreSQL (its trigram indexes serve the LIKE
 * itself) and for a term shorter than a trigram (which that index cannot find: the LIKE scans).
 * The index folds case more widely than SQLite's LIKE: its rows are candidates for the LIKE,
 * which keeps the answer exact, never the answer.
 */
export function contactSearchCandidates(db: Knex, idColumn: string, term: string): SqlFragment | null {
  const chars = [...term];
  if (isPostgres(db) || chars.length < 3) return null;
  // Every trigram of the term, each a quoted string (only a double quote needs escaping): the
  // index keeps no positions, so its answer is the contacts holding them all, anywhere.
  const trigrams = new Set(chars.slice(2).map((_, i) => `"${chars.slice(i, i + 3).join('').replace(/"/g, '""')}"`));
  return { sql: `${idColumn} in (select rowid from contacts_search where contacts_search match ?)`, bindings: [[...trigrams].join(' AND ')] };
}

/** `existing` JSON object with the keys of `incoming` laid over it (for upserts of custom fields). */
export function jsonMerge(db: Knex, existing: string, incoming: string): string {
  return isPostgres(db)
    ? `(coalesce(${existing}, '{}'::jsonb) || coalesce(${incoming}, '{}'::jsonb))`
    : `json_patch(coalesce(${existing}, '{}'), coalesce(${incoming}, '{}'))`;
}

/**
 * A list of values as a derived table `alias(value)`, from one JSON parameter however long the
 * list. Joined from, it makes the plan start at the listed rows and reach the others through
 * their indexes whatever the statistics say: PostgreSQL, planning with the stale statistics of
 * tables an import is filling, can turn `id in (…5,000 values…)` into a scan of the whole account.
 */
export function valuesTable(db: Knex, values: Array<string | number>, type: 'integer' | 'text', alias: string): SqlFragment {
  const json = JSON.stringify(values);
  return isPostgres(db)
    ? { sql: `(select value::${type} as value from json_array_elements_text(?::json)) as ${alias}`, bindings: [json] }
    : { sql: `(select value from json_each(?)) as ${alias}`, bindings: [json] };
}

/**
 * Joins the rows of `table` whose `column` equals `value` (a column of an earlier FROM item),
 * as `alias`. On PostgreSQL a LATERAL subquery fenced by OFFSET 0: one index lookup per
 * earlier row, in that order, which stale statistics cannot turn into a scan of the table
 * (with a plain join the planner may start from an index it believes selective). On SQLite a
 * CROSS JOIN, which keeps the earlier item as the outer loop (left joins always do): otherwise
 * it may scan the table and rescan a `json_each` list inside it.
 */
export function lookupJoin(db: Knex, kind: 'join' | 'left join', table: string, alias: string, column: string, value: string): string {
  if (isPostgres(db)) return `${kind} lateral (select * from ${table} where ${table}.${column} = ${value} offset 0) ${alias} on true`;
  return `${kind === 'join' ? 'cross join' : kind} ${table} ${alias} on ${alias}.${column} = ${value}`;
}

/** The domain of an address column (what follows its last `@`), to group or join by. */
export function emailDomain(db: Knex, column: string): Knex.Raw {
  return isPostgres(db)
    ? db.raw(`substring(?? from '@([^@]*)$')`, [column])
    : db.raw(`substr(??, instr(??, '@') + 1)`, [column, column]);
}
