import type { Knex } from 'knex';
import { isPostgres } from '../../db';
import { asNumber, jsonText, likeOperator, likePattern, SqlFragment } from '../../db/expressions';
import { LIMITS, MESSAGE_KIND, RESERVED_FIELD_NAMES, SEGMENT_ENGAGEMENT, SEGMENT_OPERATORS, SEGMENT_QUERY_TYPES, SEGMENT_RELATIVE_DAYS, SegmentFieldKind } from '../../lib/constants';
import { FieldErrors } from '../../lib/errors';
import { minuteText, parseLocalDateTime } from '../../lib/local-datetime';
import { isScalar, messages, throwIfAny } from '../../lib/validation';
import type { CountryResolver } from '../reference/country-lookup';
import { CustomFieldDef, DECIMAL } from './custom-field-values';

/**
 * Segment conditions (docs/segments.md, "What the rules mean"): parallel arrays of fields and operators,
 * values taken from `value[]` in order, joined by `query_type`. They are checked when a
 * segment is saved and compiled into one SQL condition over the contacts table (alias `c`),
 * so a refresh is a single set-based statement on either database.
 */

export interface SegmentRules {
  fields: string[];
  operators: string[];
  values: string[];
  queryType: (typeof SEGMENT_QUERY_TYPES)[number];
}

/** What a segment can filter on: the contact's columns, `created_at`, and the account's custom fields. */
export type SegmentField =
  | { kind: 'text'; column: string }
  | { kind: 'text'; country: true }
  | { kind: 'date'; column: 'created_at' }
  | { kind: 'engagement' }
  | { kind: Exclude<SegmentFieldKind, 'engagement'>; custom: CustomFieldDef };

export function segmentFields(defs: CustomFieldDef[]): Map<string, SegmentField> {
  const fields = new Map<string, SegmentField>();
  for (const name of RESERVED_FIELD_NAMES) fields.set(name, name === 'country' ? { kind: 'text', country: true } : { kind: 'text', column: name });
  fields.set('created_at', { kind: 'date', column: 'created_at' });
  for (const def of defs) {
    const kind: Exclude<SegmentFieldKind, 'engagement'> = def.field_type === 'number' ? 'number' : def.field_type === 'datetime-local' ? 'date' : 'text';
    fields.set(def.field_name, { kind, custom: def });
  }
  // Last: the engagement conditions keep their name even beside a custom field called so.
  fields.set(SEGMENT_ENGAGEMENT.field, { kind: 'engagement' });
  return fields;
}

/** Operators whose meaning moves with the clock or with sends, opens and clicks. */
export const MOVING_OPERATORS: readonly string[] = ['in the last', 'more than ago', ...SEGMENT_OPERATORS.engagement];

/** True when the rules depend on the time they are evaluated at or on engagement. */
export const rulesMove = (rules: Pick<SegmentRules, 'operators'>) => rules.operators.some((op) => MOVING_OPERATORS.includes(op));

/** What compiling needs besides the rules: when "now" is, for the relative dates. */
export interface RuleContext {
  userId: number;
  now: Date;
}

/** Values an operator takes: two for a range, none for the emptiness tests. */
export function arity(operator: string): number {
  if (operator === 'is between') return 2;
  return operator === 'is empty' || operator === 'is not empty' ? 0 : 1;
}

/** A value as text; anything but one value (an object from a nested key) is no text. */
const text = (v: unknown) => (isScalar(v) ? String(v).trim() : '');

