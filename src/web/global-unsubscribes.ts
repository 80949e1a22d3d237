import type { Request, Response } from 'express';
import { ctxOf } from '../http/context';
import { bulkIds } from '../lib/http';
import { splitAddresses } from '../lib/validation';
import type { Services } from '../services';
import { onInvalid } from './errors';
import { addressListInput, counted } from './forms';
import { pagerOf, pagingOf } from './paging';
import type { WebRoutes } from './routes';
import type { Views } from './views';

const LIST = { 'global-unsubscribe-list': 'global-unsubscribes/macros.njk#list' } as const;

/** Addresses that never receive mail from this account: the same service as `/global-unsubscribes`. */
export function mountGlobalUnsubscribes(routes: WebRoutes, { globalUnsubscribes }: Services, views: Views): void {
  const data = async (req: Request) => {
    const result = await globalUnsubscribes.list(ctxOf(req), pagingOf(req));
    return { title: 'Global unsubscribes', rows: result.rows, pager: pagerOf(req, result, '/global-unsubscribes') };
  };
  const page = async (req: Request, res: Response) => views.page(req, res, 'global-unsubscribes/index.njk', await data(req), { fragments: LIST });

  routes.get('/global-unsubscribes', page);

  routes.post(
    '/global-unsubscribes',
    onInvalid('global-unsubscribes/index.njk', data),
    ...addressListInput(),
    async (req, res) => {
      const addresses = splitAddresses(req.body.email_address);
      await globalUnsubscribes.add(ctxOf(req), addresses);
      views.redirect(res, '/global-unsubscribes', counted(addresses.length, 'Address', 'addresses', 'added'));
    },
  );

  routes.post('/global-unsubscribes/delete', async (req, res) => {
    const ids = bulkIds(req.body.ids, 'ids');
    await globalUnsubscribes.remove(ctxOf(req), ids);
    await views.changed(req, res, '/global-unsubscribes', counted(ids.length, 'Address', 'addresses', 'removed'), () => page(req, res));
  });
}
