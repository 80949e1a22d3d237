import { createAccountsService } from './accounts';
import { createContactTypesService } from './contact-types';
import type { ServiceDeps } from './context';
import { createSendersService } from './senders';

/** The composition root of the domain: every service, built once from its dependencies. */
export function createServices(deps: ServiceDeps) {
  return {
    accounts: createAccountsService(deps),
    contactTypes: createContactTypesService(deps),
    senders: createSendersService(deps),
  };
}

export type Services = ReturnType<typeof createServices>;