/** Checks the arrays against the account's fields; every problem is reported at once. */
export function checkRules(
  input: { fields: unknown[]; operators: unknown[]; values: unknown[]; queryType: unknown },
  fields: Map<string, SegmentField>,
  countryOf: CountryResolver,
): SegmentRules {
  const errors: FieldErrors = {};
  const queryType = text(input.queryType).toLowerCase() || 'and';
  if (!(SEGMENT_QUERY_TYPES as readonly string[]).includes(queryType)) errors.query_type = [messages.selected('query_type')];
  if (input.operators.length !== input.fields.length) {
    errors.select_operator = [`The select operator must contain ${input.fields.length} items.`];
  }
  const names = input.fields.map(text);
  const operators = input.operators.map((o) => text(o).toLowerCase());
  const values = input.values.map(text);
  const wanted = operators.reduce((sum, op) => sum + arity(op), 0);
  if (!errors.select_operator && values.length !== wanted) errors.value = [`The value must contain ${wanted} items.`];

  let next = 0;
  names.forEach((name, i) => {
    const field = fields.get(name);
    const operator = operators[i] ?? '';
    if (!field) errors[`select_field.${i}`] = [messages.selected(`select_field.${i}`)];
    if (field && i < operators.length && !(SEGMENT_OPERATORS[field.kind] as readonly string[]).includes(operator)) {
      errors[`select_operator.${i}`] = [messages.selected(`select_operator.${i}`)];
    }
    for (let k = 0; k < arity(operator); k += 1, next += 1) {
      const at = `value.${next}`;
      if (!field || next >= values.length) continue;
      const problem = valueProblem(field, operator, values[next], at, countryOf);
      if (problem) errors[at] = [problem];
    }
  });
  throwIfAny(errors);
  return { fields: names, operators, values, queryType: queryType as SegmentRules['queryType'] };
}

function valueProblem(field: SegmentField, operator: string, value: string, at: string, countryOf: CountryResolver): string | undefined {
  if (value === '') return messages.required(at);
  if (operator === 'in the last' || operator === 'more than ago') {
    const days = Number(value);
    if (!/^\d+$/.test(value)) return messages.integer(at);
    return days < SEGMENT_RELATIVE_DAYS.min || days > SEGMENT_RELATIVE_DAYS.max ? messages.between(at, SEGMENT_RELATIVE_DAYS.min, SEGMENT_RELATIVE_DAYS.max) : undefined;
  }
  // A send's utr is checked against the account by the segments service (it needs the database).
  if (field.kind === 'engagement') return value.length > 64 ? messages.selected(at) : undefined;
  if (field.kind === 'number' && !DECIMAL.test(value)) return messages.numeric(at);
  if (field.kind === 'date' && !parseLocalDateTime(value)) return messages.date(at);
  if (field.kind === 'text' && value.length > LIMITS.string) return messages.max(at, LIMITS.string);
  if ('country' in field && (operator === 'is' || operator === 'is not') && countryOf(value) === undefined) return messages.selected(at);
  return undefined;
}

/** The SQL condition of the rules over `contacts c`; empty rules match every contact. */
export function compileRules(db: Knex, rules: SegmentRules, fields: Map<string, SegmentField>, countryOf: CountryResolver, at: RuleContext): SqlFragment {
  const parts: SqlFragment[] = [];
  let next = 0;
  rules.fields.forEach((name, i) => {
    const operator = rules.operators[i];
    const values = rules.values.slice(next, next + arity(operator));
    next += arity(operator);
    const field = fields.get(name);
    // A field deleted since the segment was saved matches nothing rather than everything.
    parts.push(field ? condition(db, field, operator, values, countryOf, at) : { sql: '1 = 0', bindings: [] });
  });
  if (parts.length === 0) return { sql: '1 = 1', bindings: [] };
  const joiner = rules.queryType === 'or' ? ' or ' : ' and ';
  return { sql: `(${parts.map((p) => `(${p.sql})`).join(joiner)})`, bindings: parts.flatMap((p) => p.bindings) };
}

