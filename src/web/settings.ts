import { ctxOf } from '../http/context';
import { TIME_ZONES } from '../lib/time';
import type { Services } from '../services';
import { onInvalid } from './errors';
import type { WebRoutes } from './routes';
import type { Views } from './views';

/** Account settings: the name, and the time zone that schedules are read in. */
/** What the settings page shows besides the account (also re-rendered by a refused password change). */
export const SETTINGS_FORM = { title: 'Settings', timeZones: TIME_ZONES };

export function mountSettings(routes: WebRoutes, { accounts }: Services, views: Views): void {
  const form = SETTINGS_FORM;

  routes.get('/settings', (req, res) => {
    views.page(req, res, 'settings.njk', { ...form, values: req.account });
  });

  routes.post('/settings', onInvalid('settings.njk', () => form), async (req, res) => {
    await accounts.updateSettings(ctxOf(req).userId, { name: req.body.name, time_zone: req.body.time_zone });
    views.redirect(res, '/settings', 'Settings saved.');
  });
}
