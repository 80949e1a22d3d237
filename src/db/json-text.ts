import type { Knex } from 'knex';
import { isPostgres } from './index';

/**
 * SQL that writes a row's JSON text in the database, byte for byte as `JSON.stringify` writes
 * the value Node makes of the same columns, so a long list is read as text and never as one
 * object per row (issue 15). Where the database cannot promise the same bytes (a timestamp not
 * stored as the app writes it, a custom value that is not a string, JSON escapes it would
 * decode differently) the expression is NULL; `||` carries NULL through, so the whole row's
 * text is NULL and the caller writes that row in Node instead.
 *
 * Expressions are plain SQL text without bindings: column names come from code, keys are
 * JSON-quoted SQL literals (field names are [A-Za-z0-9_]), so a list's statement text is the
 * same on every request and stays prepared.
 */
export interface JsonTextSql {
  /** An integer column as a JSON number. */
  number(column: string): string;
  /** A text column as a JSON string, NULL as `""` (the list shows empty strings). */
  text(column: string): string;
  /** A text column as a JSON string, NULL as `null`. */
  nullableText(column: string): string;
  /** A text column that is never NULL as a JSON string (NULL falls back to Node). */
  requiredText(column: string): string;
  /** A timestamp as `"2026-11-22T09:15:03.123000Z"` (lib/time `timestamp`), NULL as `null`. */
  timestamp(column: string): string;
  /** `fullName`: both texts trimmed as JavaScript trims, the non-empty ones joined by a space. */
  fullName(first: string, last: string): string;
  /** The condition under which `customValue` can read the JSON object column at all. */
  customFieldsReadable(column: string): string;
  /** One key of the JSON object column as a JSON string, absent or null as `null`. */
  customValue(column: string, key: string): string;
  /** `{"key":value,...}` in the given order from JSON texts. */
  object(entries: Array<[key: string, json: string]>): string;
  /** A constant JSON value (already JSON text). */
  constant(json: string): string;
  /** `json` when `condition` holds, else NULL. */
  when(condition: string, json: string): string;
  /** The rows' texts joined with commas in descending `id` order (an aggregate). */
  joined(json: string, id: string): string;
}

/** What `String.prototype.trim` removes: WhiteSpace and LineTerminator of ECMA-262. */
const JS_WHITESPACE = '\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff';

/** A SQL string literal; knex would read `?` as a placeholder, so none may occur. */
function literal(text: string): string {
  if (text.includes('?')) throw new Error(`no '?' in JSON text literals: ${text}`);
  return `'${text.replace(/'/g, "''")}'`;
}

const SQLITE_ISO = "'[0-9][0-9][0-9][0-9]-[01][0-9]-[0-3][0-9]T[0-2][0-9]:[0-5][0-9]:[0-5][0-9].[0-9][0-9][0-9]Z'";

const sqlite: JsonTextSql = {
  number: (c) => `(case when typeof(${c}) = 'integer' then ${c} end)`,
  text: (c) => `(case when typeof(${c}) = 'text' then json_quote(${c}) when ${c} is null then '""' end)`,
  nullableText: (c) => `(case when typeof(${c}) = 'text' then json_quote(${c}) when ${c} is null then 'null' end)`,
  requiredText: (c) => `(case when typeof(${c}) = 'text' then json_quote(${c}) end)`,
  // Only what nowValue() stores (toISOString of years 0–9999) is rewritten here; lib/time
  // parses anything else with Date, so those rows go to Node.
  timestamp: (c) =>
    `(case when ${c} is null or ${c} = '' then 'null' when typeof(${c}) = 'text' and ${c} glob ${SQLITE_ISO}` +
    ` and substr(${c}, 6, 2) between '01' and '12' and substr(${c}, 9, 2) between '01' and '31' and substr(${c}, 12, 2) <= '23'` +
    ` then '"' || substr(${c}, 1, 23) || '000Z"' end)`,
  fullName: (first, last) => fullName(`trim(coalesce(${first}, ''), ${literal(JS_WHITESPACE)})`, `trim(coalesce(${last}, ''), ${literal(JS_WHITESPACE)})`, 'json_quote'),
  // Text that is an object in strict JSON (what JSON.parse reads alike) and holds no \u escape:
  // SQLite decodes a lone surrogate escape into bytes that are not UTF-8, JSON.parse into a
  // string that JSON.stringify escapes again.
  customFieldsReadable: (c) =>
    `(${c} is null or (typeof(${c}) = 'text' and json_valid(${c}) and json_type(${c}) = 'object' and instr(${c}, '\\u') = 0))`,
  customValue: (c, key) => {
    const path = literal(`$."${key}"`);
    return `(case coalesce(json_type(${c}, ${path}), 'null') when 'null' then 'null' when 'text' then json_quote(json_extract(${c}, ${path})) end)`;
  },
  object,
  constant: literal,
  when: (condition, json) => `(case when ${condition} then ${json} end)`,
  joined: (json, id) => `group_concat(${json}, ',' order by ${id} desc)`,
};

const postgres: JsonTextSql = {
  number: (c) => `(${c})::text`,
  text: (c) => `to_json(coalesce(${c}, '')::text)::text`,
  nullableText: (c) => `coalesce(to_json((${c})::text)::text, 'null')`,
  requiredText: (c) => `to_json((${c})::text)::text`,
  // pg reads timestamptz into a Date (microseconds cut to milliseconds), lib/time writes its
  // ISO text; to_char's MS cuts the same way. Years outside 1000–9999 go to Node.
  timestamp: (c) =>
    `(case when ${c} is null then 'null' when ${c} >= '1000-01-01T00:00:00Z' and ${c} < '10000-01-01T00:00:00Z'` +
    ` then '"' || to_char(${c} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS') || '000Z"' end)`,
  fullName: (first, last) => fullName(`btrim(coalesce(${first}, ''), ${literal(JS_WHITESPACE)})`, `btrim(coalesce(${last}, ''), ${literal(JS_WHITESPACE)})`, 'pg'),
  customFieldsReadable: (c) => `(${c} is null or jsonb_typeof(${c}) = 'object')`,
  customValue: (c, key) => {
    const k = literal(key);
    return `(case coalesce(jsonb_typeof(${c} -> ${k}), 'null') when 'null' then 'null' when 'string' then to_json(${c} ->> ${k})::text end)`;
  },
  object,
  constant: (json) => `${literal(json)}::text`,
  when: (condition, json) => `(case when ${condition} then ${json} end)`,
  joined: (json, id) => `string_agg(${json}, ',' order by ${id} desc)`,
};

/**
 * Each name trimmed once: the outer trim (spaces only) takes off the separator when one side
 * is empty, and nothing else, since neither trimmed side begins or ends with a space.
 */
function fullName(first: string, last: string, quote: 'json_quote' | 'pg'): string {
  const joined = `${first} || ' ' || ${last}`;
  return quote === 'json_quote' ? `json_quote(trim(${joined}, ' '))` : `to_json(btrim(${joined}, ' '))::text`;
}

function object(entries: Array<[key: string, json: string]>): string {
  if (entries.length === 0) return literal('{}');
  const parts = entries.map(([key, json], i) => `${literal(`${i === 0 ? '{' : ','}${JSON.stringify(key)}:`)} || ${json}`);
  return `(${parts.join(' || ')} || '}')`;
}

export function jsonTextSql(db: Knex): JsonTextSql {
  return isPostgres(db) ? postgres : sqlite;
}
