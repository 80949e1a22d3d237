import { DYNAMIC_CONTENT } from '../lib/constants';
import { sendSuccess } from '../lib/envelope';
import type { Services } from '../services';
import { holds, lists, ref } from './describe';
import { arrayOf } from './schema-words';
import { ApiRoutes } from './routes';
import { listMessage, PAGING_PARAMS, pagingOf } from '../http/paging';

export function mountDesignTemplates(routes: ApiRoutes, { designTemplates }: Services): void {
  routes.get('/get-design/template', { summary: 'List design templates', response: lists('templates', ref('DesignTemplate')), params: PAGING_PARAMS }, async (req, res) => {
    sendSuccess(res, listMessage('templates', await designTemplates.list(pagingOf(req))));
  });

  const doc = {
    summary: 'List the placeholder names',
    description: 'A subject, preheader or body writes a placeholder as `((name))`.',
    response: holds({ contents: arrayOf({ type: 'string', enum: [...DYNAMIC_CONTENT] }) }),
  };
  routes.get('/get-dynamic/content', doc, (_req, res) => {
    sendSuccess(res, { contents: designTemplates.dynamicContent() });
  });
}
