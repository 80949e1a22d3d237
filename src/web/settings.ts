import { ctxOf } from '../http/context';
import { TIME_ZONES } from '../lib/time';
import type { Services } from '../services';
import { onInvalid } from './errors';
import type { WebRoutes } from './routes';
import type { Views } from './views';

/** Account settings: the name, the time zone that schedules are read in, open and click tracking. */
/** What the settings page shows besides the account (also re-rendered by a refused password change). */
export const SETTINGS_FORM = {
  title: 'Settings',
  timeZones: TIME_ZONES,
  switches: [
    { value: 1, label: 'On' },
    { value: 0, label: 'Off' },
  ],
};

export function mountSettings(routes: WebRoutes, { accounts }: Services, views: Views): void {
  const form = SETTINGS_FORM;

  routes.get('/settings', (req, res) => {
    views.page(req, res, 'settings.njk', { ...form, values: req.account });
  });

  routes.post('/settings', onInvalid('settings.njk', () => form), async (req, res) => {
    const { name, time_zone, track_opens, track_clicks } = req.body;
    await accounts.updateSettings(ctxOf(req).userId, { name, time_zone, track_opens, track_clicks });
    views.redirect(res, '/settings', 'Settings saved.');
  });
}
