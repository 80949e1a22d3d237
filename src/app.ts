import type { ServerResponse } from 'node:http';
import path from 'node:path';
import express, { Express, RequestHandler } from 'express';
import helmet from 'helmet';
import type { Logger } from 'pino';
import { createApiRouter } from './api';
import type { Config } from './config';
import { compressWhenAccepted } from './http/compress';
import { redactTokens, requestLog } from './http/request-log';
import { lazy } from './lib/lazy';
import { API_PREFIX, PUBLIC_DIR } from './lib/paths';
import type { Services } from './services';
import { schedulePreviewRouter } from './web/schedule-preview';
import { verifySenderRouter } from './web/verify-sender';
import { createTrackingRouter } from './web/tracking';
import { createUnsubscribeRouter } from './web/unsubscribe';
import { createSubscribeRouter } from './web/subscribe';
import { createWebhookRouter } from './api/webhooks';
import { apiDocsRouter } from './web/api-docs';
import { createOperations } from './web/operations';
import { createWebViewRouter } from './web/web-view';
import { createArchiveRouter } from './web/archive';

export interface AppDeps {
  config: Config;
  services: Services;
  logger: Logger;
}

export { redactTokens };

/**
 * helmet's headers for everything outside the dashboard (which sets its own): the public pages
 * (preference page, verification), the API and static files. They must work on the origin in
 * BASE_URL: only an https one may ask browsers to upgrade requests (on a plain-http origin,
 * `upgrade-insecure-requests` sends the preference form and the stylesheet to an https port
 * nobody listens on), to remember https (HSTS), or isolate the window (COOP, which browsers
 * ignore with a console error on an untrustworthy origin).
 */
function publicHeaders(config: Config) {
  const https = config.baseUrl.startsWith('https:');
  return helmet({
    contentSecurityPolicy: { directives: { upgradeInsecureRequests: https ? [] : null } },
    strictTransportSecurity: https,
    crossOriginOpenerPolicy: https,
  });
}

/** Builds the Express app from its parts, without listening (the server and the tests use it). */
export function createApp({ config, services, logger }: AppDeps): Express {
  const app = express();
  app.disable('x-powered-by');
  // The client's address (sign-in limits, logs) is the socket's peer unless TRUST_PROXY names the proxies.
  app.set('trust proxy', config.trustProxy);
  app.set('query parser', 'extended');

  const operations = createOperations(config, services);
  app.use(operations.timing, requestLog(app, logger), publicHeaders(config), compressWhenAccepted());

  // Public files (template previews, email images) are shown by API clients and mail readers on other origins.
  const publicFiles = { maxAge: '1h', setHeaders: (res: ServerResponse) => res.setHeader('Cross-Origin-Resource-Policy', 'cross-origin') };
  const schedulePreview = schedulePreviewRouter(services, logger);
  // A schedule's design_url and image are "under {base_url}" (the reference), and public: before the keyed API.
  // The operator's probes and metrics, outside the API: no keys, no rate limit.
  app.use(operations.router);
  app.use(API_PREFIX, schedulePreview);
  app.use(`${API_PREFIX}/templates`, express.static(path.join(PUBLIC_DIR, 'templates'), publicFiles));
  app.use(API_PREFIX, createApiRouter(config, services, logger));
  app.use(verifySenderRouter(services, logger));
  app.use(createTrackingRouter(services, logger));
  app.use(createUnsubscribeRouter(services, logger));
  app.use(createSubscribeRouter(services, config, logger));
  app.use(createWebViewRouter(services, logger));
  app.use(createArchiveRouter(services, logger));
  app.use(createWebhookRouter(services, logger));
  app.use(apiDocsRouter());
  app.use(schedulePreview);
  app.use(express.static(PUBLIC_DIR, publicFiles));
  // The dashboard answers only its own paths; public pages may mount before or after it,
  // but the HTML 404 must stay last. It is built on the first request that reaches it: a
  // process serving only the API, or a worker, never loads its pages, views and form checks.
  const dashboard = lazy(() => (require('./web') as typeof import('./web')).createDashboard(config, services, logger));
  const dashboardRouter: RequestHandler = (req, res, next) => dashboard().router(req, res, next);
  const dashboardNotFound: RequestHandler = (req, res, next) => dashboard().notFound(req, res, next);
  app.use(dashboardRouter);
  app.use(dashboardNotFound);
  return app;
}
