import express, { Router } from 'express';
import type { Logger } from 'pino';
import type { Config } from '../config';
import { sendFailure } from '../lib/envelope';
import type { Services } from '../services';
import { requireApiKeys } from './auth';
import { mountAutomations } from './automations';
import { mountJourneys } from './journeys';
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
import { mountOpenApi } from './openapi';
import { mountOutgoingWebhooks } from './outgoing-webhooks';
import { mountRelays } from './relays';
import { mountSendFollowUps, mountStepRecipients } from './send-follow-ups';
import { mountAbTests } from './ab-tests';
import { mountSendingDomains } from './sending-domains';
import { mountAutomationProviders, mountDomainProviders, mountSendProviders } from './provider-figures';
import { mountApiKeys, mountTeamUsers } from './team';
import { mountAuditLog } from './audit-log';
import { mountTransactional } from './transactional';

/**
 * The JSON API of the reference, mounted at /api/v1; `table` is its route table (tests walk it).
 */
export function createApiRouter(config: Config, services: Services, logger: Logger): Router & { table: ApiRoutes } {
  const routes = new ApiRoutes(config);
  // Each resource's routes are listed under its tag in the OpenAPI document.
  mountContactTypes(routes.tagged('Contact types'), services);
  mountContacts(routes.tagged('Contacts'), services, config);
  mountSegments(routes.tagged('Segments'), services);
  mountUnsubscribeGroups(routes.tagged('Unsubscribe groups'), services);
  mountGlobalUnsubscribes(routes.tagged('Global unsubscribes'), services);
  mountNotificationRecipients(routes.tagged('Notification recipients'), services);
  mountFields(routes.tagged('Fields'), services);
  mountDesignTemplates(routes.tagged('Templates and dynamic content'), services);
  mountCountryStateCity(routes.tagged('Country, state and city'), services);
  mountSenders(routes.tagged('Senders'), services);
  mountSingleSends(routes.tagged('Single sends'), services);
  mountAutomations(routes.tagged('Automations'), services);
  mountJourneys(routes.tagged('Automations'), services, config);
  mountSuppressions(routes.tagged('Suppressions'), services);
  mountExports(routes.tagged('Exports'), services);
  mountPrivacy(routes.tagged('Privacy'), services);
  mountOutgoingWebhooks(routes.tagged('Webhooks'), services);
  mountRelays(routes.tagged('Relays'), services);
  mountSendFollowUps(routes.tagged('Single sends'), services);
  mountAbTests(routes.tagged('Single sends'), services);
  mountStepRecipients(routes.tagged('Automations'), services);
  mountSendingDomains(routes.tagged('Sending domains'), services);
  mountSendProviders(routes.tagged('Single sends'), services);
  mountAutomationProviders(routes.tagged('Automations'), services);
  mountDomainProviders(routes.tagged('Sending domains'), services);
  mountTeamUsers(routes.tagged('Team'), services);
  mountApiKeys(routes.tagged('API keys'), services);
  mountAuditLog(routes.tagged('Audit log'), services);
  mountTransactional(routes.tagged('Transactional mail'), services);
  mountOpenApi(routes.tagged('Documentation'));

  const api = express.Router();
  // Unknown path or wrong method first, then the public routes (the document), then rate limit and keys, then the routes.
  api.use(routes.guard);
  api.use(routes.publicRouter);
  api.use(apiRateLimit(config.apiRateLimitPerMinute, services.rateLimits), requireApiKeys(services.accounts));
  api.use(routes.router);
  // A path the guard let through but no route matched (`/senders//`): still JSON, never Express's HTML page.
  api.use((_req, res) => sendFailure(res, 404, 'Not Found'));
  api.use(apiErrorHandler(logger));
  return Object.assign(api, { table: routes });
}
