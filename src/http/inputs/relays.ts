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

/**
 * The dashboard's SMTP relay: the server's name, port, kind of encryption, user name and
 * password as fields of their own (a person does not write a password into a URL); they make
 * the `url` the API takes (relayFormInputOf). `starttls`: `smtp://` (port 587 or 25, encryption
 * agreed after connecting); `tls`: `smtps://` (port 465, encrypted from the start).
 */
export const SMTP_SECURITY = ['starttls', 'tls'] as const;
const SMTP_DEFAULT_PORT: Record<(typeof SMTP_SECURITY)[number], number> = { starttls: 587, tls: 465 };
/** A host name or an IP address, as a server's name field takes it (no scheme, port or path). */
const HOST = /^(?=.{1,253}$)[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)*$|^\[?[0-9A-Fa-f:.]+\]?$/;

const whenSmtp = (check: (v: unknown) => boolean) => (v: unknown, meta: { req: { body?: Record<string, unknown> } }) => meta.req.body?.kind !== 'smtp' || check(v);

/** The relay form's rules: the API's (relayRules) but its `url`, and the SMTP parts, said for a person. */
export const relayFormRules = () => [
  ...relayRules().filter((rule) => rule.name !== 'url'),
  // Required for SMTP only; express-validator's optional() would skip the whole chain, this first check too.
  field('smtp_host')
    .custom(whenSmtp((v) => !blank(v)), 'Enter the server’s name, for example smtp.example.com.')
    .check((v) => blank(v) || (typeof v === 'string' && HOST.test(v.trim())), 'Enter only the server’s name, for example smtp.example.com: no smtp://, port or slash.'),
  field('smtp_port').optional().check((v) => /^\d{1,5}$/.test(String(v).trim()) && Number(v) >= 1 && Number(v) <= 65535, 'Enter a port between 1 and 65535, for example 587.'),
  field('smtp_security').optional().string().oneOf(SMTP_SECURITY),
  field('smtp_user').optional().string().maxLength(255),
  field('smtp_password').optional().string().maxLength(1000),
];

/** The SMTP parts of the relay form as the API's url (`smtp://user:password@host:port`), or null for another kind. */
export function smtpUrlOf(body: Record<string, unknown>): string | null {
  if (body.kind !== 'smtp' || blank(body.smtp_host)) return null;
  const security = body.smtp_security === 'tls' ? 'tls' : 'starttls';
  const url = new URL(`${security === 'tls' ? 'smtps' : 'smtp'}://placeholder`);
  url.hostname = String(body.smtp_host).trim();
  url.port = String(blank(body.smtp_port) ? SMTP_DEFAULT_PORT[security] : Number(body.smtp_port));
  if (!blank(body.smtp_user)) url.username = encodeURIComponent(String(body.smtp_user).trim());
  if (!blank(body.smtp_password)) url.password = encodeURIComponent(String(body.smtp_password));
  return url.toString().replace(/\/$/, '');
}

/** The relay form as the service's input: the API's, with the url made of its parts. */
export function relayFormInputOf(req: Request): RelayInput {
  return { ...relayInputOf(req), url: smtpUrlOf(req.body ?? {}) };
}
