import express, { Router } from 'express';
import type { Logger } from 'pino';
import type { Config } from '../config';
import type { Services } from '../services';
import { requireApiKeys } from './auth';
import { mountContactTypes } from './contact-types';
import { mountContacts } from './contacts';
import { mountSegments } from './segments';
import { apiErrorHandler } from './errors';
import { apiRateLimit } from './rate-limit';
import { ApiRoutes } from './routes';

/** The JSON API of the reference, mounted at /api/v1. */
export function createApiRouter(config: Config, services: Services, logger: Logger): Router {
  const routes = new ApiRoutes(config);
  mountContactTypes(routes, services);
  mountContacts(routes, services, config);
  mountSegments(routes, services);

  const api = express.Router();
  // Unknown path or wrong method first, then rate limit and keys, then the routes.
  api.use(routes.guard);
  api.use(apiRateLimit(config.apiRateLimitPerMinute));
  api.use(requireApiKeys(services.accounts));
  api.use(routes.router);
  api.use(apiErrorHandler(logger));
  return api;
}
