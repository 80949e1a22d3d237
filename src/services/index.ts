import { createAccountsService } from './accounts';
import { createAudienceEvents } from './audience-events';
import { createContactTypesService } from './contact-types';
import { createContactsService } from './contacts';
import type { ServiceDeps } from './context';

/** The composition root of the domain: every service, built once from its dependencies. */
export function createServices(deps: ServiceDeps) {
  const contactTypes = createContactTypesService(deps);
  const audienceEvents = createAudienceEvents();
  return {
    accounts: createAccountsService(deps),
    contactTypes,
    audienceEvents,
    contacts: createContactsService({ ...deps, contactTypes, events: audienceEvents }),
  };
}

export type Services = ReturnType<typeof createServices>;
