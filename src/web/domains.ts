import type { Request, Response } from 'express';
import { ctxOf } from '../http/context';
import { validate } from '../http/validation';
import { domainRules } from '../http/inputs/sending-domains';
import { toId } from '../lib/http';
import type { Services } from '../services';
import { onInvalid } from './errors';
import { pagerOf, pagingOf } from './paging';
import type { WebRoutes } from './routes';
import type { Views } from './views';
import { providerPanel, sumDays } from './provider-figures';

/** Days of per-provider figures the domain's page sums. */
const PROVIDER_DAYS_SHOWN = 7;

/** What each record is for, in the words the page uses. */
const PURPOSE_LABELS: Record<string, string> = {
  dkim: 'DKIM key (signs your mail as this domain)',
  spf: 'SPF (the servers allowed to send for it)',
  dmarc: 'DMARC policy',
  return_path: 'Bounce address (return path)',
};

/**
 * What a domain that already has an SPF record adds to it: the terms of the proposed record
 * between its `v=spf1` and its closing `~all` (`include:…` with SPF_INCLUDE, else `mx`).
 */
export function spfTerms(value: string): string {
  return value.trim().split(/\s+/).slice(1, -1).join(' ');
}

/** Sending domains: the same service and rules as `/domains*` of the API. */
export function mountDomains(routes: WebRoutes, services: Services, views: Views): void {
  const { sendingDomains, providerFigures, providerGuard } = services;
  const idOf = (req: Request) => toId(req.params.id) ?? 0;
  const listData = async (req: Request) => {
    const result = await sendingDomains.list(ctxOf(req), pagingOf(req));
    return { title: 'Sending domains', rows: result.rows, pager: pagerOf(req, result, '/domains') };
  };
  const showPage = async (req: Request, res: Response) => {
    const domain = await sendingDomains.get(ctxOf(req), idOf(req));
    const days = await providerFigures.ofSendingDomain(ctxOf(req), domain.id, PROVIDER_DAYS_SHOWN);
    const byProvider = await providerPanel(services, sumDays(days), req.account!.time_zone);
    const pauses = await providerGuard.ofDomain(ctxOf(req), domain.id);
    const warmup = await services.warmups.today(domain);
    views.page(req, res, 'domains/show.njk', { title: domain.domain, domain, purposes: PURPOSE_LABELS, byProvider, pauses, warmup, providerDays: PROVIDER_DAYS_SHOWN, spfTerms });
  };

  routes.get('/domains', async (req, res) => views.page(req, res, 'domains/index.njk', await listData(req)));

  routes.post('/domains', onInvalid('domains/index.njk', listData), validate(...domainRules()), async (req, res) => {
    const domain = await sendingDomains.save(ctxOf(req), { domain: String(req.body.domain) });
    views.redirect(res, `/domains/${domain.id}`, 'Domain added. Publish its records at your DNS provider, then check it.');
  });

  routes.get('/domains/:id', showPage);

  // The guard paused this domain's mail to a provider: an admin lets it go on.
  routes.post('/domains/:id/resume', async (req, res) => {
    await providerGuard.resume(ctxOf(req), idOf(req), String(req.body.provider ?? ''));
    views.redirect(res, `/domains/${idOf(req)}`, 'Resumed: its queued mail to that provider goes out again.');
  });

  routes.post('/domains/:id/verify', async (req, res) => {
    const domain = await sendingDomains.verify(ctxOf(req), idOf(req));
    const flash = domain.status === 'verified' ? 'Verified: mail from this domain is now signed with its own key.' : 'Checked. Some records are not right yet; DNS changes can take a while to show.';
    views.redirect(res, `/domains/${domain.id}`, flash);
  });

  routes.post('/domains/:id/delete', async (req, res) => {
    await sendingDomains.remove(ctxOf(req), [idOf(req)]);
    views.redirect(res, '/domains', 'Domain deleted. Its mail is no longer signed with its key.');
  });
}
