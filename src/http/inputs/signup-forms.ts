import type { Request } from 'express';
import { LIMITS } from '../../lib/constants';
import { asArray, toId } from '../../lib/http';
import { field } from '../validation';
import type { SignupFormInput } from '../../services/audience/signup-forms';

/** Longest thank-you text a form shows after confirmation. */
export const THANK_YOU_MAX = 2000;

export const signupFormRules = () => [
  field('name').required().string().maxLength(LIMITS.string),
  field('contact_type_id').required().integer(),
  field('thank_you').optional().string().maxLength(THANK_YOU_MAX),
];

/** The dashboard's form (checkbox groups `fields` and `group_ids`, one string when one box is ticked). */
export function signupFormInput(req: Request): SignupFormInput {
  const body = req.body as Record<string, unknown>;
  return {
    name: String(body.name),
    contact_type_id: toId(body.contact_type_id) ?? 0,
    fields: asArray(body.fields).map(String),
    group_ids: asArray(body.group_ids).map((id) => toId(id) ?? 0),
    thank_you: typeof body.thank_you === 'string' ? body.thank_you : '',
    sender_id: toId(body.sender_id) ?? null,
  };
}
