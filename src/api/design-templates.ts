import { sendSuccess } from '../lib/envelope';
import type { Services } from '../services';
import { ApiRoutes } from './routes';
import { listMessage, pagingOf } from '../http/paging';

export function mountDesignTemplates(routes: ApiRoutes, { designTemplates }: Services): void {
  routes.get('/get-design/template', async (req, res) => {
    sendSuccess(res, listMessage('templates', await designTemplates.list(pagingOf(req))));
  });

  routes.get('/get-dynamic/content', (_req, res) => {
    sendSuccess(res, { contents: designTemplates.dynamicContent() });
  });
}
