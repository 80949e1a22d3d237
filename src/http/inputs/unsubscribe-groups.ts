import type { Request } from 'express';
import { LIMITS } from '../../lib/constants';
import { toFlag } from '../../lib/validation';
import { field } from '../validation';
import type { UnsubscribeGroupInput } from '../../services/audience/unsubscribe-groups';

export const groupFields = () => [
  field('group_name').required().string().maxLength(LIMITS.string),
  field('description').required().string().maxLength(LIMITS.text),
  field('is_display').required().boolean(),
];

export function groupInput(req: Request): UnsubscribeGroupInput {
  return { group_name: String(req.body.group_name), description: String(req.body.description), is_display: toFlag(req.body.is_display) ?? 0 };
}
