import { sendSuccess } from '../lib/envelope';
import { splitAddresses } from '../lib/validation';
import { field, validate } from '../http/validation';
import { ctxOf } from '../http/context';
import { listMessage, PAGING_PARAMS, pagingOf } from '../http/paging';
import { SUPPRESSION_CLASS_PARAM, SUPPRESSION_SEARCH_PARAM, suppressionClass, suppressionSearch } from '../http/inputs/suppressions';
import type { Services } from '../services';
import { deleteById } from './crud';
import { lists, ref, says } from './describe';
import { ApiRoutes } from './routes';

/** Extension: the account's suppression list (bounces, complaints, addresses added by hand). */
export function mountSuppressions(routes: ApiRoutes, { suppressions }: Services): void {
  routes.get('/suppressions', { summary: 'List suppressed addresses (extension)', response: lists('suppressions', ref('Suppression')), params: [...PAGING_PARAMS, SUPPRESSION_SEARCH_PARAM, SUPPRESSION_CLASS_PARAM] }, async (req, res) => {
    const search = suppressionSearch(req);
    sendSuccess(res, listMessage('suppressions', await suppressions.list(ctxOf(req), pagingOf(req), search, suppressionClass(req))));
  });

  routes.post('/suppressions/save', { summary: 'Suppress addresses (extension)', response: says('Added Successfully') }, validate(field('email_address').required().addressList()), async (req, res) => {
    await suppressions.add(ctxOf(req), splitAddresses(req.body.email_address), 'api');
    sendSuccess(res, 'Added Successfully');
  });

  deleteById(routes, '/suppressions/delete', 'id', suppressions.remove, 'Reinstate a suppressed address (extension)');
}
