import type { NextFunction, Request, Response } from 'express';
import { ctxOf } from '../http/context';
import { relayInputOf, relayRules } from '../http/inputs/relays';
import { validate } from '../http/validation';
import { RELAY_KINDS } from '../lib/constants';
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
    const [result, usage] = await Promise.all([relays.list(ctx, pagingOf(req)), relays.usage(ctx)]);
    const rows = result.rows.map((r) => {
      const { sentLastHour, used } = usage.get(r.id) ?? { sentLastHour: 0, used: false };
      return { ...r, kindLabel: KIND_LABELS[r.kind], sentLastHour, untried: r.tested_at === null && !used };
    });
    const values = req.method === 'POST' ? { ...req.body, domains: Array.isArray(req.body.domains) ? req.body.domains.join(', ') : req.body.domains, api_key: '' } : { kind: 'smtp', tls_verify: '1' };
    return { title: 'Relays', rows, pager: pagerOf(req, result, '/relays'), kinds: KINDS, certificateChecks: CERTIFICATE_CHECKS, values };
  };

  routes.get('/relays', async (req, res) => views.page(req, res, 'relays/index.njk', await listData(req)));

  routes.post('/relays', domainsAsList, onInvalid('relays/index.njk', listData), validate(...relayRules()), async (req, res) => {
    const relay = await relays.save(ctxOf(req), relayInputOf(req));
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
