import { ctxOf } from '../http/context';
import { currentTimeZone, timeZoneOptions } from '../lib/time-zones';
import type { Services } from '../services';
import { onInvalid } from './errors';
import type { WebRoutes } from './routes';
import type { Views } from './views';

/** Account settings: the name, the time zone that schedules are read in, open and click tracking. */

/** The choices of an open or click tracking switch (settings, composer, automation steps). */
export const TRACKING_SWITCHES = [
  { value: 1, label: 'On' },
  { value: 0, label: 'Off' },
];

/**
 * What the settings page shows (also re-rendered by a refused password change): the current
 * zone names with their offset now, and the account's zone under its current name.
 */
export function settingsForm(account: { time_zone: string } | undefined) {
  const values = account && { ...account, time_zone: currentTimeZone(account.time_zone) ?? account.time_zone };
  return { title: 'Settings', timeZones: timeZoneOptions(new Date()), switches: TRACKING_SWITCHES, values };
}

export function mountSettings(routes: WebRoutes, { accounts }: Services, views: Views): void {
  routes.get('/settings', (req, res) => {
    views.page(req, res, 'settings.njk', settingsForm(req.account));
  });

  routes.post('/settings', onInvalid('settings.njk', () => settingsForm(undefined)), async (req, res) => {
    const { name, time_zone, track_opens, track_clicks } = req.body;
    await accounts.updateSettings(ctxOf(req).userId, { name, time_zone, track_opens, track_clicks });
    views.redirect(res, '/settings', 'Settings saved.');
  });
}
