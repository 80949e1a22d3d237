import { createAccountsService } from './accounts';
import { createAudienceEvents } from './audience-events';
import { createContactTypesService } from './contact-types';
import { createContactsService } from './contacts';
import { createContactImportService } from './contact-import';
import { createSegmentsService } from './segments';
import { createImportJobsService } from './import-jobs';
import { createSendInsightsService } from './send-insights';
import type { ServiceDeps } from './context';
import { createDesignTemplatesService } from './design-templates';
import { createFieldsService } from './fields';
import { createGeographyService } from './geography';
import { createGlobalUnsubscribesService } from './global-unsubscribes';
import { createNotificationRecipientsService } from './notification-recipients';
import { createUnsubscribeGroupsService } from './unsubscribe-groups';
import { createAutomationSchedulesService } from './automation-schedules';
import { createAutomationsService } from './automations';
import { createCampaignRefs } from './campaign-refs';
import { createSendersService } from './senders';
import { createSingleSendsService } from './single-sends';
import { createOutboxService } from './outbox';
import { createOverviewService } from './overview';
import { createSessionsService } from './sessions';
import { createEventsService } from './events';
import { createTrackingService } from './tracking';

/** The composition root of the domain: every service, built once from its dependencies. */
export function createServices(deps: ServiceDeps) {
  const tracking = createTrackingService(deps);
  const events = createEventsService(deps);
  const contactTypes = createContactTypesService(deps);
  const unsubscribeGroups = createUnsubscribeGroupsService(deps);
  const senders = createSendersService({ ...deps, events });
  const designTemplates = createDesignTemplatesService(deps);
  const fields = createFieldsService(deps);
  const audienceEvents = createAudienceEvents();
  const segments = createSegmentsService({ ...deps, contactTypes, fields, events: audienceEvents });
  const refs = createCampaignRefs({ ...deps, contactTypes, unsubscribeGroups, senders, designTemplates, segments });
  const automations = createAutomationsService({ ...deps, refs });
  const contacts = createContactsService({ ...deps, contactTypes, fields, events: audienceEvents });
  const contactImport = createContactImportService({ ...deps, contactTypes, fields, contacts, events });
  const singleSends = createSingleSendsService({ ...deps, refs, senders, tracking });
  return {
    accounts: createAccountsService(deps),
    contactTypes,
    unsubscribeGroups,
    globalUnsubscribes: createGlobalUnsubscribesService(deps),
    notificationRecipients: createNotificationRecipientsService(deps),
    fields,
    designTemplates,
    geography: createGeographyService(deps),
    senders,
    singleSends,
    automations,
    automationSchedules: createAutomationSchedulesService({ ...deps, refs, automations, senders }),
    sessions: createSessionsService(deps),
    overview: createOverviewService(deps),
    outbox: createOutboxService(deps),
    tracking,
    events,
    audienceEvents,
    contacts,
    contactImport,
    importJobs: createImportJobsService({ ...deps, contactImport, contactTypes }),
    segments,
    sendInsights: createSendInsightsService({ ...deps, singleSends, contacts }),
  };
}

export type Services = ReturnType<typeof createServices>;
