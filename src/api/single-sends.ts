import type { Request, RequestHandler } from 'express';
import { CAMPAIGN_LIMITS, LIMITS } from '../lib/constants';
import { sendSuccess } from '../lib/envelope';
import { toId } from '../lib/http';
import { ZERO_DATE, ZERO_TIME } from '../lib/time';
import { field, humanName, isBlank, Rule, toFlag, validate } from '../lib/validation';
import { isCalendarDate, normaliseTime } from '../lib/zoned-time';
import type { Services } from '../services';
import { parseRecipientRefs, recipientEntries } from '../services/campaign-refs';
import type { SingleSendInput } from '../services/single-sends';
import { recipientList, templateHtmlField, templateJsonField, templateText, utrField, utrOf } from './campaign-params';
import { bulkDelete } from './crud';
import { ApiRoutes, ctxOf, listMessage, pagingOf } from './routes';

/** A date or time field that is required, and checked, only when schedule_type is 1. */
function whenScheduled(name: string, valid: (value: string) => boolean, invalid: string): Rule {
  const rule = field(name);
  rule.chain.custom((value, { req }) => {
    if (toFlag(req.body?.schedule_type) !== 1) return true;
    if (isBlank(value)) throw new Error(`The ${humanName(name)} field is required when schedule type is 1.`);
    if (typeof value !== 'string' || !valid(value.trim())) throw new Error(invalid);
    return true;
  });
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
  whenScheduled('schedule_date', isCalendarDate, 'The schedule date does not match the format Y-m-d.'),
  whenScheduled('schedule_time', (v) => normaliseTime(v) !== undefined, 'The schedule time must be a time such as 09:30 or 09:30:00.'),
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
  };
}

export function mountSingleSends(routes: ApiRoutes, { singleSends }: Services): void {
  routes.get('/single-send/list', async (req, res) => {
    sendSuccess(res, listMessage('singleSends', await singleSends.list(ctxOf(req), pagingOf(req))));
  });

  routes.post('/single/send/create', validate(...singleSendFields()), async (req, res) => {
    sendSuccess(res, { utr: await singleSends.create(ctxOf(req), singleSendInput(req.body)) });
  });

  // The reference documents GET and shows POST: both duplicate.
  const duplicate: RequestHandler[] = [
    validate(utrField()),
    async (req: Request, res) => {
      await singleSends.duplicate(ctxOf(req), utrOf(req));
      sendSuccess(res, 'Duplicated Successfully');
    },
  ];
  routes.get('/single/send/duplicate', ...duplicate);
  routes.post('/single/send/duplicate', ...duplicate);

  routes.get('/single-send/details', validate(utrField()), async (req, res) => {
    sendSuccess(res, { singleSend: [await singleSends.get(ctxOf(req), utrOf(req))] });
  });

  routes.post('/single/send/update', validate(utrField(), ...singleSendFields()), async (req, res) => {
    sendSuccess(res, { utr: await singleSends.update(ctxOf(req), utrOf(req), singleSendInput(req.body)) });
  });

  routes.delete('/single/send/delete', validate(utrField()), async (req, res) => {
    await singleSends.remove(ctxOf(req), utrOf(req));
    sendSuccess(res, 'Deleted Successfully');
  });

  bulkDelete(routes, '/single/send/bulk-delete', singleSends.removeMany);
}