function condition(db: Knex, field: SegmentField, operator: string, values: string[], countryOf: CountryResolver, at: RuleContext): SqlFragment {
  if ('country' in field) return countryCondition(db, operator, values[0], countryOf);
  if (field.kind === 'engagement') return engagementCondition(operator, values[0], at);
  if (operator === 'in the last' || operator === 'more than ago') return relativeDateCondition(db, field, operator, Number(values[0]), at.now);
  if (field.kind === 'text') {
    if ('custom' in field) {
      const expr = jsonText(db, 'c.custom_fields', field.custom.field_name);
      return textCondition(db, { sql: `coalesce(${expr.sql}, '')`, bindings: expr.bindings }, operator, values[0]);
    }
    // Written so that the column's index can serve it (PostgreSQL): a column that cannot be null
    // bare, the email as ILIKE (its trigram index serves that), the others as the lower() LIKE
    // that ILIKE computes, which a btree over lower(column) serves (the city has one).
    if (NULLABLE_COLUMNS.has(field.column)) return textCondition(db, { sql: `coalesce(c.${field.column}, '')`, bindings: [] }, operator, values[0]);
    const lowered = isPostgres(db) && field.column !== 'email';
    return textCondition(db, { sql: lowered ? `lower(c.${field.column})` : `c.${field.column}`, bindings: [] }, operator, values[0], lowered);
  }
  if (field.kind === 'number') {
    const expr = asNumber(db, jsonText(db, 'c.custom_fields', (field as { custom: CustomFieldDef }).custom.field_name));
    return numberCondition(expr, operator, values.map(Number));
  }
  return dateCondition(db, field, operator, values);
}

/** The contact columns a text rule may find null (the others default to ''). */
const NULLABLE_COLUMNS = new Set(['alt_email']);

/** `lowered`: `expr` is lower() of the text, matched by `like lower(pattern)` (PostgreSQL). */
function textCondition(db: Knex, expr: SqlFragment, operator: string, value = '', lowered = false): SqlFragment {
  const like = lowered ? 'like' : likeOperator(db);
  const match = (where: 'exact' | 'contains' | 'starts' | 'ends', negate = false): SqlFragment => ({
    sql: `${expr.sql} ${negate ? 'not ' : ''}${like} ${lowered ? 'lower(?)' : '?'} escape '\\'`,
    bindings: [...expr.bindings, likePattern(value, where)],
  });
  switch (operator) {
    case 'is':
      return match('exact');
    case 'is not':
      return match('exact', true);
    case 'contains':
      return match('contains');
    case 'does not contain':
      return match('contains', true);
    case 'starts with':
      return match('starts');
    case 'ends with':
      return match('ends');
    case 'is empty':
      return { sql: `${expr.sql} = ''`, bindings: expr.bindings };
    default:
      return { sql: `${expr.sql} <> ''`, bindings: expr.bindings };
  }
}

/** Countries are stored as ids: exact tests compare ids, pattern tests look names up once. */
function countryCondition(db: Knex, operator: string, value: string | undefined, countryOf: CountryResolver): SqlFragment {
  const like = likeOperator(db);
  const named = (where: 'contains' | 'starts' | 'ends'): SqlFragment => ({
    sql: `c.country in (select id from countries where name ${like} ? escape '\\')`,
    bindings: [likePattern(value ?? '', where)],
  });
  switch (operator) {
    case 'is':
      return { sql: 'c.country = ?', bindings: [countryOf(value ?? '') ?? 0] };
    case 'is not':
      return { sql: '(c.country is null or c.country <> ?)', bindings: [countryOf(value ?? '') ?? 0] };
    case 'contains':
      return named('contains');
    case 'does not contain': {
      const inner = named('contains');
      return { sql: `(c.country is null or not ${inner.sql})`, bindings: inner.bindings };
    }
    case 'starts with':
      return named('starts');
    case 'ends with':
      return named('ends');
    case 'is empty':
      return { sql: 'c.country is null', bindings: [] };
    default:
      return { sql: 'c.country is not null', bindings: [] };
  }
}

function numberCondition(expr: SqlFragment, operator: string, values: number[]): SqlFragment {
  const [a, b] = values;
  switch (operator) {
    case 'is':
      return { sql: `${expr.sql} = ?`, bindings: [...expr.bindings, a] };
    case 'is not':
      return { sql: `(${expr.sql} is null or ${expr.sql} <> ?)`, bindings: [...expr.bindings, ...expr.bindings, a] };
    case 'greater than':
      return { sql: `${expr.sql} > ?`, bindings: [...expr.bindings, a] };
    case 'less than':
      return { sql: `${expr.sql} < ?`, bindings: [...expr.bindings, a] };
    default:
      return { sql: `${expr.sql} between ? and ?`, bindings: [...expr.bindings, Math.min(a, b), Math.max(a, b)] };
  }
}

