import type { Request } from 'express';
import { messages } from '../../lib/validation';
import { field } from '../validation';

/** Days of per-provider figures a sending domain shows at most. */
export const PROVIDER_DAYS_MAX = 90;

/** `days` of GET /domains/providers: 1 to 90, 7 when absent. */
export const providerDaysRule = () =>
  field('days', 'query')
    .optional()
    .integer(1)
    .custom((v) => Number(v) <= PROVIDER_DAYS_MAX, messages.between('days', 1, PROVIDER_DAYS_MAX))
    .describe({ maximum: PROVIDER_DAYS_MAX }, 'How many UTC days back, today included (1 to 90; 7 when absent).');

export function providerDaysOf(req: Request): number {
  const days = Number(req.query.days);
  return Number.isInteger(days) && days >= 1 ? days : 7;
}
