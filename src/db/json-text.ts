import type { Knex } from 'knex';
import { isPostgres } from './index';

/**
 * SQL that writes a row's JSON text in the database, byte for byte as `JSON.stringify` writes
 * the value Node makes of the same columns, so a long list is read as text and never as one
 * object per row. Where the database cannot promise the same bytes (a timestamp not
 * stored as the app writes it, a custom value that is not a string, JSON escapes it would
 * decode differently) the row's text is NULL, and the caller writes that row in Node instead.
 *
 * A row is described as its keys and what each holds (`JsonValue`); each database writes the
 * description its own way: SQLite with one `json_object` (its C writer, the same quoting as
 * `json_quote`) under the conditions that make it exact, PostgreSQL by joining each value's
 * JSON text with `||` (NULL carries through).
 *
 * Expressions are plain SQL text without bindings: column names come from code, keys are
 * JSON-quoted SQL literals (field names are [A-Za-z0-9_]), so a list's statement text is the
 * same on every request and stays prepared.
 */
export type JsonValue =
  /** An integer column as a JSON number. */
  | { kind: 'number'; column: string }
  /** A text column as a JSON string; `text` writes NULL as `""`, `nullableText` as `null`, `requiredText` falls back. */
  | { kind: 'text' | 'nullableText' | 'requiredText'; column: string }
  /** A timestamp as `"2026-11-22T09:15:03.123000Z"` (lib/time `timestamp`), NULL or empty as `null`. */
  | { kind: 'timestamp'; column: string }
  /** `fullName`: both texts trimmed as JavaScript trims, the non-empty ones joined by a space. */
  | { kind: 'fullName'; first: string; last: string }
  /** The constant `null`. */
  | { kind: 'null' }
  /**
   * The JSON object column's keys `names`, in that order, each as
   * `{"field_name":name,"field_value":string or null}`; `null` when there are none.
   */
  | { kind: 'customFields'; column: string; names: string[] }
  /** JSON text written by another part of the statement (NULL falls back). In SQLite only as the last key. */
  | { kind: 'written'; sql: string };

export const json = {
  number: (column: string): JsonValue => ({ kind: 'number', column }),
  text: (column: string): JsonValue => ({ kind: 'text', column }),
  nullableText: (column: string): JsonValue => ({ kind: 'nullableText', column }),
  requiredText: (column: string): JsonValue => ({ kind: 'requiredText', column }),
  timestamp: (column: string): JsonValue => ({ kind: 'timestamp', column }),
  fullName: (first: string, last: string): JsonValue => ({ kind: 'fullName', first, last }),
  null: (): JsonValue => ({ kind: 'null' }),
  customFields: (column: string, names: string[]): JsonValue => ({ kind: 'customFields', column, names }),
  written: (sql: string): JsonValue => ({ kind: 'written', sql }),
};

export interface JsonTextSql {
  /** `{"key":value,...}` in the given order, or NULL where the database cannot write it exactly. */
  object(entries: Array<[key: string, value: JsonValue]>): string;
  /** The rows' texts joined with commas in descending `id` order (an aggregate): UTF-8 bytes in SQLite, text in PostgreSQL. */
  joined(json: string, id: string): string;
}

/** What `String.prototype.trim` removes: WhiteSpace and LineTerminator of ECMA-262. */
const JS_WHITESPACE = '\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff';

/** A SQL string literal; knex would read `?` as a placeholder, so none may occur. */
function literal(text: string): string {
  if (text.includes('?')) throw new Error(`no '?' in JSON text literals: ${text}`);
  return `'${text.replace(/'/g, "''")}'`;
}

/** Each name trimmed once: the outer trim (spaces only) takes off the separator when one side is empty, and nothing else. */
function trimmedFullName(first: string, last: string, trim: 'trim' | 'btrim'): string {
  const side = (c: string) => `${trim}(coalesce(${c}, ''), ${literal(JS_WHITESPACE)})`;
  return `${trim}(${side(first)} || ' ' || ${side(last)}, ' ')`;
}

const SQLITE_ISO = "'[0-9][0-9][0-9][0-9]-[01][0-9]-[0-3][0-9]T[0-2][0-9]:[0-5][0-9]:[0-5][0-9].[0-9][0-9][0-9]Z'";

/** A JSON path to one key of an object ("$." and the key quoted). */
const sqlitePath = (key: string) => literal(`$."${key}"`);

/**
 * SQLite: the value `json_object` writes for each key, and the condition under which that is
 * what JSON.stringify would write. Text is quoted by json_object as json_quote quotes it;
 * an argument that is itself a json_object is written as JSON, not as a string.
 */
