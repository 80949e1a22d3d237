import { sendSuccess } from '../lib/envelope';
import { validate } from '../http/validation';
import { ctxOf } from '../http/context';
import { listMessage, PAGING_PARAMS, pagingOf } from '../http/paging';
import { auditFilterRules, auditFiltersOf } from '../http/inputs/audit-log';
import { AUDIT } from '../lib/constants';
import type { Services } from '../services';
import { lists, ref } from './describe';
import { ApiRoutes } from './routes';

/** Extension: the account's audit log, newest first. */
export function mountAuditLog(routes: ApiRoutes, { auditLog }: Services): void {
  // Always paged (a log only grows): page 1 of 100 unless asked otherwise.
  routes.get(
    '/audit-log',
    { summary: 'List the audit log, one page at a time (extension)', response: lists('auditLog', ref('AuditEntry')), params: PAGING_PARAMS },
    validate(...auditFilterRules()),
    async (req, res) => {
      const paging = pagingOf(req) ?? { page: 1, perPage: AUDIT.perPage };
      sendSuccess(res, listMessage('auditLog', await auditLog.list(ctxOf(req), auditFiltersOf(req), paging)));
    },
  );
}
