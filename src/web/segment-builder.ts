import { FIELD_LABELS, SEGMENT_OPERATORS, SegmentFieldKind } from '../lib/constants';
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
  label: string;
  kind: SegmentFieldKind;
  custom: boolean;
  operators: readonly string[];
}

/** Operators in words where the API's name would puzzle (the values read "30 days", "a send"). */
const OPERATOR_LABELS: Record<string, string> = {
  'in the last': 'in the last … days',
  'more than ago': 'more than … days ago',
  'not opened': 'was sent and did not open',
  'not clicked': 'was sent and did not click',
  opened: 'opened',
  clicked: 'clicked a link in',
};
export const operatorLabel = (operator: string) => OPERATOR_LABELS[operator] ?? operator;

/**
 * The value fields an operator takes, by shape: none, one or two of the field's type, a number
 * of days, or a send. The page renders each shape once as a template, so the browser can
 * change a row's fields in place when its field or operator changes.
 */
export type ValueShape = 'none' | 'text' | 'number' | 'number2' | 'date' | 'date2' | 'days' | 'daysAgo' | 'send';
export const VALUE_SHAPES: readonly ValueShape[] = ['none', 'text', 'number', 'number2', 'date', 'date2', 'days', 'daysAgo', 'send'];

export function valueShape(kind: SegmentFieldKind, operator: string): ValueShape {
  if (kind === 'engagement') return 'send';
  if (operator === 'in the last') return 'days';
  if (operator === 'more than ago') return 'daysAgo';
  const count = arity(operator);
  if (count === 0) return 'none';
  if (kind === 'text') return 'text';
  return count === 2 ? `${kind}2` : kind;
}

export function fieldChoices(defs: CustomFieldDef[]): FieldChoice[] {
  return [...segmentFields(defs)].map(([name, field]) => ({
    name,
    label: field.kind === 'engagement' ? 'Email activity (opens, clicks, sends)' : ('custom' in field ? field.custom.label : FIELD_LABELS[name]) || name,
    kind: field.kind,
    custom: 'custom' in field,
    operators: SEGMENT_OPERATORS[field.kind],
  }));
}

/** What the browser needs to change a row in place: the operators of each kind (value, words) and each operator's value shape. */
export function builderScriptData(): { operators: string; shapes: string } {
  const kinds = Object.keys(SEGMENT_OPERATORS) as SegmentFieldKind[];
  const operators = Object.fromEntries(kinds.map((k) => [k, SEGMENT_OPERATORS[k].map((op) => [op, operatorLabel(op)])]));
  const shapes = Object.fromEntries(kinds.map((k) => [k, Object.fromEntries(SEGMENT_OPERATORS[k].map((op) => [op, valueShape(k, op)]))]));
  return { operators: JSON.stringify(operators), shapes: JSON.stringify(shapes) };
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
    return {
      index: i,
      field: choice.name,
      kind: choice.kind,
      operators: choice.operators.map((op) => ({ value: op, label: operatorLabel(op) })),
      operator,
      shape: valueShape(choice.kind, operator),
      values: [c.values[0] ?? '', c.values[1] ?? ''],
      valueKeys,
      fieldKey: `select_field.${i}`,
      operatorKey: `select_operator.${i}`,
    };
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

/**
 * The stored conditions in words: `email contains “acme” and age is between “18” and “30”`,
 * `created_at in the last 30 days`, `opened “November news”` (sends by name when known).
 */
export function describeRules(segment: SegmentRecord, sendNames: Map<string, string> = new Map(), choices: FieldChoice[] = []): string {
  const conditions = conditionsOfSegment(segment);
  const labels = new Map(choices.map((c) => [c.name, c.label]));
  if (conditions.length === 0) return 'every contact of the type';
  const joiner = ` ${segment.query_type === 'or' ? 'or' : 'and'} `;
  return conditions
    .map((c) => {
      const values = c.values.slice(0, arity(c.operator));
      const field = labels.get(c.field) ?? FIELD_LABELS[c.field] ?? c.field;
      if (c.operator === 'in the last') return `${field} in the last ${values[0]} days`;
      if (c.operator === 'more than ago') return `${field} more than ${values[0]} days ago`;
      if (c.field === 'engagement') {
        const send = values[0] === 'any' ? 'any send' : `“${sendNames.get(values[0]) ?? values[0]}”`;
        return `${operatorLabel(c.operator)} ${send}`;
      }
      return [field, c.operator, values.map((v) => `“${v}”`).join(' and ')].filter(Boolean).join(' ');
    })
    .join(joiner);
}