function sqliteValue(value: Exclude<JsonValue, { kind: 'written' }>): { sql: string; when?: string } {
  switch (value.kind) {
    case 'number':
      return { sql: value.column, when: `typeof(${value.column}) = 'integer'` };
    case 'text':
      return { sql: `coalesce(${value.column}, '')`, when: `typeof(${value.column}) in ('text', 'null')` };
    case 'nullableText':
      return { sql: value.column, when: `typeof(${value.column}) in ('text', 'null')` };
    case 'requiredText':
      return { sql: value.column, when: `typeof(${value.column}) = 'text'` };
    case 'timestamp': {
      // Only what nowValue() stores (toISOString of years 0–9999) is rewritten here; lib/time
      // parses anything else with Date, so those rows go to Node.
      const c = value.column;
      return {
        sql: `nullif(substr(${c}, 1, 23), '') || '000Z'`,
        when:
          `(${c} is null or ${c} = '' or (typeof(${c}) = 'text' and ${c} glob ${SQLITE_ISO}` +
          ` and substr(${c}, 6, 2) between '01' and '12' and substr(${c}, 9, 2) between '01' and '31' and substr(${c}, 12, 2) <= '23'))`,
      };
    }
    case 'fullName':
      return { sql: trimmedFullName(value.first, value.last, 'trim') };
    case 'null':
      return { sql: 'null' };
    case 'customFields': {
      const c = value.column;
      if (value.names.length === 0) return { sql: 'null' };
      // Text that is an object in strict JSON (what JSON.parse reads alike) and holds no \u
      // escape: SQLite decodes a lone surrogate escape into bytes that are not UTF-8, JSON.parse
      // into a string that JSON.stringify escapes again. Each value a string, null or absent.
      const readable = `(${c} is null or (typeof(${c}) = 'text' and json_valid(${c}) and json_type(${c}) = 'object' and instr(${c}, '\\u') = 0))`;
      const strings = value.names.map((name) => `coalesce(json_type(${c}, ${sqlitePath(name)}), 'null') in ('null', 'text')`);
      const fields = value.names.map(
        (name) => `${literal(name)}, json_object('field_name', ${literal(name)}, 'field_value', json_extract(${c}, ${sqlitePath(name)}))`,
      );
      // CASE, so that no key is looked up in text that is not JSON (json_type would fail on it).
      return { sql: `json_object(${fields.join(', ')})`, when: `(case when ${readable} then ${strings.join(' and ')} else 0 end)` };
    }
  }
}

function sqliteObject(entries: Array<[key: string, value: JsonValue]>): string {
  const last = entries[entries.length - 1];
  // JSON text from elsewhere in the statement goes after the object json_object wrote, in
  // place of its closing brace: json_object would quote it as a string.
  const tail = last?.[1].kind === 'written' ? (last as [string, { kind: 'written'; sql: string }]) : undefined;
  const written = tail ? entries.slice(0, -1) : entries;
  const conditions: string[] = [];
  const args: string[] = [];
  for (const [key, value] of written) {
    if (value.kind === 'written') throw new Error(`JSON text from the statement only as the last key in SQLite: ${key}`);
    const { sql, when } = sqliteValue(value);
    if (when) conditions.push(when);
    args.push(literal(key), sql);
  }
  let object = `json_object(${args.join(', ')})`;
  if (tail) {
    const before = written[written.length - 1]?.[1].kind;
    // rtrim takes off only the closing brace when the value before it is no object.
    if (before === undefined || before === 'customFields') throw new Error(`JSON text from the statement must follow a scalar key in SQLite: ${tail[0]}`);
    object = `rtrim(${object}, '}') || ${literal(`,${JSON.stringify(tail[0])}:`)} || ${tail[1].sql} || '}'`;
  }
  return conditions.length === 0 ? `(${object})` : `(case when ${conditions.join(' and ')} then ${object} end)`;
}

const sqlite: JsonTextSql = {
  object: sqliteObject,
  // As a blob: better-sqlite3 hands over the UTF-8 bytes as a Buffer, which the response
  // writes as they are, instead of decoding them into a string that is encoded again.
  joined: (text, id) => `cast(group_concat(${text}, ',' order by ${id} desc) as blob)`,
};

/** PostgreSQL: each value's JSON text, NULL where it cannot be written exactly. */
function postgresValue(value: JsonValue): string {
  switch (value.kind) {
    case 'number':
      return `(${value.column})::text`;
    case 'text':
      return `to_json(coalesce(${value.column}, '')::text)::text`;
    case 'nullableText':
      return `coalesce(to_json((${value.column})::text)::text, 'null')`;
    case 'requiredText':
      return `to_json((${value.column})::text)::text`;
    case 'timestamp': {
      // pg reads timestamptz into a Date (microseconds cut to milliseconds), lib/time writes its
      // ISO text; to_char's MS cuts the same way. Years outside 1000–9999 go to Node.
      const c = value.column;
      return (
        `(case when ${c} is null then 'null' when ${c} >= '1000-01-01T00:00:00Z' and ${c} < '10000-01-01T00:00:00Z'` +
        ` then '"' || to_char(${c} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS') || '000Z"' end)`
      );
    }
    case 'fullName':
      return `to_json(${trimmedFullName(value.first, value.last, 'btrim')})::text`;
    case 'null':
      return `'null'::text`;
    case 'customFields': {
      const c = value.column;
      if (value.names.length === 0) return `'null'::text`;
      const fields = postgresObject(
        value.names.map((name) => {
          const k = literal(name);
          const field = `(case coalesce(jsonb_typeof(${c} -> ${k}), 'null') when 'null' then 'null' when 'string' then to_json(${c} ->> ${k})::text end)`;
          return [name, json.written(postgresObject([['field_name', json.written(`${literal(JSON.stringify(name))}::text`)], ['field_value', json.written(field)]]))];
        }),
      );
      return `(case when ${c} is null or jsonb_typeof(${c}) = 'object' then ${fields} end)`;
    }
    case 'written':
      return value.sql;
  }
}

function postgresObject(entries: Array<[key: string, value: JsonValue]>): string {
  if (entries.length === 0) return `'{}'::text`;
  const parts = entries.map(([key, value], i) => `${literal(`${i === 0 ? '{' : ','}${JSON.stringify(key)}:`)} || ${postgresValue(value)}`);
  return `(${parts.join(' || ')} || '}')`;
}

const postgres: JsonTextSql = {
  object: postgresObject,
  joined: (text, id) => `string_agg(${text}, ',' order by ${id} desc)`,
};

export function jsonTextSql(db: Knex): JsonTextSql {
  return isPostgres(db) ? postgres : sqlite;
}
