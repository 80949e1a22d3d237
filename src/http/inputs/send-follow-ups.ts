import type { Request } from 'express';
import { CAMPAIGN_LIMITS, RECIPIENT_STATUSES, RecipientStatus } from '../../lib/constants';
import { ZERO_TIME } from '../../lib/time';
import { BOUNCE_CLASSES, isBounceClass, type BounceClass } from '../../lib/bounce-class';
import { isBlank, toFlag } from '../../lib/validation';
import { normaliseTime } from '../../lib/zoned-time';
import type { ResendInput } from '../../services/campaigns/resends';
import { utrField } from '../campaign-params';
import { field } from '../validation';
import { scheduleDateFields } from './single-sends';

/** A recipients report's filter and format (`format=csv` downloads the same rows). */
export const recipientReportFields = () => [
  utrField(),
  field('status', 'query').optional().oneOf(RECIPIENT_STATUSES).describe({}, 'Only the recipients whose message has this status.'),
  field('bounce_class', 'query').optional().oneOf(BOUNCE_CLASSES).describe({}, 'Only the recipients whose last refusal has this class (hard, mailbox_full, policy, soft, other).'),
  field('format', 'query').optional().oneOf(['json', 'csv']).describe({}, '`csv` downloads the same rows as a CSV file (every row: paging does not apply).'),
];

export function recipientReportInput(req: Request): { status?: RecipientStatus; bounceClass?: BounceClass; csv: boolean } {
  const status = typeof req.query.status === 'string' && req.query.status.trim() ? (req.query.status.trim() as RecipientStatus) : undefined;
  const klass = typeof req.query.bounce_class === 'string' ? req.query.bounce_class.trim() : undefined;
  return { status, bounceClass: isBounceClass(klass) ? klass : undefined, csv: typeof req.query.format === 'string' && req.query.format.trim() === 'csv' };
}

/** Resend to non-openers: without schedule_type a draft; 0 at once, 1 at schedule_date and schedule_time. */
export const resendFields = () => [utrField(), ...resendChoiceFields()];

/** The resend's own fields (the dashboard names the send in its path). */
export const resendChoiceFields = () => [
  field('subject').optional().string().maxLength(CAMPAIGN_LIMITS.subject).describe({}, 'The resend\'s subject; the original\'s when absent.'),
  field('schedule_type').optional().boolean().describe({}, 'Absent: the resend is a draft (status 0); 0: sent at once; 1: at schedule_date and schedule_time.'),
  ...scheduleDateFields(),
];

export function resendInput(body: Record<string, unknown>): ResendInput {
  const type = isBlank(body.schedule_type) ? undefined : toFlag(body.schedule_type);
  const subject = isBlank(body.subject) ? undefined : String(body.subject).trim();
  if (type === 1) {
    return { subject, schedule_type: 1, schedule_date: String(body.schedule_date).trim(), schedule_time: normaliseTime(String(body.schedule_time)) ?? ZERO_TIME };
  }
  return { subject, schedule_type: type === 0 ? 0 : undefined };
}
