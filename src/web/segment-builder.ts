import { SEGMENT_OPERATORS } from '../lib/constants';
import { asArray } from '../lib/http';
import type { CustomFieldDef } from '../services/audience/custom-field-values';
import type { SegmentRecord } from '../services/audience/segment-records';
import { arity, segmentFields } from '../services/audience/segment-rules';
import type { SegmentInput } from '../services/audience/segments';

/**
 * The condition builder's form shape. Each condition posts `cond[i][field]`,
 * `cond[i][operator]`, `cond[i][value]` and `cond[i][value2]`, so that changing one
 * operator cannot shift the values of the others; here they become the service's parallel
 * arrays (`value[]` in order, as many as each operator takes), and the service's messages
 * (`select_field.2`, `value.3`) find their condition again.
 */
export interface Condition {
  field: string;
  operator: string;
  values: string[];
}

const text = (v: unknown) => (typeof v === 'string' ? v : '');

export function conditionsOf(source: Record<string, unknown>): Condition[] {
  return asArray(source.cond).map((raw) => {
    const c = (raw && typeof raw === 'object' ? raw : {}) as Record<string, unknown>;
    return { field: text(c.field), operator: text(c.operator), values: [text(c.value), text(c.value2)] };
  });
}

/** The stored rules of a segment as conditions. */
export function conditionsOfSegment(segment: SegmentRecord): Condition[] {
  let next = 0;
  return segment.select_field.map((field, i) => {
    const operator = segment.select_operator[i] ?? '';
    const values = segment.value.slice(next, next + arity(operator));
    next += arity(operator);
    return { field, operator, values: [values[0] ?? '', values[1] ?? ''] };
  });
}

export function segmentInputOf(source: Record<string, unknown>, conditions: Condition[]): SegmentInput {
  return {
    segment_name: text(source.segment_name),
    contact_type_id: Number(source.contact_type_id) || 0,
    query_type: source.query_type,
    select_field: conditions.map((c) => c.field),
    select_operator: conditions.map((c) => c.operator),
    value: conditions.flatMap((c) => c.values.slice(0, arity(c.operator))),
  };
}

/** A field the builder offers, with the operators of its type. */
export interface FieldChoice {
  name: string;
  kind: string;
  custom: boolean;
  operators: readonly string[];
}

export function fieldChoices(defs: CustomFieldDef[]): FieldChoice[] {
  return [...segmentFields(defs)].map(([name, field]) => ({ name, kind: field.kind, custom: 'custom' in field, operators: SEGMENT_OPERATORS[field.kind] }));
}

/**
 * What the builder renders for each condition: the operators its field allows (an operator
 * the field does not have falls back to the first), how many values it takes, and the keys
 * of the service's messages about it.
 */
export function presentConditions(conditions: Condition[], choices: FieldChoice[]) {
  const byName = new Map(choices.map((c) => [c.name, c]));
  let next = 0;
  return conditions.map((c, i) => {
    const choice = byName.get(c.field) ?? choices[0];
    const operator = choice.operators.includes(c.operator) ? c.operator : choice.operators[0];
    const count = arity(operator);
    const valueKeys = Array.from({ length: count }, (_, k) => `value.${next + k}`);
    next += count;
    return { index: i, field: choice.name, kind: choice.kind, operators: choice.operators, operator, values: c.values.slice(0, count), valueKeys, fieldKey: `select_field.${i}`, operatorKey: `select_operator.${i}` };
  });
}

/** The builder after an "add condition" or "remove" click. */
export function edited(conditions: Condition[], query: Record<string, unknown>, choices: FieldChoice[]): Condition[] {
  const out = [...conditions];
  const remove = Number(query.remove);
  if (query.remove !== undefined && Number.isInteger(remove)) out.splice(remove, 1);
  if (query.add !== undefined) out.push({ field: choices[0]?.name ?? '', operator: '', values: ['', ''] });
  return out;
}

/** The stored conditions in words: `email contains “acme” and age is between “18” and “30”`. */
export function describeRules(segment: SegmentRecord): string {
  const conditions = conditionsOfSegment(segment);
  if (conditions.length === 0) return 'every contact of the type';
  const joiner = ` ${segment.query_type === 'or' ? 'or' : 'and'} `;
  return conditions
    .map((c) => [c.field, c.operator, c.values.slice(0, arity(c.operator)).map((v) => `“${v}”`).join(' and ')].filter(Boolean).join(' '))
    .join(joiner);
}
