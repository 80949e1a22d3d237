import { CAMPAIGN_LIMITS, LIMITS } from '../../lib/constants';
import { toId } from '../../lib/http';
import { ZERO_DATE, ZERO_TIME } from '../../lib/time';
import { humanName, isBlank, messages, splitAddresses, toFlag } from '../../lib/validation';
import { field, Rule } from '../validation';
import { relayRefOf, relayRefRule } from './relays';
import { isCalendarDate, normaliseTime, SCHEDULE_LOCAL_TIME } from '../../lib/zoned-time';
import { parseRecipientRefs, recipientEntries } from '../../services/campaigns/campaign-refs';
import type { SingleSendInput } from '../../services/campaigns/single-sends';
import { recipientList, templateHtmlField, templateJsonField, templateText, trackingFields, trackingInput } from '../campaign-params';

/** `schedule_type`: 0 at once, 1 at a date and time in the account's zone, 2 (extension) at a date and time in each recipient's zone. */
export function scheduleTypeOf(value: unknown): 0 | 1 | 2 | undefined {
  const flag = toFlag(value);
  if (flag !== undefined) return flag;
  return typeof value === 'string' || typeof value === 'number' ? (String(value).trim() === String(SCHEDULE_LOCAL_TIME) ? 2 : undefined) : undefined;
}

/** A date or time field that is required, and checked, only when schedule_type is 1 (or 2). */
export function whenScheduled(name: string, valid: (value: string) => boolean, invalid: string, schema: Record<string, unknown>): Rule {
  const rule = field(name).describe(schema, 'Required when schedule_type is 1 (in the account\'s time zone) or 2 (on each recipient\'s clock).');
  rule.custom(
    (value, { req }) => {
      const type = scheduleTypeOf(req.body?.schedule_type);
      if (type !== 1 && type !== 2) return true;
      if (isBlank(value)) throw new Error(`The ${humanName(name)} field is required when schedule type is ${type}.`);
      if (typeof value !== 'string' || !valid(value.trim())) throw new Error(invalid);
      return true;
    },
    undefined,
    { bail: false },
  );
  return rule;
}

/**
 * The single-send parameters of create and update; every failing field is reported at once.
 * The API requires a preheader (its reference says so); the dashboard's composer lets a person
 * leave it empty (`preheader: 'optional'`), and mail programs then show the message's first words.
 */
export const singleSendFields = ({ preheader = 'required' }: { preheader?: 'required' | 'optional' } = {}) => [
  field('template_id').required().integer(1),
  templateJsonField(),
  templateHtmlField(),
  field('sender_id').required().integer(1),
  field('unsubscribe_group_id').required().integer(1),
  field('single_send_name').required().string().maxLength(LIMITS.string),
  field('subject').required().string().maxLength(CAMPAIGN_LIMITS.subject),
  (preheader === 'required' ? field('preheader').required() : field('preheader').optional()).string().maxLength(CAMPAIGN_LIMITS.subject),
  recipientList('recipient_id', true),
  recipientList('exclude_specific_recipient_id', false),
  field('schedule_type')
    .required()
    .describe({ type: 'integer', enum: [0, 1, SCHEDULE_LOCAL_TIME] }, '0: at once; 1: at schedule_date and schedule_time in the account\'s time zone; 2 (extension): at schedule_date and schedule_time in each recipient\'s own time zone.')
    // No longer a flag once 2 is allowed: anything else is a value outside the list (docs/decisions.md, "Single sends").
    .check((v) => scheduleTypeOf(v) !== undefined, messages.selected('schedule_type')),
  ...scheduleDateFields(),
  ...trackingFields(),
  field('archive').optional().boolean().describe({}, 'Extension: 1 lists the send in the account\'s public archive once it has completed (default 0; absent on update: unchanged).'),
  relayRefRule().describe({}, 'Extension: the id of one of the account\'s relays, which its mail goes through first (empty: the account\'s usual choice; absent on update: unchanged).'),
];

/** `schedule_date` and `schedule_time`, required and checked when schedule_type is 1 (create, update, resend). */
export const scheduleDateFields = () => [
  whenScheduled('schedule_date', isCalendarDate, 'The schedule date does not match the format Y-m-d.', { type: 'string', format: 'date' }),
  whenScheduled('schedule_time', (v) => normaliseTime(v) !== undefined, 'The schedule time must be a time such as 09:30 or 09:30:00.', {
    type: 'string',
    pattern: '^[0-9]{2}:[0-9]{2}(:[0-9]{2})?$',
  }),
];

export function singleSendInput(body: Record<string, unknown>): SingleSendInput {
  const type = scheduleTypeOf(body.schedule_type) ?? 0;
  const scheduled = type !== 0;
  return {
    template_id: toId(body.template_id) ?? 0,
    template_json: templateText(body.template_json),
    template_html: templateText(body.template_html),
    sender_id: toId(body.sender_id) ?? 0,
    unsubscribe_group_id: toId(body.unsubscribe_group_id) ?? 0,
    single_send_name: String(body.single_send_name).trim(),
    subject: String(body.subject).trim(),
    preheader: String(body.preheader ?? '').trim(),
    recipient_id: parseRecipientRefs(recipientEntries(body.recipient_id)),
    exclude_specific_recipient_id: parseRecipientRefs(recipientEntries(body.exclude_specific_recipient_id)),
    schedule_type: type,
    schedule_date: scheduled ? String(body.schedule_date).trim() : ZERO_DATE,
    schedule_time: scheduled ? normaliseTime(String(body.schedule_time)) ?? ZERO_TIME : ZERO_TIME,
    ...trackingInput(body),
    ...(isBlank(body.archive) ? {} : { archive: toFlag(body.archive) === 1 ? 1 : 0 }),
    ...(body.relay_id !== undefined ? { relay_id: relayRefOf(body) } : {}),
  };
}

/** Test sends (extension): up to 10 comma-separated addresses, and optionally the contact to render for. */
export const TEST_SEND_ADDRESSES = 10;
export const testSendFields = () => [
  field('email_address').required().addressList(TEST_SEND_ADDRESSES),
  field('contact_id').optional().integer(1).describe({}, 'The contact to render the message for (default: the first of the audience).'),
];

export function testSendInput(body: Record<string, unknown>): { addresses: string[]; contactId?: number } {
  return { addresses: splitAddresses(body.email_address), contactId: toId(body.contact_id) };
}