/**
 * A date names a span (a day, a minute or a second, as precise as it is written): `is` is
 * inside it, `is before` before its start, `is after` after its end, `is between` from the
 * first's start to the second's end. `created_at` compares instants; custom datetime values
 * are `YYYY-MM-DDTHH:MM` text, compared as text against whole minutes.
 */
function dateCondition(db: Knex, field: SegmentField, operator: string, values: string[]): SqlFragment {
  const spans = values.map((v) => parseLocalDateTime(v)!).sort((x, y) => x.start.getTime() - y.start.getTime());
  const custom = 'custom' in field;
  const expr = custom ? jsonText(db, 'c.custom_fields', field.custom.field_name) : { sql: 'c.created_at', bindings: [] };
  const bound = (date: Date, round: 'down' | 'up') => (custom ? minuteText(date, round) : date.toISOString());
  const from = bound(spans[0].start, 'down');
  const to = bound(spans[spans.length - 1].end, 'up');
  switch (operator) {
    case 'is before':
      return { sql: `${expr.sql} < ?`, bindings: [...expr.bindings, from] };
    case 'is after':
      return { sql: `${expr.sql} >= ?`, bindings: [...expr.bindings, to] };
    default:
      return { sql: `(${expr.sql} >= ? and ${expr.sql} < ?)`, bindings: [...expr.bindings, from, ...expr.bindings, to] };
  }
}

const DAY_MS = 86_400_000;

/**
 * `in the last N days`: from N days before now up to now (a date field may hold future dates,
 * which are not "in the last"); `more than N days ago`: before N days before now. "Now" is
 * when the rules are evaluated (a count, a refresh before a send), so the segment rolls forward.
 */
function relativeDateCondition(db: Knex, field: SegmentField, operator: string, days: number, now: Date): SqlFragment {
  const custom = 'custom' in field;
  const expr = custom ? jsonText(db, 'c.custom_fields', field.custom.field_name) : { sql: 'c.created_at', bindings: [] };
  const since = new Date(now.getTime() - days * DAY_MS);
  const bound = (date: Date) => (custom ? minuteText(date, 'down') : date.toISOString());
  if (operator === 'more than ago') return { sql: `${expr.sql} < ?`, bindings: [...expr.bindings, bound(since)] };
  return { sql: `(${expr.sql} >= ? and ${expr.sql} <= ?)`, bindings: [...expr.bindings, bound(since), ...expr.bindings, custom ? minuteText(now, 'up') : now.toISOString()] };
}

/**
 * Engagement with the account's sends, read from the send ledger by the contact's address:
 * one send (its utr) or any single send or automation step (`any`; system mail never counts).
 * `not opened` and `not clicked` mean sent and not opened (or clicked), so a contact never
 * mailed is in neither. Opens are first opens of any kind, as the reports' unique opens.
 */
function engagementCondition(operator: string, send: string | undefined, at: RuleContext): SqlFragment {
  const one = send !== undefined && send !== SEGMENT_ENGAGEMENT.anySend;
  const scope: SqlFragment = one
    ? { sql: 'm.single_send_id = (select ss.id from single_sends ss where ss.utr = ? and ss.user_id = ?)', bindings: [send, at.userId] }
    : { sql: 'm.user_id = ? and m.kind <> ?', bindings: [at.userId, MESSAGE_KIND.system] };
  const exists = (test: string): SqlFragment => ({
    sql: `exists (select 1 from send_messages m where ${scope.sql} and m.email_key = c.email_key and ${test})`,
    bindings: [...scope.bindings],
  });
  const sent = exists('m.sent_at is not null');
  const both = (a: SqlFragment, negate: SqlFragment): SqlFragment => ({ sql: `(${a.sql} and not ${negate.sql})`, bindings: [...a.bindings, ...negate.bindings] });
  switch (operator) {
    case 'opened':
      return exists('m.opened_at is not null');
    case 'clicked':
      return exists('m.clicked_at is not null');
    case 'not opened':
      return both(sent, exists('m.opened_at is not null'));
    case 'not clicked':
      return both(sent, exists('m.clicked_at is not null'));
    default:
      return sent;
  }
}
