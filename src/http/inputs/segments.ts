import type { Request } from 'express';
import { LIMITS, SEGMENT_OPERATORS } from '../../lib/constants';
import { asArray, toId } from '../../lib/http';
import { field } from '../validation';
import { param, ParamDoc } from '../param-doc';
import type { SegmentInput } from '../../services/audience/segments';

export const segmentRules = () => [
  field('segment_name').required().string().maxLength(LIMITS.string),
  field('contact_type_id').required().integer(),
];

/** A recipient stored by hand (segment_id aside). */
export const recipientRules = () => [
  field('first_name').required().string().maxLength(LIMITS.string),
  field('last_name').required().string().maxLength(LIMITS.string),
  field('email').required().string().email(),
];

/** The conditions, read by segmentInput and checked by the segments service. */
export const SEGMENT_CONDITION_PARAMS: readonly ParamDoc[] = [
  param('query_type', 'body', { type: 'string', enum: ['and', 'or'] }, 'How the conditions combine (default `and`).'),
  param('select_field', 'body', { type: 'array', items: { type: 'string' } }, 'Condition i: a contact column, `created_at`, a custom field name, or `engagement` (opens, clicks and sends).'),
  param(
    'select_operator',
    'body',
    { type: 'array', items: { type: 'string', enum: [...new Set(Object.values(SEGMENT_OPERATORS).flat())] } },
    'Condition i: its operator, one of its field type\'s. Dates also take `in the last` and `more than ago` (a whole number of days, counted from when the segment is counted or sent); `engagement` takes `opened`, `not opened`, `clicked`, `not clicked` and `was sent`. See docs/segments.md.',
  ),
  param(
    'value',
    'body',
    { type: 'array', items: { type: 'string' } },
    'The values, in order: one per condition, two for `is between`, none for `is empty` / `is not empty`; for `engagement`, a single send\'s `utr` or `any`.',
  ),
];

export function segmentInput(req: Request): SegmentInput {
  const body = req.body as Record<string, unknown>;
  return {
    segment_name: String(body.segment_name),
    contact_type_id: toId(body.contact_type_id) ?? 0,
    select_field: asArray(body.select_field),
    select_operator: asArray(body.select_operator),
    value: asArray(body.value),
    query_type: body.query_type,
  };
}
