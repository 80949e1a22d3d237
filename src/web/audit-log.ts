import type { Request } from 'express';
import { ctxOf } from '../http/context';
import { auditFiltersOf } from '../http/inputs/audit-log';
import { AUDIT_ACTIONS, AuditAction } from '../lib/constants';
import type { Services } from '../services';
import { AUDIT_ACTOR_FILTER, AuditFilters, AuditRecord, isAuditActionFilter, sinceInstant } from '../services/accounts/audit-log';
import { pagerOf, pagingOf } from './paging';
import type { WebRoutes } from './routes';
import type { Views } from './views';

/** What each action is called on the page. */
export const AUDIT_ACTION_LABELS: Record<AuditAction, string> = {
  'user.signed_in': 'Signed in',
  'user.sign_in_failed': 'Failed to sign in',
  'user.signed_out': 'Signed out',
  'user.password_changed': 'Changed the password',
  'user.invited': 'Invited a person',
  'user.role_changed': 'Changed a role',
  'user.two_factor_enabled': 'Turned on two-step sign-in',
  'user.two_factor_disabled': 'Turned off two-step sign-in',
  'account.settings_changed': 'Changed the settings',
  'api_key.created': 'Made an API key',
  'api_key.deleted': 'Deleted an API key',
  'contact.created': 'Added a contact',
  'contact.updated': 'Changed a contact',
  'contact.deleted': 'Deleted contacts',
  'contacts.imported': 'Imported contacts',
  'contacts.exported': 'Exported addresses',
  'contact_type.created': 'Added a contact type',
  'contact_type.updated': 'Renamed a contact type',
  'contact_type.deleted': 'Deleted a contact type',
  'segment.created': 'Added a segment',
  'segment.updated': 'Changed a segment',
  'segment.deleted': 'Deleted a segment',
  'single_send.created': 'Created a single send',
  'single_send.updated': 'Changed a single send',
  'single_send.started': 'Started a single send',
  'single_send.scheduled': 'Scheduled a single send',
  'single_send.paused': 'Paused a single send',
  'single_send.resumed': 'Resumed a single send',
  'single_send.cancelled': 'Cancelled a single send',
  'single_send.deleted': 'Deleted a single send',
  'automation.created': 'Created an automation',
  'automation.updated': 'Changed an automation',
  'automation.live': 'Set an automation live',
  'automation.paused': 'Paused an automation',
  'automation.deleted': 'Deleted an automation',
  'template.created': 'Added a template',
  'template.updated': 'Changed a template',
  'template.deleted': 'Deleted a template',
  'sender.created': 'Added a sender',
  'sender.updated': 'Changed a sender',
  'sender.deleted': 'Deleted a sender',
  'unsubscribe_group.created': 'Added an unsubscribe group',
  'unsubscribe_group.updated': 'Changed an unsubscribe group',
  'unsubscribe_group.deleted': 'Deleted an unsubscribe group',
  'field.created': 'Added a custom field',
  'field.deleted': 'Deleted a custom field',
  'global_unsubscribe.added': 'Unsubscribed addresses from everything',
  'global_unsubscribe.removed': 'Removed global unsubscribes',
  'suppression.removed': 'Removed suppressed addresses',
  'webhook.created': 'Added a webhook',
  'webhook.updated': 'Changed a webhook',
  'webhook.deleted': 'Deleted a webhook',
  'user.updated': 'Changed a person',
  'user.enabled': 'Enabled a person',
  'user.disabled': 'Disabled a person',
  'user.deleted': 'Removed a person',
  'user.ownership_transferred': 'Handed over ownership',
  'user.invitation_accepted': 'Accepted an invitation',
  'user.invitation_resent': 'Sent an invitation again',
  'user.password_reset': 'Reset a password by mailed link',
  'field.updated': 'Changed a custom field',
  'suppression.added': 'Suppressed addresses',
  'notification_recipient.created': 'Added a notification recipient',
  'notification_recipient.deleted': 'Removed a notification recipient',
  'signup_form.created': 'Created a signup form',
  'signup_form.updated': 'Changed a signup form',
  'signup_form.deleted': 'Deleted a signup form',
  'sending_domain.created': 'Added a sending domain',
  'sending_domain.verified': 'A sending domain was verified',
  'sending_domain.deleted': 'Deleted a sending domain',
  'sending_domain.provider_paused': 'Paused a sending domain\'s mail to a provider',
  'sending_domain.provider_resumed': 'Resumed a sending domain\'s mail to a provider',
  'sending_domain.warmup_changed': 'Changed a sending domain\'s warm-up',
  'relay.created': 'Added a relay',
  'relay.updated': 'Changed a relay',
  'relay.deleted': 'Deleted a relay',
  'recipient_report.exported': 'Downloaded a recipient report',
  'engagement.exported': 'Downloaded engagement',
  'unsubscribe_group.recipients_added': 'Added addresses to an unsubscribe group',
  'unsubscribe_group.recipients_removed': 'Removed addresses from an unsubscribe group',
  'contact.erased': 'Erased an address',
  'contact.privacy_exported': 'Downloaded everything held about an address',
  'single_send.resent': 'Resent a single send to non-openers',
  'single_send.ab_test_saved': 'Saved an A/B test',
  'single_send.ab_winner_chosen': 'Chose an A/B test winner',
  'single_send.failed_retried': 'Retried the failed messages',
  'transactional.sent': 'Sent transactional mail',
  'transactional.retried': 'Retried a transactional message',
  'transactional_template.created': 'Added a transactional template',
  'transactional_template.updated': 'Changed a transactional template',
  'transactional_template.deleted': 'Deleted a transactional template',
};

