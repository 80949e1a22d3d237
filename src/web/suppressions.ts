import type { Request, Response } from 'express';
import { ctxOf } from '../http/context';
import { suppressionSearch } from '../http/inputs/suppressions';
import { bulkIds } from '../lib/http';
import { splitAddresses } from '../lib/validation';
import type { Services } from '../services';
import { onInvalid } from './errors';
import { addressListInput, counted } from './forms';
import { pagerOf, pagingOf } from './paging';
import type { WebRoutes } from './routes';
import type { Views } from './views';

const LIST = { 'suppression-list': 'suppressions/macros.njk#list' } as const;

/** Addresses that bounced, complained or were added by hand: search, read why, reinstate. The service of `/suppressions`. */
export function mountSuppressions(routes: WebRoutes, { suppressions }: Services, views: Views): void {
  const data = async (req: Request) => {
    const search = suppressionSearch(req) ?? '';
    const result = await suppressions.list(ctxOf(req), pagingOf(req), search || undefined);
    return { title: 'Suppressed addresses', rows: result.rows, search, pager: pagerOf(req, result, '/suppressions') };
  };
  const page = async (req: Request, res: Response) => views.page(req, res, 'suppressions/index.njk', await data(req), { fragments: LIST });

  routes.get('/suppressions', page);

  routes.post('/suppressions', onInvalid('suppressions/index.njk', data), ...addressListInput(), async (req, res) => {
    const addresses = splitAddresses(req.body.email_address);
    await suppressions.add(ctxOf(req), addresses, 'dashboard');
    views.redirect(res, '/suppressions', counted(addresses.length, 'Address', 'addresses', 'suppressed'));
  });

  routes.post('/suppressions/reinstate', async (req, res) => {
    const ids = bulkIds(req.body.ids, 'ids');
    await suppressions.remove(ctxOf(req), ids);
    await views.changed(req, res, '/suppressions', counted(ids.length, 'Address', 'addresses', 'reinstated'), () => page(req, res));
  });
}
