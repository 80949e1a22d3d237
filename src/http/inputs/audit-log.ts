import type { Request } from 'express';
import { AUDIT_ACTIONS } from '../../lib/constants';
import { AUDIT_ACTOR_FILTER, AUDIT_RECORD_KINDS, AuditFilters, isAuditActionFilter, sinceInstant } from '../../services/accounts/audit-log';
import { messages } from '../../lib/validation';
import { field } from '../validation';

/** The audit log's filters, shared by `GET /audit-log` and the dashboard's Audit log page. */
export const auditFilterRules = () => [
  field('actor', 'query').optional().string()
    .check((v) => AUDIT_ACTOR_FILTER.test(String(v)), messages.selected('actor'))
    .describe({ type: 'string', pattern: AUDIT_ACTOR_FILTER.source }, 'Only entries of this actor: user, api_key or system, or one user or key as user:12 or api_key:3.'),
  field('action', 'query').optional().string()
    .check((v) => isAuditActionFilter(String(v)), messages.selected('action'))
    .describe({ type: 'string', enum: [...AUDIT_ACTIONS, ...AUDIT_RECORD_KINDS] }, 'Only this action, or every action on one kind of record (single_send).'),
  field('since', 'query').optional().string()
    .check((v) => sinceInstant(String(v)) !== undefined, 'The since must be a date such as 2026-11-27 or a date and time such as 2026-11-27T09:30:00Z.')
    .describe({ type: 'string' }, 'Only entries at or after this date (UTC midnight) or date and time.'),
];

/** The filters of a request whose rules passed; blank ones are left out. */
export function auditFiltersOf(req: Request): AuditFilters {
  const q = req.query as Record<string, unknown>;
  const text = (name: string) => (typeof q[name] === 'string' && String(q[name]).trim() ? String(q[name]).trim() : undefined);
  return { actor: text('actor'), action: text('action'), since: text('since') };
}
