import { createAccountsService } from './accounts';
import { createContactTypesService } from './contact-types';
import type { ServiceDeps } from './context';
import { createGlobalUnsubscribesService } from './global-unsubscribes';
import { createUnsubscribeGroupsService } from './unsubscribe-groups';
import { createOutboxService } from './outbox';
import { createOverviewService } from './overview';
import { createSessionsService } from './sessions';

/** The composition root of the domain: every service, built once from its dependencies. */
export function createServices(deps: ServiceDeps) {
  return {
    accounts: createAccountsService(deps),
    contactTypes: createContactTypesService(deps),
    unsubscribeGroups: createUnsubscribeGroupsService(deps),
    globalUnsubscribes: createGlobalUnsubscribesService(deps),
    sessions: createSessionsService(deps),
    overview: createOverviewService(deps),
    outbox: createOutboxService(deps),
  };
}

export type Services = ReturnType<typeof createServices>;
