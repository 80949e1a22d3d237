import type { Request, Response } from 'express';
import { notificationRecipientRules } from '../http/inputs/notification-recipients';
import { ctxOf } from '../http/context';
import { bulkIds } from '../lib/http';
import { validate } from '../http/validation';
import type { Services } from '../services';
import { onInvalid } from './errors';
import { counted } from './forms';
import { pagerOf, pagingOf } from './paging';
import type { WebRoutes } from './routes';
import type { Views } from './views';

const LIST = { 'notification-recipient-list': 'notification-recipients/macros.njk#list' } as const;

/** Who is emailed about the account's events: the same service and rules as `/notification-recipient*`. */
export function mountNotificationRecipients(routes: WebRoutes, { notificationRecipients }: Services, views: Views): void {
  const data = async (req: Request) => {
    const result = await notificationRecipients.list(ctxOf(req), pagingOf(req));
    return { title: 'Notification recipients', rows: result.rows, pager: pagerOf(req, result, '/notification-recipients') };
  };
  const page = async (req: Request, res: Response) => views.page(req, res, 'notification-recipients/index.njk', await data(req), { fragments: LIST });

  routes.get('/notification-recipients', page);

  routes.post('/notification-recipients', onInvalid('notification-recipients/index.njk', data), validate(...notificationRecipientRules()), async (req, res) => {
    await notificationRecipients.save(ctxOf(req), { email_address: String(req.body.email_address), email_owner: String(req.body.email_owner) });
    views.redirect(res, '/notification-recipients', 'Recipient saved.');
  });

  routes.post('/notification-recipients/delete', async (req, res) => {
    const ids = bulkIds(req.body.ids, 'ids');
    await notificationRecipients.remove(ctxOf(req), ids);
    const flash = counted(ids.length, 'Recipient', 'recipients', 'removed');
    await views.changed(req, res, '/notification-recipients', flash, () => page(req, res));
  });
}
