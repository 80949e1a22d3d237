import { createAccountsService } from './accounts';
import { createContactTypesService } from './contact-types';
import type { ServiceDeps } from './context';
import { createDesignTemplatesService } from './design-templates';
import { createFieldsService } from './fields';
import { createGeographyService } from './geography';
import { createGlobalUnsubscribesService } from './global-unsubscribes';
import { createNotificationRecipientsService } from './notification-recipients';
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
    notificationRecipients: createNotificationRecipientsService(deps),
    fields: createFieldsService(deps),
    designTemplates: createDesignTemplatesService(deps),
    geography: createGeographyService(deps),
    sessions: createSessionsService(deps),
    overview: createOverviewService(deps),
    outbox: createOutboxService(deps),
  };
}

export type Services = ReturnType<typeof createServices>;
