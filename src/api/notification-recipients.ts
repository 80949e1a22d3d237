import { sendSuccess } from '../lib/envelope';
import { validate } from '../http/validation';
import type { Services } from '../services';
import { bulkDelete, deleteById } from './crud';
import { lists, ref, says } from './describe';
import { ApiRoutes } from './routes';
import { ctxOf } from '../http/context';
import { listMessage, PAGING_PARAMS, pagingOf } from '../http/paging';
import { notificationRecipientRules } from '../http/inputs/notification-recipients';

export function mountNotificationRecipients(routes: ApiRoutes, { notificationRecipients }: Services): void {
  routes.get('/notification-recipients', { summary: 'List notification recipients', response: lists('notifications', ref('NotificationRecipient')), params: PAGING_PARAMS }, async (req, res) => {
    sendSuccess(res, listMessage('notifications', await notificationRecipients.list(ctxOf(req), pagingOf(req))));
  });

  routes.post(
    '/notification-recipient/save',
    { summary: 'Add a notification recipient', response: says('Added Successfully') },
    validate(...notificationRecipientRules()),
    async (req, res) => {
      await notificationRecipients.save(ctxOf(req), { email_address: String(req.body.email_address), email_owner: String(req.body.email_owner) });
      sendSuccess(res, 'Added Successfully');
    },
  );

  deleteById(routes, '/notification-recipient/delete', 'id', notificationRecipients.remove, 'Remove a notification recipient');
  bulkDelete(routes, '/notification-recipient/bulk-delete', notificationRecipients.remove, 'Remove notification recipients');
}
