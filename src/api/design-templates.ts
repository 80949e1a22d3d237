import { sendSuccess } from '../lib/envelope';
import type { Services } from '../services';
import { holds, lists, ref } from './describe';
import { strings } from './schema-words';
import { ApiRoutes } from './routes';
import { listMessage, PAGING_PARAMS, pagingOf } from '../http/paging';

export function mountDesignTemplates(routes: ApiRoutes, { designTemplates }: Services): void {
  routes.get('/get-design/template', { summary: 'List design templates', response: lists('templates', ref('DesignTemplate')), params: PAGING_PARAMS }, async (req, res) => {
    sendSuccess(res, listMessage('templates', await designTemplates.list(pagingOf(req))));
  });

  routes.get('/get-dynamic/content', { summary: 'List the placeholder names', response: holds({ contents: strings }) }, (_req, res) => {
    sendSuccess(res, { contents: designTemplates.dynamicContent() });
  });
}
