import type { Config } from '../config';
import { ctxOf } from '../http/context';
import { contactExportFields, contactExportFilter } from '../http/inputs/exports';
import { streamCsv } from '../http/stream';
import { validate } from '../http/validation';
import { toId } from '../lib/http';
import type { Services } from '../services';
import type { WebRoutes } from './routes';
import type { Views } from './views';

/**
 * The dashboard's CSV downloads of its lists: the same streamed exports as the API's, their
 * times on the account's clock with the offset (the API keeps UTC).
 */
export function mountExports(routes: WebRoutes, { contactExport }: Services, _views: Views, _config: Config): void {
  routes.download('/contacts/export.csv', validate(...contactExportFields()), async (req, res) => {
    await streamCsv(res, 'contacts.csv', contactExport.contactsCsv(ctxOf(req), contactExportFilter(req)));
  });

  routes.download('/global-unsubscribes/export.csv', async (req, res) => {
    await streamCsv(res, 'global-unsubscribes.csv', contactExport.globalUnsubscribesCsv(ctxOf(req), { timeZone: req.account!.time_zone }));
  });

  routes.download('/unsubscribe-groups/:id/export.csv', async (req, res) => {
    const id = toId(req.params.id) ?? 0;
    await streamCsv(res, `unsubscribe-group-${id}.csv`, contactExport.groupRecipientsCsv(ctxOf(req), id, { timeZone: req.account!.time_zone }));
  });
}