const ACTOR_KINDS = [
  { value: 'user', label: 'Any person' },
  { value: 'api_key', label: 'Any API key' },
  { value: 'system', label: 'The service itself' },
];

/** Where an entry's record is shown in the dashboard, when it has a page. */
function recordLink(entry: AuditRecord): string | null {
  if (!entry.record_id) return null;
  if (entry.record_type === 'single_send' && entry.action !== 'single_send.deleted') return `/single-sends/${encodeURIComponent(entry.record_id)}`;
  if (entry.record_type === 'contact' && entry.action !== 'contact.deleted') return `/contacts/${encodeURIComponent(entry.record_id)}/edit`;
  return null;
}

export function presentAuditEntry(entry: AuditRecord) {
  return {
    ...entry,
    label: AUDIT_ACTION_LABELS[entry.action as AuditAction] ?? entry.action,
    who: entry.actor.type === 'system' ? 'The service' : entry.actor.name,
    kind: entry.actor.type === 'api_key' ? 'API key' : entry.actor.type === 'user' ? 'Person' : 'Service',
    link: recordLink(entry),
  };
}

const LIST = { 'audit-list': 'audit-log/macros.njk#list' } as const;

/** The filters of the page's query, each dropped when it is not one the log understands (the form offers only those). */
function pageFilters(req: Request): AuditFilters {
  const given = auditFiltersOf(req);
  return {
    actor: given.actor && AUDIT_ACTOR_FILTER.test(given.actor) ? given.actor : undefined,
    action: given.action && isAuditActionFilter(given.action) ? given.action : undefined,
    since: given.since && sinceInstant(given.since) ? given.since.slice(0, 10) : undefined,
  };
}

/** The Audit log page: who did what, newest first, with filters by who, what and since when. */
export function mountAuditLog(routes: WebRoutes, { auditLog }: Services, views: Views): void {
  routes.get('/audit-log', async (req, res) => {
    const ctx = ctxOf(req);
    const filters = pageFilters(req);
    const [result, actors] = await Promise.all([auditLog.list(ctx, filters, pagingOf(req)), auditLog.actors(ctx)]);
    views.page(req, res, 'audit-log/index.njk', {
      title: 'Audit log',
      filters,
      entries: result.rows.map(presentAuditEntry),
      pager: pagerOf(req, result, '/audit-log'),
      actorOptions: [...ACTOR_KINDS, ...actors.map((a) => ({ value: `${a.type}:${a.id}`, label: a.name }))],
      actionOptions: AUDIT_ACTIONS.map((a) => ({ value: a, label: AUDIT_ACTION_LABELS[a] })),
      filtered: Boolean(filters.actor || filters.action || filters.since),
      retentionDays: auditLog.retentionDays(),
    }, { fragments: LIST });
  });
}
