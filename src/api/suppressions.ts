import { sendSuccess } from '../lib/envelope';
import { splitAddresses } from '../lib/validation';
import { field, validate } from '../http/validation';
import { ctxOf } from '../http/context';
import { listMessage, pagingOf } from '../http/paging';
import { suppressionSearch } from '../http/inputs/suppressions';
import type { Services } from '../services';
import { deleteById } from './crud';
import { ApiRoutes } from './routes';

/** Extension: the account's suppression list (bounces, complaints, addresses added by hand). */
export function mountSuppressions(routes: ApiRoutes, { suppressions }: Services): void {
  routes.get('/suppressions', async (req, res) => {
    const search = suppressionSearch(req);
    sendSuccess(res, listMessage('suppressions', await suppressions.list(ctxOf(req), pagingOf(req), search)));
  });

  routes.post('/suppressions/save', validate(field('email_address').required().addressList()), async (req, res) => {
    await suppressions.add(ctxOf(req), splitAddresses(req.body.email_address), 'api');
    sendSuccess(res, 'Added Successfully');
  });

  deleteById(routes, '/suppressions/delete', 'id', suppressions.remove);
}
