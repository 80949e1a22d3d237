import { sendSuccess } from '../lib/envelope';
import { validate } from '../http/validation';
import { ctxOf } from '../http/context';
import { listMessage, PAGING_PARAMS, pagingOf } from '../http/paging';
import { domainIdOf, domainIdRule, domainInputOf, domainRules } from '../http/inputs/sending-domains';
import type { Services } from '../services';
import { deleteById } from './crud';
import { holds, lists, ref } from './describe';
import { ApiRoutes } from './routes';

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

  deleteById(routes, '/domains/delete', 'id', sendingDomains.remove, 'Delete a sending domain (extension)');
}
