import { CAMPAIGN_LIMITS, LIMITS } from '../../lib/constants';
import { toId } from '../../lib/http';
import { ZERO_DATE, ZERO_TIME } from '../../lib/time';
import { humanName, isBlank, splitAddresses, toFlag } from '../../lib/validation';
import { field, Rule } from '../validation';
import { isCalendarDate, normaliseTime } from '../../lib/zoned-time';
import { parseRecipientRefs, recipientEntries } from '../../services/campaigns/campaign-refs';
import type { SingleSendInput } from '../../services/campaigns/single-sends';
import { recipientList, templateHtmlField, templateJsonField, templateText, trackingFields, trackingInput } from '../campaign-params';

/** A date or time field that is required, and checked, only when schedule_type is 1. */
export function whenScheduled(name: string, valid: (value: string) => boolean, invalid: string, schema: Record<string, unknown>): Rule {
  const rule = field(name).describe(schema, 'Required when schedule_type is 1; in the account\'s time zone.');
  rule.custom(
    (value, { req }) => {
      if (toFlag(req.body?.schedule_type) !== 1) return true;
      if (isBlank(value)) throw new Error(`The ${humanName(name)} field is required when schedule type is 1.`);
      if (typeof value !== 'string' || !valid(value.trim())) throw new Error(invalid);
      return true;
    },
    undefined,
    { bail: false },
  );
  return rule;
}

/** The single-send parameters of create and update; every failing field is reported at once. */
export const singleSendFields = () => [
  field('template_id').required().integer(1),
  templateJsonField(),
  templateHtmlField(),
  field('sender_id').required().integer(1),
  field('unsubscribe_group_id').required().integer(1),
  field('single_send_name').required().string().maxLength(LIMITS.string),
  field('subject').required().string().maxLength(CAMPAIGN_LIMITS.subject),
  field('preheader').required().string().maxLength(CAMPAIGN_LIMITS.subject),
  recipientList('recipient_id', true),
  recipientList('exclude_specific_recipient_id', false),
  field('schedule_type').required().boolean(),
  ...scheduleDateFields(),
  ...trackingFields(),
  field('archive').optional().boolean().describe({}, 'Extension: 1 lists the send in the account\'s public archive once it has completed (default 0; absent on update: unchanged).'),
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
  const scheduled = toFlag(body.schedule_type) === 1;
  return {
    template_id: toId(body.template_id) ?? 0,
    template_json: templateText(body.template_json),
    template_html: templateText(body.template_html),
    sender_id: toId(body.sender_id) ?? 0,
    unsubscribe_group_id: toId(body.unsubscribe_group_id) ?? 0,
    single_send_name: String(body.single_send_name).trim(),
    subject: String(body.subject).trim(),
    preheader: String(body.preheader).trim(),
    recipient_id: parseRecipientRefs(recipientEntries(body.recipient_id)),
    exclude_specific_recipient_id: parseRecipientRefs(recipientEntries(body.exclude_specific_recipient_id)),
    schedule_type: scheduled ? 1 : 0,
    schedule_date: scheduled ? String(body.schedule_date).trim() : ZERO_DATE,
    schedule_time: scheduled ? normaliseTime(String(body.schedule_time)) ?? ZERO_TIME : ZERO_TIME,
    ...trackingInput(body),
    ...(isBlank(body.archive) ? {} : { archive: toFlag(body.archive) === 1 ? 1 : 0 }),
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
