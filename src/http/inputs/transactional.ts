import type { Request } from 'express';
import { TRANSACTIONAL_LIMITS as L, TRANSACTIONAL_STATUSES } from '../../lib/constants';
import { BOUNCE_CLASSES } from '../../lib/bounce-class';
import { param, ParamDoc } from '../param-doc';

const addresses = (what: string) => ({ type: ['string', 'array'], items: { type: 'string', format: 'email' }, maxItems: L.recipients, description: what });

/** The fields of one transactional message (a send's body, each item of a batch's `messages`). */
export const MESSAGE_PARAMS: readonly ParamDoc[] = [
  param('to', 'body', addresses(`One address, or an array of up to ${L.recipients}: one message per address.`), undefined, true),
  param('sender_id', 'body', { type: 'integer', minimum: 1 }, 'A verified sender of the account (or give `from`).'),
  param('from', 'body', { type: 'string', format: 'email' }, "A verified sender's address, instead of `sender_id`."),
  param('subject', 'body', { type: 'string', maxLength: 998 }, 'Required unless `template_id` gives it; Liquid reads `data` and a contact\'s fields.'),
  param('html', 'body', { type: 'string' }, 'The HTML body (Liquid as the subject); the text part is made from it when `text` is absent.'),
  param('text', 'body', { type: 'string' }, 'The text body.'),
  param('template_id', 'body', { type: 'integer', minimum: 1 }, 'A transactional template of the account, instead of `subject` and `html`.'),
  param('data', 'body', { type: 'object' }, 'Values the Liquid reads as `{{ data.name }}`.'),
  param('cc', 'body', addresses('Copies.')),
  param('bcc', 'body', addresses('Blind copies.')),
  param('reply_to', 'body', { type: 'string', format: 'email' }, 'Reply-To (default: the sender\'s).'),
  param('headers', 'body', { type: 'object' }, 'X- headers (and List-Unsubscribe); any other name is refused.'),
  param('attachments', 'body', { type: 'array', maxItems: L.attachments, items: { type: 'object' } }, `Up to ${L.attachments} of {filename, content (base64), content_type}, at most 10 MiB decoded in all.`),
  param('tags', 'body', { type: 'array', maxItems: L.tags, items: { type: 'string', maxLength: L.tagLength } }, `Up to ${L.tags} tags of up to ${L.tagLength} characters, to find it in the log.`),
  param('track_opens', 'body', { type: 'integer', enum: [0, 1] }, 'Count opens (default 0).'),
  param('track_clicks', 'body', { type: 'integer', enum: [0, 1] }, 'Count clicks (default 0).'),
  param('send_at', 'body', { type: 'string', format: 'date-time' }, `When to send it (ISO 8601 with its offset, at most ${L.sendAtDays} days ahead); default now.`),
];

export const BATCH_PARAMS: readonly ParamDoc[] = [
  param('messages', 'body', { type: 'array', maxItems: L.batch, items: { type: 'object' } }, `1 to ${L.batch} messages, each as the body of POST /transactional/send.`, true),
];

export const LOG_PARAMS: readonly ParamDoc[] = [
  param('page', 'query', { type: 'integer', minimum: 1 }, 'The page (default 1).'),
  param('limit', 'query', { type: 'integer', minimum: 1, maximum: 100 }, 'Messages a page (default 50).'),
  param('status', 'query', { type: 'string', enum: [...TRANSACTIONAL_STATUSES] }, 'Only messages of this status.'),
  param('bounce_class', 'query', { type: 'string', enum: [...BOUNCE_CLASSES] }, 'Only messages whose last refusal has this class (hard, mailbox_full, policy, soft, other).'),
  param('to', 'query', { type: 'string', maxLength: 320 }, 'Only messages to this address.'),
  param('tag', 'query', { type: 'string', maxLength: L.tagLength }, 'Only messages with this tag.'),
  param('from_date', 'query', { type: 'string' }, 'Accepted on or after this date (YYYY-MM-DD) or instant.'),
  param('to_date', 'query', { type: 'string' }, 'Accepted on or before this date (YYYY-MM-DD) or before this instant.'),
];

export const ID_IN_QUERY = param('id', 'query', { type: 'string', pattern: '^tx_[0-9]+$' }, 'The message (`tx_…`).', true);
export const ID_IN_BODY = param('id', 'body', { type: 'string', pattern: '^tx_[0-9]+$' }, 'The message (`tx_…`).', true);

export const TEMPLATE_PARAMS: readonly ParamDoc[] = [
  param('name', 'body', { type: 'string', maxLength: 255 }, 'What the dashboard calls it.', true),
  param('subject', 'body', { type: 'string', maxLength: 998 }, 'Liquid reads `data` and a contact\'s fields.', true),
  param('html', 'body', { type: 'string' }, 'The HTML body.', true),
  param('text', 'body', { type: 'string' }, 'The text body (default: made from the HTML).'),
];

export const IDEMPOTENCY_WORDS =
  'With an `Idempotency-Key` header (1 to 256 characters, kept 24 hours per account): the same key and body answer the first answer again and send nothing more; another body is a 409, and so is a request while the first with its key is still being handled.';

/** The Idempotency-Key header, as given (checked by the service). */
export function idempotencyKeyOf(req: Request): string | undefined {
  return req.get('Idempotency-Key');
}
