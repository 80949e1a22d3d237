import type { RetentionDays } from '../config';
import { ctxOf } from '../http/context';
import { currentTimeZone, timeZoneOptions } from '../lib/time-zones';
import type { Services } from '../services';
import { onInvalid } from './errors';
import type { WebRoutes } from './routes';
import type { Views } from './views';

/** Account settings: the name, the time zone that schedules are read in, open and click tracking, the public archive's address. */

/** The choices of an open or click tracking switch (settings, composer, automation steps). */
export const TRACKING_SWITCHES = [
  { value: 1, label: 'On' },
  { value: 0, label: 'Off' },
];

/**
 * What the settings page shows (also re-rendered by a refused password change): the current
 * zone names with their offset now, and the account's zone under its current name.
 */
export function settingsForm(account: { time_zone: string } | undefined, retention: RetentionDays, archiveUrl: string) {
  const values = account && { ...account, time_zone: currentTimeZone(account.time_zone) ?? account.time_zone };
  return { title: 'Settings', timeZones: timeZoneOptions(new Date()), switches: TRACKING_SWITCHES, values, retention: retentionRows(retention), archiveUrl };
}

const kept = (days: number) => (days === 0 ? 'Kept for ever' : `Deleted after ${days} ${days === 1 ? 'day' : 'days'}`);

/** What the worker deletes by itself and when, in the words the settings page uses. */
function retentionRows(days: RetentionDays) {
  return [
    { what: 'Who opened and clicked each message', setting: 'RETENTION_EVENTS_DAYS', kept: kept(days.events), note: 'counted from the day the message was sent; the totals stay' },
    { what: 'The record of each message of a finished single send, and the service\'s own mail', setting: 'RETENTION_MESSAGES_DAYS', kept: kept(days.messages), note: 'the send keeps its totals; the unsubscribe link of a deleted message stops working' },
    { what: 'Webhook deliveries that arrived or were given up', setting: 'RETENTION_WEBHOOK_DELIVERIES_DAYS', kept: kept(days.webhookDeliveries), note: 'those still being tried are kept' },
    { what: 'Expired sign-ins, confirmation links and one-time tokens', setting: null, kept: 'Deleted once expired', note: null },
  ];
}

export function mountSettings(routes: WebRoutes, { accounts, retention, archive, auditLog }: Services, views: Views): void {
  routes.get('/settings', async (req, res) => {
    views.page(req, res, 'settings.njk', settingsForm(req.account, retention.policy(), await archive.address(ctxOf(req), req.account?.archive_id)));
  });

  routes.post('/settings', onInvalid('settings.njk', async (req) => settingsForm(undefined, retention.policy(), await archive.address(ctxOf(req), req.account?.archive_id))), async (req, res) => {
    const { name, time_zone, track_opens, track_clicks } = req.body;
    await accounts.updateSettings(ctxOf(req).userId, { name, time_zone, track_opens, track_clicks });
    await auditLog.record(ctxOf(req), { action: 'account.settings_changed', recordType: 'account', recordId: ctxOf(req).userId, summary: 'Name, time zone or tracking' });
    views.redirect(res, '/settings', 'Settings saved.');
  });
}
