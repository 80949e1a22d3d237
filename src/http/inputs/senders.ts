import type { Request } from 'express';
import { CAMPAIGN_LIMITS, LIMITS } from '../../lib/constants';
import { toId } from '../../lib/http';
import { field } from '../validation';
import type { SenderInput } from '../../services/campaigns/senders';

export const text = (name: string) => field(name).required().string().maxLength(LIMITS.string);
export const optionalText = (name: string, max: number = LIMITS.string) => field(name).optional().string().maxLength(max);

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

export const senderIdInQuery = () => field('sender_id', 'query').required().integer();

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

export const senderIdOf = (req: Request, from: 'query' | 'body') => toId((from === 'query' ? req.query : req.body).sender_id) ?? 0;
