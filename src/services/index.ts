import { createAccountsService } from './accounts';
import { createAudienceEvents } from './audience-events';
import { createContactTypesService } from './contact-types';
import { createContactsService } from './contacts';
import { createContactImportService } from './contact-import';
import { createSegmentsService } from './segments';
import type { ServiceDeps } from './context';

/** The composition root of the domain: every service, built once from its dependencies. */
export function createServices(deps: ServiceDeps) {
  const contactTypes = createContactTypesService(deps);
  const audienceEvents = createAudienceEvents();
  const contacts = createContactsService({ ...deps, contactTypes, events: audienceEvents });
  return {
    accounts: createAccountsService(deps),
    contactTypes,
    audienceEvents,
    contacts,
    contactImport: createContactImportService({ ...deps, contactTypes, contacts }),
    segments: createSegmentsService({ ...deps, contactTypes, events: audienceEvents }),
  };
}

export type Services = ReturnType<typeof createServices>;
