import { sendSuccess } from '../lib/envelope';
import { splitAddresses } from '../lib/validation';
import { field, validate } from '../http/validation';
import type { Services } from '../services';
import { bulkDelete, deleteById } from './crud';
import { lists, ref, says } from './describe';
import { ApiRoutes } from './routes';
import { ctxOf } from '../http/context';
import { listMessage, PAGING_PARAMS, pagingOf } from '../http/paging';

export function mountGlobalUnsubscribes(routes: ApiRoutes, { globalUnsubscribes }: Services): void {
  routes.get('/global-unsubscribes', { summary: 'List global unsubscribes', response: lists('unSubscribers', ref('Unsubscriber')), params: PAGING_PARAMS }, async (req, res) => {
    sendSuccess(res, listMessage('unSubscribers', await globalUnsubscribes.list(ctxOf(req), pagingOf(req))));
  });

  routes.post('/global-unsubscribes/save', { summary: 'Unsubscribe addresses from everything', response: says('Added Successfully') }, validate(field('email_address').required().addressList()), async (req, res) => {
    await globalUnsubscribes.add(ctxOf(req), splitAddresses(req.body.email_address));
    sendSuccess(res, 'Added Successfully');
  });

  deleteById(routes, '/global-unsubscribes/delete', 'id', globalUnsubscribes.remove, 'Remove a global unsubscribe');
  bulkDelete(routes, '/global-unsubscribes/bulk-delete', globalUnsubscribes.remove, 'Remove global unsubscribes');
}
