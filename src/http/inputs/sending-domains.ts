import type { Request } from 'express';
import { toId } from '../../lib/http';
import { field } from '../validation';

/** `domain`*: POST /domains/save (whether it is a domain name is the service's check, which answers the same message). */
export const domainRules = () => [field('domain').required().string().maxLength(253)];

export const domainIdRule = () => field('id', 'query').required().integer();

export function domainIdOf(req: Request): number {
  return toId(req.query.id) ?? 0;
}

export function domainInputOf(req: Request): { domain: string } {
  return { domain: String(req.body.domain) };
}
