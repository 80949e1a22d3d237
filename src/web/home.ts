import type { Services } from '../services';
import { ctxOf } from '../api/routes';
import type { WebRoutes } from './routes';
import type { Views } from './views';

export function mountHome(routes: WebRoutes, { overview }: Services, views: Views): void {
  routes.get('/', async (req, res) => {
    views.page(req, res, 'home.njk', { title: 'Home', overview: await overview.get(ctxOf(req)) });
  });
}
