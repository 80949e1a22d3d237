import { MESSAGE_KIND } from '../lib/constants';
import { transactionalKind } from './transactional/message-kind';
import { createTransactionalService } from './transactional/transactional';
import { createAccountsService } from './accounts/accounts';
import { createAudienceEvents } from './audience/audience-events';
import { createContactTypesService } from './audience/contact-types';
import { createContactsService } from './audience/contacts';
import { createContactImportService } from './audience/contact-import';
import { createContactExportService } from './audience/contact-export';
import { createPrivacyService } from './audience/privacy';
import { createSegmentsService } from './audience/segments';
import { createSegmentMemberships, wallClock } from './audience/segment-memberships';
import { createImportJobsService } from './audience/import-jobs';
import { createSendInsightsService } from './campaigns/send-insights';
import type { ServiceDeps } from './context';
import { Turns } from '../lib/turns';
import { createDesignTemplatesService } from './campaigns/design-templates';
import { createFieldsService } from './audience/fields';
import { createGeographyService } from './reference/geography';
import { createGlobalUnsubscribesService } from './audience/global-unsubscribes';
import { createNotificationRecipientsService } from './accounts/notification-recipients';
import { createUnsubscribeGroupsService } from './audience/unsubscribe-groups';
import { createAutomationSchedulesService } from './campaigns/automation-schedules';
import { createAutomationsService } from './campaigns/automations';
import { createCampaignRefs } from './campaigns/campaign-refs';
import { createSendersService } from './campaigns/senders';
import { createSingleSendsService } from './campaigns/single-sends';
import { createOutboxService } from './delivery/reports';
import { createOverviewService } from './accounts/overview';
import { createSessionsService } from './accounts/sessions';
import { createEventsService } from './delivery/notices';
import { createTrackingService } from './delivery/recipients';
import { createSuppressionsService } from './delivery/feedback';
import { createFeedbackService } from './delivery/feedback';
import { createWebhooksService } from './delivery/feedback';
import { createRateLimitsService } from './accounts/rate-limits';
import { createEngagementService } from './campaigns/engagement';
import { createSendControlsService } from './campaigns/send-controls';
import { createTestSendsService } from './campaigns/test-sends';
import { createSignupFormsService } from './audience/signup-forms';
import { createSignupsService } from './audience/signups';
import { createOutgoingWebhooksService } from './integrations/outgoing-webhooks';
import { createRelaysService } from './delivery/relays';
import { createDesignEditorService } from './campaigns/design-editor';
import { createOwnTemplatesService } from './campaigns/own-templates';
import { createPreferencesService } from './delivery/recipients';
import { createRecipientReportService } from './delivery/reports';
import { createDomainClassifier, createProviderFiguresService, createProviderGuard, warmupToday } from './delivery/providers';
import { createMxLookup } from '../mail/domain-records';
import { createResendsService } from './campaigns/resends';
import { createCleanupService } from './maintenance/cleanup';
import { createRetentionService } from './maintenance/retention';
import { createHealthService } from './operations/health';
import { createOperationalCounts } from './operations/operational-counts';
import { createAbTestsService } from './campaigns/ab-tests';
import { createWebViewService } from './delivery/recipients';
import { createArchiveService } from './campaigns/archive';
import { createAuditLogService } from './accounts/audit-log';
import { createTwoFactorService } from './accounts/two-factor';
import { createSingleSignOnService } from './accounts/single-sign-on';
import { createTeamUsersService } from './accounts/team-users';
import { createSendingDomainsService } from './accounts/sending-domains';
import { createApiKeysService } from './accounts/api-keys';
import { AutomationHooks, runAutomations } from './campaigns/enrolment';
import { createJourneysService, wakeWaiters } from './journeys';
import { createSendLedger, SendHooks, SendLedger, SendLedgerDeps, SendLedgerOptions } from './delivery/sending';

/** What a sending worker's ledger tells the rest of the service about. */
export type WorkerHooks = SendHooks & AutomationHooks;

/**
 * The send ledger a worker runs on, with its own way out, clock and hooks. Due single sends and
 * A/B tests feed it; automation steps do too, asked every `automationsEveryMs` at most
 * (enrolment compares whole targets).
 */
export function createWorkerLedger(
  deps: Omit<SendLedgerDeps, 'feeds' | 'hooks'> & { hooks?: WorkerHooks },
  options: SendLedgerOptions & { automationsEveryMs?: number } = {},
): SendLedger {
  const { db, config, hooks = {} } = deps;
  const automations = {
    startDue: (at: Date) => runAutomations(db, at, hooks, { requireDomainAuth: config.domains?.requireDomainAuth }),
    everyMs: options.automationsEveryMs ?? 5000,
  };
  const transactional = transactionalKind({ db, secret: deps.secret, baseUrl: config.baseUrl, signingSecret: deps.secret });
  return createSendLedger({ ...deps, feeds: [automations], kinds: { [MESSAGE_KIND.transactional]: transactional } }, options);
}

