import type { Request } from 'express';
import { RELAY_KINDS, RelayKind } from '../../lib/constants';
import { asArray, toId } from '../../lib/http';
import type { RelayInput } from '../../services/delivery/relays';
import { toFlag } from '../../lib/validation';
import { field } from '../validation';
import { isHttpUrl } from './outgoing-webhooks';

/** A domain name as a relay lists it (lower case, at least two labels). */
const DOMAIN = /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/;

function isSmtpUrl(value: unknown): boolean {
  if (typeof value !== 'string') return false;
  try {
    const url = new URL(value.trim());
    return (url.protocol === 'smtp:' || url.protocol === 'smtps:') && url.hostname !== '';
  } catch {
    return false;
  }
}

const blank = (v: unknown) => v === undefined || v === null || String(v).trim() === '';

/**
 * `name`*, `kind`*, `url` (smtp: `smtp://user:password@host:587` or `smtps://…`), `api_key`,
 * `region`, `endpoint`, `max_rate`, `priority`, `domains[]`, `tls_verify`: POST /relays/save and /relays/update.
 * Whether a host is public is the service's check (it needs DNS).
 */
export const relayRules = () => [
  field('name').required().string().maxLength(255),
  field('kind').required().string().oneOf(RELAY_KINDS),
  field('url').optional().string().maxLength(2000).check(isSmtpUrl, 'The url must be a valid URL starting with smtp:// or smtps://.'),
  field('api_key').optional().string().maxLength(2000),
  field('region').optional().string().maxLength(64).matches(/^[a-z0-9-]+$/, 'The region may contain only lower-case letters, digits and hyphens.'),
  field('endpoint').optional().string().maxLength(2000).check(isHttpUrl, 'The endpoint must be a valid URL starting with http:// or https://.'),
  field('max_rate').optional().numeric().check((v) => Number(v) >= 0 && Number(v) <= 100_000, 'The max rate must be between 0 and 100000.'),
  field('priority').optional().integer().check((v) => Math.abs(Number(v)) <= 1_000_000, 'The priority must be between -1000000 and 1000000.'),
  field('tls_verify').optional().boolean().describe({}, 'SMTP only: 0 takes a server certificate that does not verify (self-signed); the connection is still encrypted. Default 1; absent on update: unchanged.'),
  field('domains')
    .optional()
    .array({ type: 'string', format: 'hostname' }, 100)
    .check((v) => (v as unknown[]).every((d) => typeof d === 'string' && DOMAIN.test(d.trim().toLowerCase())), 'Each of the domains must be a domain name, such as example.com.'),
];

export const relayIdRule = () => field('id', 'query').required().integer();

export function relayInputOf(req: Request): RelayInput {
  const b = req.body ?? {};
  const text = (v: unknown) => (blank(v) ? null : String(v).trim());
  return {
    name: String(b.name).trim(),
    kind: String(b.kind) as RelayKind,
    url: b.kind === 'smtp' ? text(b.url) : null,
    api_key: b.kind === 'smtp' ? null : text(b.api_key),
    region: text(b.region),
    endpoint: b.kind === 'smtp' ? null : text(b.endpoint)?.replace(/\/+$/, '') ?? null,
    max_rate: blank(b.max_rate) ? 0 : Number(b.max_rate),
    priority: blank(b.priority) ? 0 : Number(b.priority),
    domains: [...new Set(asArray(b.domains).map((d) => String(d).trim().toLowerCase()).filter(Boolean))],
    tls_verify: blank(b.tls_verify) ? null : toFlag(b.tls_verify) === 1,
  };
}

export function relayIdOf(req: Request): number {
  return toId(req.query.id) ?? 0;
}

/** `relay_id` of a single send or automation step: an account's relay, or empty for the usual choice. */
export const relayRefRule = () => field('relay_id').optional().integer(1);

export function relayRefOf(body: Record<string, unknown> | undefined): number | null {
  return blank(body?.relay_id) ? null : (toId(body?.relay_id) ?? null);
}
