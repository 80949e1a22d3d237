import type { Services } from '../services';
import { ctxOf } from '../http/context';
import type { WebRoutes } from './routes';
import { withSendStatus } from './statuses';
import type { Views } from './views';

export function mountHome(routes: WebRoutes, { overview }: Services, views: Views): void {
  routes.get('/', async (req, res) => {
    const [totals, recent] = await Promise.all([overview.get(ctxOf(req)), overview.recentSends(ctxOf(req))]);
    views.page(req, res, 'home.njk', { title: 'Home', overview: totals, recent: recent.map(withSendStatus) });
  });
}