/** The composition root of the domain: every service, built once from its dependencies. */
export function createServices(deps: ServiceDeps) {
  // Previews and test sends render one at a time, each after the event loop had a turn.
  const renderTurns = new Turns();
  // Opens and clicks keep engagement segments current (memberships is built below, before any event).
  const tracking = createTrackingService({
    ...deps,
    engaged: (ctx, emailKey, trx) => memberships.refreshEngaged(ctx, emailKey, trx),
    journeyEvent: (trx, message, event, at) => wakeWaiters(trx, message, event, at),
  });
  const events = createEventsService(deps);
  const contactTypes = createContactTypesService(deps);
  const unsubscribeGroups = createUnsubscribeGroupsService(deps);
  const senders = createSendersService({ ...deps, events });
  const designTemplates = createDesignTemplatesService(deps);
  const fields = createFieldsService(deps);
  const audienceEvents = createAudienceEvents();
  const segmentClock = wallClock();
  const segments = createSegmentsService({ ...deps, contactTypes, fields, events: audienceEvents, clock: segmentClock });
  const memberships = createSegmentMemberships({ fields, events: audienceEvents, clock: segmentClock });
  const refs = createCampaignRefs({ ...deps, contactTypes, unsubscribeGroups, senders, designTemplates, segments });
  const automations = createAutomationsService({ ...deps, refs, segments });
  const contacts = createContactsService({ ...deps, contactTypes, fields, events: audienceEvents, memberships });
  const contactImport = createContactImportService({ ...deps, contactTypes, fields, contacts, events });
  const abTests = createAbTestsService(deps);
  const singleSends = createSingleSendsService({ ...deps, refs, senders, tracking, abTests });
  const feedback = createFeedbackService({ ...deps, events });
  const signupForms = createSignupFormsService({ ...deps, fields, contactTypes });
  const webView = createWebViewService(deps);
  const accounts = createAccountsService(deps);
  const providerFigures = createProviderFiguresService({ db: deps.db, lines: deps.config.deliverability, classifier: createDomainClassifier({ db: deps.db, lookupMx: createMxLookup(deps.config.domains.dnsServers), logger: deps.logger }) });
  return {
    accounts,
    transactional: createTransactionalService(deps),
    contactTypes,
    unsubscribeGroups,
    globalUnsubscribes: createGlobalUnsubscribesService(deps),
    notificationRecipients: createNotificationRecipientsService(deps),
    fields,
    designTemplates,
    geography: createGeographyService(deps),
    senders,
    singleSends,
    sendControls: createSendControlsService(deps),
    testSends: createTestSendsService({ ...deps, singleSends, renderTurns }),
    automations,
    automationSchedules: createAutomationSchedulesService({ ...deps, refs, automations, senders }),
    journeys: createJourneysService(deps),
    sessions: createSessionsService(deps),
    overview: createOverviewService(deps),
    outbox: createOutboxService({ ...deps, tracking }),
    tracking,
    events,
    audienceEvents,
    contacts,
    contactImport,
    importJobs: createImportJobsService({ ...deps, contactImport, contactTypes }),
    segments,
    sendInsights: createSendInsightsService({ ...deps, singleSends, contacts, fields, renderTurns }),
    suppressions: createSuppressionsService(deps),
    feedback,
    webhooks: createWebhooksService({ ...deps, feedback }),
    rateLimits: createRateLimitsService(deps),
    engagement: createEngagementService(deps),
    contactExport: createContactExportService({ ...deps, fields, contactTypes, segments, unsubscribeGroups }),
    privacy: createPrivacyService({ ...deps, fields }),
    signupForms,
    signups: createSignupsService({ ...deps, forms: signupForms, contacts, fields }),
    outgoingWebhooks: createOutgoingWebhooksService(deps),
    relays: createRelaysService(deps),
    designEditor: createDesignEditorService({ ...deps, fields, contacts, renderTurns }),
    ownTemplates: createOwnTemplatesService(deps),
    preferences: createPreferencesService(deps),
    recipientReport: createRecipientReportService(deps),
    providerFigures,
    /** A sending domain's warm-up: today's cap and use per provider (its page). */
    warmups: { today: (domain: { id: number; warmup: number[] | null; warmup_started_at: string | null }) => warmupToday(deps.db, domain) },
    providerGuard: createProviderGuard({ db: deps.db, figures: providerFigures, settings: deps.config.deliverability }),
    resends: createResendsService(deps),
    retention: createRetentionService(deps),
    cleanup: createCleanupService({ ...deps, contacts }),
    health: createHealthService(deps),
    operationalCounts: createOperationalCounts(deps),
    abTests,
    webView,
    archive: createArchiveService({ ...deps, webView }),
    auditLog: createAuditLogService(deps),
    twoFactor: createTwoFactorService(deps),
    singleSignOn: createSingleSignOnService(deps),
    teamUsers: createTeamUsersService({ ...deps, forgetKey: accounts.forgetKey }),
    // Sending domains.
    sendingDomains: createSendingDomainsService({ ...deps, events }),
    apiKeys: createApiKeysService({ ...deps, accounts }),
  };
}

export type Services = ReturnType<typeof createServices>;
