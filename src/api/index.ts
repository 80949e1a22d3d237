import express,{ Router } from 'express';
import type { Logger } from 'pino';
import type { Config } from '../config';
import { sendFailure } from '../lib/envelope';
import type { Services } from '../services';
import { requireApiKeys } from './auth';
import { mountAutomations } from './automations';
import { mountContactTypes } from './contact-types';
import { mountContacts } from './contacts';
import { mountSegments } from './segments';
import { mountCountryStateCity } from './country-state-city';
import { mountDesignTemplates } from './design-templates';
import { apiErrorHandler } from './errors';
import { mountFields } from './fields';
import { mountGlobalUnsubscribes } from './global-unsubscribes';
import { mountSenders } from './senders';
import { mountSingleSends } from './single-sends';
import { apiRateLimit } from './rate-limit';
import { mountNotificationRecipients } from './notification-recipients';
import { ApiRoutes } from './routes';
import { mountUnsubscribeGroups } from './unsubscribe-groups';
import { mountSuppressions } from './suppressions';
import { mountExports } from './exports';
import { mountPrivacy } from './privacy';
import { mountOutgoingWebhooks } from './outgoing-webhooks';

/** The JSON API of the reference, mounted at /api/v1; `table` is its route table (tests walk it). */
export function createApiRouter(config: Config, services: Services, logger: Logger): Router & { table: ApiRoutes } {
  const routes = new ApiRoutes(config);
  mountContactTypes(routes, services);
  mountContacts(routes, services, config);
  mountSegments(routes, services);
  mountUnsubscribeGroups(routes, services);
  mountGlobalUnsubscribes(routes, services);
  mountNotificationRecipients(routes, services);
  mountFields(routes, services);
  mountDesignTemplates(routes, services);
  mountCountryStateCity(routes, services);
  mountSenders(routes, services);
  mountSingleSends(routes, services);
  mountAutomations(routes, services);
  mountSuppressions(routes, services);
  mountExports(routes, services);
  mountPrivacy(routes, services);
  mountOutgoingWebhooks(routes, services);

  const api = express.Router();
  // Unknown path or wrong method first, then rate limit and keys, then the routes.
  api.use(routes.guard);
  api.use(apiRateLimit(config.apiRateLimitPerMinute, services.rateLimits));
  api.use(requireApiKeys(services.accounts));
  api.use(routes.router);
  // A path the guard let through but no route matched (`/senders//`): still JSON, never Express's HTML page.
  api.use((_req, res) => sendFailure(res, 404, 'Not Found'));
  api.use(apiErrorHandler(logger));
  return Object.assign(api, { table: routes });
}
