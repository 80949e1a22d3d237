import type { NextFunction, Request, Response } from 'express';
import { ctxOf } from '../http/context';
import { relayFormInputOf, relayFormRules, SMTP_SECURITY } from '../http/inputs/relays';
import { validate } from '../http/validation';
import { RELAY_KINDS } from '../lib/constants';
import { ValidationError } from '../lib/errors';
import { toId } from '../lib/http';
import type { Services } from '../services';
import { onInvalid } from './errors';
import { pagerOf, pagingOf } from './paging';
import type { WebRoutes } from './routes';
import type { Views } from './views';

/** The kinds in plain words, for the select. */
const KIND_LABELS: Record<(typeof RELAY_KINDS)[number], string> = {
  smtp: 'SMTP server (Postfix, a provider\u2019s SMTP relay)',
  ses: 'Amazon SES (API)',
  sendgrid: 'SendGrid (API)',
  postmark: 'Postmark (API)',
  mailgun: 'Mailgun (API)',
};
const KINDS = RELAY_KINDS.map((value) => ({ value, label: KIND_LABELS[value] }));
const SECURITY_LABELS: Record<(typeof SMTP_SECURITY)[number], string> = {
  starttls: 'STARTTLS: encrypted after connecting (usually port 587)',
  tls: 'TLS: encrypted from the start (usually port 465)',
};
const SECURITY_CHOICES = SMTP_SECURITY.map((value) => ({ value, label: SECURITY_LABELS[value] }));

/** Where an SMTP relay's stored URL (without its password) points, in words: server, port and user. */
function serverOf(url: string | null): string | undefined {
  if (!url) return undefined;
  try {
    const parsed = new URL(url);
    const port = parsed.port || (parsed.protocol === 'smtps:' ? '465' : '587');
    return `${parsed.hostname}, port ${port}${parsed.username ? `, user ${decodeURIComponent(parsed.username)}` : ''}`;
  } catch {
    return undefined;
  }
}
/** `tls_verify`: a server with a self-signed certificate (a Postfix of one's own) is trusted only when asked. */
const CERTIFICATE_CHECKS = [
  { value: '1', label: 'Check the server\u2019s certificate' },
  { value: '0', label: 'Accept a self-signed certificate (the connection is still encrypted)' },
];

/**
 * The choice of relay on a send's or step's form: the account's usual choice first (empty), then
 * each relay; none at all when the account has no relay, so the form shows no picker.
 */
export async function relayChoices(relays: Services['relays'], req: Request): Promise<Array<{ value: string; label: string }>> {
  const { rows } = await relays.list(ctxOf(req));
  if (!rows.length) return [];
  return [
    { value: '', label: 'The usual choice: your highest-priority working relay for the sender\u2019s domain' },
    ...rows.map((r) => ({ value: String(r.id), label: `${r.name} \u2014 ${KIND_LABELS[r.kind]}${r.health === 'down' ? ' (down now)' : ''}` })),
  ];
}

/**
 * The service speaks of the API's `url`; the form has the server's name instead, so its
 * messages (a host not found, a private address) go there, in the form's words.
 */
function onServerField(err: unknown): never {
  if (!(err instanceof ValidationError) || !err.fields.url) throw err;
  const { url, ...rest } = err.fields;
  const said = url.map((m) => m.replace(/^The url host could not be found\.$/, 'This server could not be found.').replace(/^The url must point to a public address, not a private, loopback or link-local one\.$/, 'Enter a server on the internet: private, loopback and link-local addresses are refused.'));
  throw new ValidationError({ ...rest, smtp_host: said });
}

/** The form's domains are one comma- or space-separated text: a list for the shared rules. */
function domainsAsList(req: Request, _res: Response, next: NextFunction): void {
  if (req.body && typeof req.body.domains === 'string') req.body.domains = req.body.domains.split(/[\s,]+/).filter(Boolean);
  next();
}

/**
 * Relays: the SMTP servers and provider APIs the account's mail leaves through, with each
 * one's health (down until when, and why), its rate (its limit, and what it sent in the last
 * hour) and its last error; add, test and delete. The same service and rules as
 * `/api/v1/relays/*`. A password or API key is never shown again once saved.
 */
export function mountRelays(routes: WebRoutes, { relays }: Services, views: Views): void {
  const listData = async (req: Request) => {
    const ctx = ctxOf(req);
    const [result, sent] = await Promise.all([relays.list(ctx, pagingOf(req)), relays.sentLastHour(ctx)]);
    const rows = result.rows.map((r) => ({ ...r, kindLabel: KIND_LABELS[r.kind], server: r.kind === 'smtp' ? serverOf(r.url) : r.endpoint, sentLastHour: sent.get(r.id) ?? 0 }));
    // A refused form comes back without its password or API key: they are never shown again.
    const values = req.method === 'POST'
      ? { ...req.body, domains: Array.isArray(req.body.domains) ? req.body.domains.join(', ') : req.body.domains, api_key: '', smtp_password: '' }
      : { kind: 'smtp', tls_verify: '1', smtp_security: 'starttls', smtp_port: '587' };
    return { title: 'Relays', rows, pager: pagerOf(req, result, '/relays'), kinds: KINDS, certificateChecks: CERTIFICATE_CHECKS, securityChoices: SECURITY_CHOICES, values };
  };

  routes.get('/relays', async (req, res) => views.page(req, res, 'relays/index.njk', await listData(req)));

  routes.post('/relays', domainsAsList, onInvalid('relays/index.njk', listData), validate(...relayFormRules()), async (req, res) => {
    const relay = await relays.save(ctxOf(req), relayFormInputOf(req)).catch(onServerField);
    views.redirect(res, '/relays', `Relay \u201c${relay.name}\u201d added. Use \u201cTest\u201d to check it connects.`);
  });

  routes.post('/relays/:id/test', async (req, res) => {
    const result = await relays.test(ctxOf(req), toId(req.params.id) ?? 0);
    views.redirect(res, '/relays', result.ok ? 'The relay connected and accepted the login. Nothing was sent.' : `The relay could not be used: ${result.error}`);
  });

  routes.post('/relays/:id/delete', async (req, res) => {
    await relays.remove(ctxOf(req), [toId(req.params.id) ?? 0]);
    views.redirect(res, '/relays', 'Relay deleted. Its mail now goes through your other relays, or the service\u2019s own server.');
  });
}
