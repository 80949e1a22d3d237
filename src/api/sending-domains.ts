import { sendSuccess } from '../lib/envelope';
import { validate } from '../http/validation';
import { ctxOf } from '../http/context';
import { listMessage, PAGING_PARAMS, pagingOf } from '../http/paging';
import { domainIdOf, domainIdRule, domainInputOf, domainRules } from '../http/inputs/sending-domains';
import type { Services } from '../services';
import { deleteById } from './crud';
import { holds, lists, ref } from './describe';
import { ApiRoutes } from './routes';
import { DEFAULT_WARMUP } from '../services/delivery/providers';
import { param } from '../http/param-doc';

const WARMUP_PARAM = param('warmup', 'body', { type: ['array', 'null'], items: { type: 'integer', minimum: 1, maximum: 10_000_000 }, maxItems: 60 }, 'Daily caps per provider, or null for none.', true);

/** Extension: an account's sending domains, with the DNS records each needs and their check. */
export function mountSendingDomains(routes: ApiRoutes, { sendingDomains }: Services): void {
  routes.get('/domains', { summary: 'List sending domains (extension)', response: lists('domains', ref('SendingDomain')), params: PAGING_PARAMS }, async (req, res) => {
    sendSuccess(res, listMessage('domains', await sendingDomains.list(ctxOf(req), pagingOf(req))));
  });

  routes.post('/domains/save', { summary: 'Add a sending domain with its own DKIM key (extension)', response: holds({ domain: ref('SendingDomain') }) }, validate(...domainRules()), async (req, res) => {
    sendSuccess(res, { domain: await sendingDomains.save(ctxOf(req), domainInputOf(req)) });
  });

  routes.get('/domains/details', { summary: 'Show a sending domain and its DNS records (extension)', response: holds({ domain: ref('SendingDomain') }) }, validate(domainIdRule()), async (req, res) => {
    sendSuccess(res, { domain: await sendingDomains.get(ctxOf(req), domainIdOf(req)) });
  });

  routes.post('/domains/verify', {
    summary: 'Check a sending domain\'s DNS records now (extension)',
    description: 'Looks up its DKIM, SPF, DMARC (and return-path) records; it becomes verified once its DKIM record is right and a DMARC record applies. A DNS server that does not answer is a 409 and changes nothing.',
    response: holds({ domain: ref('SendingDomain') }),
  }, validate(domainIdRule()), async (req, res) => {
    sendSuccess(res, { domain: await sendingDomains.verify(ctxOf(req), domainIdOf(req)) });
  });

  routes.post('/domains/update', {
    summary: 'Set a sending domain\'s warm-up schedule (extension)',
    description: `\`warmup\`: daily caps per mailbox provider, one a day from today (e.g. [${DEFAULT_WARMUP.join(', ')}], the usual first week), then 30% more a day until no cap; null: no warm-up. Messages past a day's cap stay queued for the next day.`,
    response: holds({ domain: ref('SendingDomain') }),
    params: [WARMUP_PARAM],
  }, validate(domainIdRule()), async (req, res) => {
    sendSuccess(res, { domain: await sendingDomains.update(ctxOf(req), domainIdOf(req), { warmup: req.body.warmup }) });
  });

  deleteById(routes, '/domains/delete', 'id', sendingDomains.remove, 'Delete a sending domain (extension)');
}
