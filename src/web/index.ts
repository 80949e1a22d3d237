import express,{ RequestHandler,Router } from 'express';
import helmet from 'helmet';
import type { Logger } from 'pino';
import type { Config } from '../config';
import type { Services } from '../services';
import { formObject } from '../http/body';
import { vendorAssets } from './assets';
import { dashboardDirectives } from './csp';
import { mountAutomations } from './automations';
import { mountApiKeys } from './api-keys';
import { mountAuth, requireSession, SESSION_COOKIE } from './auth';
import { mountContactImport } from './contact-import';
import { mountContactTypes } from './contact-types';
import { mountContacts } from './contacts';
import { mountCustomFields } from './custom-fields';
import { mountGlobalUnsubscribes } from './global-unsubscribes';
import { mountExports } from './exports';
import { mountPrivacy } from './privacy';
import { Cookies } from './cookies';
import { mountDesignTemplates } from './design-templates';
import { mountDesignEditor } from './editor';
import { verifyCsrf } from './csrf';
import { webErrorHandler, webNotFound } from './errors';
import { mountHome } from './home';
import { mountNotificationRecipients } from './notification-recipients';
import { mountOutbox } from './outbox';
import { WebRoute, WebRoutes } from './routes';
import { mountSegments } from './segments';
import { mountSenders } from './senders';
import { mountSettings } from './settings';
import { mountSingleSends } from './single-sends';
import { mountUnsubscribeGroups } from './unsubscribe-groups';
import { mountEngagement } from './engagement';
import { createViewEnvironment, Views } from './views';
import { mountSuppressions } from './suppressions';
import { mountSignupForms } from './signup-forms';
import { mountWebhooks } from './webhooks';
import { mountRelays } from './relays';
import { mountSendFollowUps } from './send-follow-ups';
import { mountMaintenance } from './maintenance';
import { mountAbTests } from './ab-tests';
import { mountDomains } from './domains';
import { mountTeam } from './team';
import { mountTeamAccess } from './team-access';
import { mountProfile } from './profile';
import { mountAuditLog } from './audit-log';
import { mountTwoFactor } from './two-factor';
import { mountTransactional } from './transactional';

/** Every page group of the dashboard; each mounts its routes on the shared route table. */
type PageGroup = (routes: WebRoutes, services: Services, views: Views, config: Config) => void;
const PAGE_GROUPS: PageGroup[] = [
  mountHome,
  mountContactImport,
  mountContacts,
  mountContactTypes,
  mountSegments,
  mountCustomFields,
  mountUnsubscribeGroups,
  mountGlobalUnsubscribes,
  mountSingleSends,
  mountAutomations,
  mountSenders,
  mountDesignTemplates,
  mountNotificationRecipients,
  mountOutbox,
  mountApiKeys,
  mountSettings,
  mountSuppressions,
  mountEngagement,
  mountExports,
  mountPrivacy,
  mountSignupForms,
  mountWebhooks,
  mountRelays,
  mountDesignEditor,
  mountSendFollowUps,
  mountMaintenance,
  mountAbTests,
  mountDomains,
  mountTeam,
  mountAuditLog,
  mountTransactional,
];

export interface Dashboard {
  /** Answers only the dashboard's own paths; anything else falls through. */
  router: Router;
  /** The HTML 404 page, mounted after every other router. */
  notFound: RequestHandler;
  /** Every state-changing path (the tests check each one refuses a missing CSRF token). */
  stateChanging: readonly string[];
  /** Every route, as `[method, path]`. */
  routes: readonly (readonly [string, string])[];
  /** The routes answered without a session, as `[method, path]`. */
  publicRoutes: readonly (readonly [string, string])[];
  /** Every route with what it does (reads, changes, exports). */
  described: readonly WebRoute[];
}

/**
 * The Content-Security-Policy the pages are written for: nothing inline, nothing from
 * elsewhere. Scripts are public/assets/app.js and htmx; styles public/assets/app.css.
 */
function dashboardHeaders(config: Config): RequestHandler {
  const https = config.baseUrl.startsWith('https:');
  return helmet({
    contentSecurityPolicy: {
      useDefaults: false,
      directives: dashboardDirectives(https),
    },
    strictTransportSecurity: https,
    crossOriginOpenerPolicy: https,
    referrerPolicy: { policy: 'same-origin' },
  });
}

/** The htmx admin dashboard at `/`, over the same services as the API. */
export function createDashboard(config: Config, services: Services, logger: Logger): Dashboard {
  const cookies = new Cookies(config.baseUrl.startsWith('https:'));
  const views = new Views(createViewEnvironment(), cookies);
  const headers = dashboardHeaders(config);
  const routes = new WebRoutes({
    headers,
    auth: requireSession(services.sessions, cookies),
    body: [express.urlencoded({ extended: true, limit: config.maxBodyBytes, parameterLimit: 5000 }), formObject],
    csrf: verifyCsrf((_req, res) => res.locals.csrfToken as string | undefined),
  });

  mountAuth(routes, services, views, cookies, config);
  mountTeamAccess(routes, services, views, cookies, config);
  mountProfile(routes, services, views, cookies);
  mountTwoFactor(routes, services, views, (req) => cookies.read(req, SESSION_COOKIE) ?? '');
  for (const mount of PAGE_GROUPS) mount(routes, services, views, config);

  const router = express.Router();
  router.use(...vendorAssets());
  router.use(routes.router);
  router.use(webErrorHandler(views, logger));
  return { router, notFound: express.Router().use(headers, webNotFound(views)), stateChanging: routes.stateChanging, routes: routes.all, publicRoutes: routes.open, described: routes.described };
}
