import { ctxOf } from '../http/context';
import { suppressionSearch } from '../http/inputs/suppressions';
import type { Services } from '../services';
import { pagerOf, pagingOf } from './paging';
import type { WebRoutes } from './routes';
import type { Views } from './views';

/**
 * A message's own HTML runs with nothing allowed: no script, no request to another site,
 * no form; shown only inside the Outbox page's sandboxed frame.
 */
export const MESSAGE_CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; font-src 'self'; sandbox; frame-ancestors 'self'";

const LIST = { 'outbox-list': 'outbox/macros.njk#list' } as const;

/** The Outbox: messages written as .eml files when no SMTP_URL is set, each account its own. */
export function mountOutbox(routes: WebRoutes, { outbox }: Services, views: Views): void {
  routes.get('/outbox', async (req, res) => {
    if (!outbox.enabled) return views.page(req, res, 'outbox/index.njk', { title: 'Outbox', enabled: false });
    const search = suppressionSearch(req) ?? '';
    const result = await outbox.list(ctxOf(req), pagingOf(req), search || undefined);
    views.page(req, res, 'outbox/index.njk', { title: 'Outbox', enabled: true, rows: result.rows, search, pager: pagerOf(req, result, '/outbox') }, { fragments: LIST });
  });

  routes.get('/outbox/:name', async (req, res) => {
    const message = await outbox.get(ctxOf(req), String(req.params.name));
    views.page(req, res, 'outbox/show.njk', { title: message.subject || '(no subject)', message });
  });

  routes.get('/outbox/:name/html', async (req, res) => {
    const message = await outbox.get(ctxOf(req), String(req.params.name));
    res.set({ 'Content-Security-Policy': MESSAGE_CSP, 'X-Frame-Options': 'SAMEORIGIN', 'Cache-Control': 'no-store' });
    res.type('html').send(message.html ?? '');
  });
}
