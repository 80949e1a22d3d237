import type { Request } from 'express';
import { HOOK_EVENTS } from '../../lib/constants';
import { asArray, toId } from '../../lib/http';
import { toFlag } from '../../lib/validation';
import type { WebhookInput } from '../../services/integrations/outgoing-webhooks';
import { field } from '../validation';

const KNOWN = new Set<string>(HOOK_EVENTS);

/** An absolute http(s) URL (whether its host is public is the service's check: it needs DNS). */
export function isHttpUrl(value: unknown): boolean {
  if (typeof value !== 'string') return false;
  try {
    const url = new URL(value.trim());
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '';
  } catch {
    return false;
  }
}

/** `url`*, `events`* (an array of HOOK_EVENTS), `description`: POST /webhooks/save and /webhooks/update. */
export const webhookRules = () => [
  field('url').required().string().maxLength(2000).check(isHttpUrl, 'The url must be a valid URL starting with http:// or https://.'),
  field('events')
    .required()
    .array({ type: 'string', enum: [...HOOK_EVENTS] }, HOOK_EVENTS.length)
    .check((v) => (v as unknown[]).every((e) => typeof e === 'string' && KNOWN.has(e.trim())), `The selected events is invalid; the events are: ${HOOK_EVENTS.join(', ')}.`),
  field('description').optional().string().maxLength(255),
];

/** `rotate_secret` (update only): 1 makes a new signing secret, shown once in the answer. */
export const rotateSecretRule = () => field('rotate_secret').optional().boolean();

export const webhookIdRule = () => field('id', 'query').required().integer();

/** The validated body as the service's input. */
export function webhookInputOf(req: Request): WebhookInput {
  return {
    url: String(req.body.url).trim(),
    events: [...new Set(asArray(req.body.events).map((e) => String(e).trim()))],
    description: req.body.description === undefined || req.body.description === null ? '' : String(req.body.description).trim(),
  };
}

export function rotateSecretOf(req: Request): boolean {
  return toFlag(req.body?.rotate_secret) === 1;
}

export function webhookIdOf(req: Request): number {
  return toId(req.query.id) ?? 0;
}
