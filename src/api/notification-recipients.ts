import { LIMITS } from '../lib/constants';
import { sendSuccess } from '../lib/envelope';
import { field, validate } from '../lib/validation';
import type { Services } from '../services';
import { bulkDelete, deleteById } from './crud';
import { ApiRoutes, ctxOf, listMessage, pagingOf } from './routes';

/** Shared with the dashboard's notification-recipients form. */
export const notificationRecipientRules = () => [
  field('email_address').required().email(),
  // The reference's one odd message: 'The name field is required' without a period.
  field('email_owner').required('The name field is required').string().maxLength(LIMITS.string),
];

export function mountNotificationRecipients(routes: ApiRoutes, { notificationRecipients }: Services): void {
  routes.get('/notification-recipients', async (req, res) => {
    sendSuccess(res, listMessage('notifications', await notificationRecipients.list(ctxOf(req), pagingOf(req))));
  });

  routes.post(
    '/notification-recipient/save',
    validate(...notificationRecipientRules()),
    async (req, res) => {
      await notificationRecipients.save(ctxOf(req), { email_address: String(req.body.email_address), email_owner: String(req.body.email_owner) });
      sendSuccess(res, 'Added Successfully');
    },
  );

  deleteById(routes, '/notification-recipient/delete', 'id', notificationRecipients.remove);
  bulkDelete(routes, '/notification-recipient/bulk-delete', notificationRecipients.remove);
}
