import { AUTOMATION_TYPES, CAMPAIGN_LIMITS, LIMITS, WAITING_TYPES } from '../../lib/constants';
import { toId } from '../../lib/http';
import { isBlank, messages } from '../../lib/validation';
import { field } from '../validation';
import { relayRefOf, relayRefRule } from './relays';
import type { AutomationChanges, AutomationInput } from '../../services/campaigns/automations';
import type { ScheduleInput } from '../../services/campaigns/automation-schedules';
import { parseRecipientRef } from '../../services/campaigns/campaign-refs';
import { RECIPIENT_REF_PATTERN, templateHtmlField, templateJsonField, templateText, trackingFields, trackingInput, utrField } from '../campaign-params';

/** An optional `contacts_{id}` / `segments_{id}` target. */
export const targetField = () =>
  field('automation_for')
    .optional()
    .describe({ type: 'string', pattern: RECIPIENT_REF_PATTERN }, '`contacts_{contact_type_id}` or `segments_{segment_id}`.')
    .check((v) => parseRecipientRef(v) !== undefined, messages.format('automation_for'));

export const automationName = () => field('automation_name').required().string().maxLength(LIMITS.string);

export const createFields = () => [
  field('type').required().oneOf(Object.keys(AUTOMATION_TYPES)),
  automationName(),
  targetField(),
  field('unsubscribe_group_id').optional().integer(1),
];

export const updateFields = () => [
  utrField(),
  // A given name must not be blank; an absent one is kept.
  field('automation_name')
    .describe({ type: 'string', maxLength: LIMITS.string }, 'Absent keeps the name.')
    .check((v) => v === undefined || !isBlank(v), messages.required('automation_name'))
    .check((v) => v === undefined || typeof v === 'string', messages.string('automation_name'))
    .check((v) => v === undefined || String(v).length <= LIMITS.string, messages.max('automation_name', LIMITS.string)),
  // Absent keeps the target or group, blank clears it (see changesOf).
  targetField().describe({}, 'Absent keeps the target, blank clears it.'),
  field('unsubscribe_group_id').optional().integer(1).describe({}, 'Absent keeps the group, blank clears it.'),
];

/** undefined: not given (keep); null: given blank (clear). */
export function given<T>(body: Record<string, unknown>, name: string, read: (value: unknown) => T): T | null | undefined {
  if (body[name] === undefined) return undefined;
  return isBlank(body[name]) ? null : read(body[name]);
}

export function createInput(body: Record<string, unknown>): AutomationInput {
  return {
    automation_type: AUTOMATION_TYPES[String(body.type).trim() as keyof typeof AUTOMATION_TYPES],
    automation_name: String(body.automation_name).trim(),
    automation_for: parseRecipientRef(body.automation_for) ?? null,
    unsubscribe_group_id: isBlank(body.unsubscribe_group_id) ? null : (toId(body.unsubscribe_group_id) ?? 0),
  };
}

export function changesOf(body: Record<string, unknown>): AutomationChanges {
  const changes: AutomationChanges = {};
  const name = given(body, 'automation_name', (v) => String(v).trim());
  if (name) changes.automation_name = name;
  const target = given(body, 'automation_for', (v) => parseRecipientRef(v) ?? null);
  if (target !== undefined) changes.automation_for = target;
  // An id that names no record (0 after toId) is checked, and refused, like any other.
  const group = given(body, 'unsubscribe_group_id', (v) => toId(v) ?? 0);
  if (group !== undefined) changes.unsubscribe_group_id = group;
  return changes;
}

export const scheduleFields = () => [
  utrField(),
  field('sender_id').required().integer(1),
  field('subject').required().string().maxLength(CAMPAIGN_LIMITS.subject),
  field('waiting_period').required().integer(0).check((v) => Number(v) <= CAMPAIGN_LIMITS.waitingPeriodMax, `The waiting period may not be greater than ${CAMPAIGN_LIMITS.waitingPeriodMax}.`),
  field('waiting_type').required().oneOf(WAITING_TYPES),
  field('template_id').required().integer(1),
  field('preview_img').required().string().maxLength(LIMITS.string),
  templateJsonField(),
  templateHtmlField(),
  ...trackingFields(),
  relayRefRule().describe({}, 'Extension: the id of one of the account\'s relays, which this step\'s mail goes through first (empty: the account\'s usual choice; absent on update: unchanged).'),
];

export function scheduleInput(body: Record<string, unknown>): ScheduleInput {
  return {
    sender_id: toId(body.sender_id) ?? 0,
    subject: String(body.subject).trim(),
    waiting_period: Number(body.waiting_period),
    waiting_type: String(body.waiting_type).trim(),
    template_id: toId(body.template_id) ?? 0,
    preview_img: String(body.preview_img).trim(),
    template_json: templateText(body.template_json),
    template_html: templateText(body.template_html),
    ...trackingInput(body),
    ...(body.relay_id !== undefined ? { relay_id: relayRefOf(body) } : {}),
  };
}
