import { ctxOf } from '../http/context';
import { currentTimeZone, timeZoneOptions } from '../lib/time-zones';
import type { Services } from '../services';
import { onInvalid } from './errors';
import type { WebRoutes } from './routes';
import type { Views } from './views';

/** Account settings: the name, and the time zone that schedules are read in. */
/**
 * What the settings page shows (also re-rendered by a refused password change): the current
 * zone names with their offset now, and the account's zone under its current name.
 */
export function settingsForm(account: { time_zone: string } | undefined) {
  const values = account && { ...account, time_zone: currentTimeZone(account.time_zone) ?? account.time_zone };
  return { title: 'Settings', timeZones: timeZoneOptions(new Date()), values };
}

export function mountSettings(routes: WebRoutes, { accounts }: Services, views: Views): void {
  routes.get('/settings', (req, res) => {
    views.page(req, res, 'settings.njk', settingsForm(req.account));
  });

  routes.post('/settings', onInvalid('settings.njk', () => settingsForm(undefined)), async (req, res) => {
    await accounts.updateSettings(ctxOf(req).userId, { name: req.body.name, time_zone: req.body.time_zone });
    views.redirect(res, '/settings', 'Settings saved.');
  });
}
