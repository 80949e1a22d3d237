import { sendSuccess } from '../lib/envelope';
import { toId } from '../lib/http';
import { splitAddresses } from '../lib/validation';
import { field, validate } from '../http/validation';
import type { Services } from '../services';
import { bulkDelete, deleteById } from './crud';
import { holds, lists, ref, says } from './describe';
import { ApiRoutes } from './routes';
import { ctxOf } from '../http/context';
import { listMessage, PAGING_PARAMS, pagingOf } from '../http/paging';
import { groupFields, groupInput } from '../http/inputs/unsubscribe-groups';

export function mountUnsubscribeGroups(routes: ApiRoutes, { unsubscribeGroups }: Services): void {
  routes.get('/unsubscribes-groups', { summary: 'List unsubscribe groups', response: lists('unsubscribesGroups', ref('UnsubscribeGroupListed')), params: PAGING_PARAMS }, async (req, res) => {
    sendSuccess(res, listMessage('unsubscribesGroups', await unsubscribeGroups.list(ctxOf(req), pagingOf(req))));
  });

  routes.post('/unsubscribes-groups/save', { summary: 'Add an unsubscribe group', response: says('Saved Successfully') }, validate(...groupFields()), async (req, res) => {
    await unsubscribeGroups.add(ctxOf(req), groupInput(req));
    sendSuccess(res, 'Saved Successfully');
  });

  routes.get('/unsubscribes-groups/details', { summary: 'Show an unsubscribe group', response: holds({ unsubscribesGroup: ref('UnsubscribeGroup') }) }, validate(field('id', 'query').required().integer()), async (req, res) => {
    const unsubscribesGroup = await unsubscribeGroups.get(ctxOf(req), toId(req.query.id) ?? 0);
    sendSuccess(res, { unsubscribesGroup });
  });

  routes.post('/unsubscribes-groups/update', { summary: 'Change an unsubscribe group', response: says('Updated Successfully') }, validate(field('id', 'query').required().integer(), ...groupFields()), async (req, res) => {
    await unsubscribeGroups.update(ctxOf(req), toId(req.query.id) ?? 0, groupInput(req));
    sendSuccess(res, 'Updated Successfully');
  });

  routes.post(
    '/unsubscribes-groups/manually-add',
    { summary: 'Add addresses to an unsubscribe group', response: says('Added Successfully') },
    validate(field('unsubscribe_groups_id').required().integer(), field('email_address').required().addressList()),
    async (req, res) => {
      await unsubscribeGroups.addRecipients(ctxOf(req), toId(req.body.unsubscribe_groups_id) ?? 0, splitAddresses(req.body.email_address));
      sendSuccess(res, 'Added Successfully');
    },
  );

  routes.get('/unsubscribes-groups/recipients-list', { summary: 'List the recipients of an unsubscribe group', response: lists('recipients', ref('Unsubscriber')), params: PAGING_PARAMS }, validate(field('groupId', 'query').required().integer()), async (req, res) => {
    const result = await unsubscribeGroups.listRecipients(ctxOf(req), toId(req.query.groupId) ?? 0, pagingOf(req));
    sendSuccess(res, listMessage('recipients', result));
  });

  deleteById(routes, '/unsubscribes-groups/recipients-delete', 'id', unsubscribeGroups.removeRecipients, 'Remove a recipient from an unsubscribe group');
  bulkDelete(routes, '/unsubscribes-groups/recipients-bulk-delete', unsubscribeGroups.removeRecipients, 'Remove recipients from unsubscribe groups');
}
