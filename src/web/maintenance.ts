import type { Request } from 'express';
import { ctxOf } from '../http/context';
import type { Services } from '../services';
import { onInvalid } from './errors';
import type { WebRoutes } from './routes';
import type { Views } from './views';

const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;
const text = (value: unknown) => (typeof value === 'string' ? value.trim() : '');

/**
 * The Maintenance page: clean-ups of the account's own data, each in two steps. The first
 * (a GET, nothing changes) counts what would be deleted; the second (a POST with the same
 * value) deletes it. What the worker deletes by itself is on the settings page.
 */
export function mountMaintenance(routes: WebRoutes, { cleanup }: Services, views: Views): void {
  const pageData = (req: Request, extra: Record<string, unknown> = {}) => ({
    title: 'Maintenance',
    values: { days: text(req.query.days) || '365', before: text(req.query.before), ...req.body },
    ...extra,
  });

  routes.get('/maintenance', (req, res) => {
    views.page(req, res, 'maintenance/index.njk', pageData(req));
  });

  routes.get('/maintenance/contacts', onInvalid('maintenance/index.njk', (req) => pageData(req)), async (req, res) => {
    const days = text(req.query.days);
    const { count } = await cleanup.countLapsedContacts(ctxOf(req), days);
    views.page(req, res, 'maintenance/index.njk', pageData(req, { contactsCheck: { days, count } }));
  });

  routes.post('/maintenance/contacts', onInvalid('maintenance/index.njk', (req) => pageData(req)), async (req, res) => {
    const { count } = await cleanup.deleteLapsedContacts(ctxOf(req), text(req.body.days));
    views.redirect(res, '/maintenance', count ? `${plural(count, 'contact', 'contacts')} deleted.` : 'No contact matched any more: nothing was deleted.');
  });

  routes.get('/maintenance/engagement', onInvalid('maintenance/index.njk', (req) => pageData(req)), async (req, res) => {
    const before = text(req.query.before);
    const { count } = await cleanup.countEngagement(ctxOf(req), before);
    views.page(req, res, 'maintenance/index.njk', pageData(req, { engagementCheck: { before, count } }));
  });

  routes.post('/maintenance/engagement', onInvalid('maintenance/index.njk', (req) => pageData(req)), async (req, res) => {
    const { count } = await cleanup.deleteEngagement(ctxOf(req), text(req.body.before));
    views.redirect(res, '/maintenance', count ? `The opens and clicks of ${plural(count, 'message', 'messages')} were deleted.` : 'No opens or clicks matched any more: nothing was deleted.');
  });
}
