import type { Services } from '../services';
import { csvFile } from './describe';
import { ApiRoutes } from './routes';
import { ctxOf } from '../http/context';
import { contactExportFields, contactExportFilter } from '../http/inputs/exports';
import { streamCsv } from '../http/stream';
import { field, validate } from '../http/validation';
import { toId } from '../lib/http';

/** Extensions: streamed CSV exports of contacts and of unsubscribe lists. */
export function mountExports(routes: ApiRoutes, { contactExport }: Services): void {
  routes.get('/contacts/export', { effect: 'exports', summary: 'Export contacts as CSV (extension)', response: csvFile('The contacts, optionally of one contact type or segment.') }, validate(...contactExportFields()), async (req, res) => {
    await streamCsv(res, 'contacts.csv', contactExport.contactsCsv(ctxOf(req), contactExportFilter(req)));
  });

  routes.get('/global-unsubscribes/export', { effect: 'exports', summary: 'Export global unsubscribes as CSV (extension)', response: csvFile('The global unsubscribes.') }, async (req, res) => {
    await streamCsv(res, 'global-unsubscribes.csv', contactExport.globalUnsubscribesCsv(ctxOf(req)));
  });

  routes.get('/unsubscribes-groups/recipients-export', { effect: 'exports', summary: 'Export an unsubscribe group\'s recipients as CSV (extension)', response: csvFile('The group\'s recipients.') }, validate(field('groupId', 'query').required().integer()), async (req, res) => {
    const groupId = toId(req.query.groupId) ?? 0;
    await streamCsv(res, `unsubscribe-group-${groupId}.csv`, contactExport.groupRecipientsCsv(ctxOf(req), groupId));
  });
}
