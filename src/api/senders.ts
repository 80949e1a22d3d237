import type { Request } from 'express';
import { CAMPAIGN_LIMITS, LIMITS } from '../lib/constants';
import { sendSuccess, sendSuccessUnderErrors } from '../lib/envelope';
import { toId } from '../lib/http';
import { field, validate } from '../lib/validation';
import type { Services } from '../services';
import type { SenderInput } from '../services/senders';
import { ApiRoutes, ctxOf, listMessage, pagingOf } from './routes';

const text = (name: string) => field(name).required().string().maxLength(LIMITS.string);
const optionalText = (name: string, max: number = LIMITS.string) => field(name).optional().string().maxLength(max);

/** The sender parameters of save and update, with the reference's required fields and limits. */
export const senderFields = () => [
  text('from_name'),
  text('from_email').email(),
  text('reply_to_email').email(),
  field('country_id').required().integer(1),
  field('state_id').optional().integer(1),
  field('city_id').optional().integer(1),
  optionalText('zip_code', CAMPAIGN_LIMITS.zipCode),
  text('company_address'),
  optionalText('company_address2'),
  text('nickname'),
];

const senderIdInQuery = () => field('sender_id', 'query').required().integer();

export function senderInput(body: Record<string, unknown>): SenderInput {
  const trimmed = (name: string) => String(body[name]).trim();
  const optional = (name: string) => (body[name] === undefined || body[name] === null || trimmed(name) === '' ? null : trimmed(name));
  return {
    from_name: trimmed('from_name'),
    from_email: trimmed('from_email'),
    reply_to_email: trimmed('reply_to_email'),
    country_id: toId(body.country_id) ?? 0,
    state_id: toId(body.state_id) ?? null,
    city_id: toId(body.city_id) ?? null,
    zip_code: optional('zip_code'),
    company_address: trimmed('company_address'),
    company_address2: optional('company_address2'),
    nickname: trimmed('nickname'),
  };
}

const senderIdOf = (req: Request, from: 'query' | 'body') => toId((from === 'query' ? req.query : req.body).sender_id) ?? 0;

export function mountSenders(routes: ApiRoutes, { senders }: Services): void {
  // The reference documents POST and shows GET: both list.
  const list: Parameters<ApiRoutes['get']>[1] = async (req, res) => {
    sendSuccess(res, listMessage('senders', await senders.list(ctxOf(req), pagingOf(req))));
  };
  routes.get('/senders', list);
  routes.post('/senders', list);

  routes.post('/sender/save', validate(...senderFields()), async (req, res) => {
    await senders.add(ctxOf(req), senderInput(req.body));
    sendSuccess(res, 'Added Successfully');
  });

  routes.get('/sender/details', validate(senderIdInQuery()), async (req, res) => {
    sendSuccess(res, { sender: await senders.get(ctxOf(req), senderIdOf(req, 'query')) });
  });

  routes.post('/sender/update', validate(field('sender_id').required().integer(), ...senderFields()), async (req, res) => {
    await senders.update(ctxOf(req), senderIdOf(req, 'body'), senderInput(req.body));
    sendSuccess(res, 'Updated Successfully');
  });

  routes.delete('/sender/delete', validate(senderIdInQuery()), async (req, res) => {
    await senders.remove(ctxOf(req), senderIdOf(req, 'query'));
    sendSuccessUnderErrors(res, 'Deleted Successfully');
  });

  routes.get('/sender/resend-mail', validate(senderIdInQuery()), async (req, res) => {
    await senders.resendMail(ctxOf(req), senderIdOf(req, 'query'));
    sendSuccess(res, 'Verification Mail Send');
  });
}
