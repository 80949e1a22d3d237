import type { Knex } from 'knex';
import * as domain from './20261122_0001_domain';
import * as customFieldNames from './20261122_0100_custom_field_names';
import * as audienceListOrder from './20261122_0200_audience_list_order';
import * as sendLedger from './20261122_0500_send-ledger';
import * as automationEnrolments from './20261122_0501_automation-enrolments';
import * as imports from './20261122_0800_imports';
import * as contactTypeDuplicates from './20261123_0630_contact-type-duplicates';
import * as contactTypeNames from './20261123_0631_contact-type-names';
import * as idnaEmailKeys from './20261123_0632_idna-email-keys';
import * as senderVerifyMessage from './20261123_0633_sender-verify-message';
import * as verificationMailTokens from './20261123_0634_verification-mail-tokens';
import * as sendFailures from './20261122_0610_send-failures';
import * as countFailed from './20261122_0611_count-failed';
import * as bounceFeedback from './20261122_0700_bounce-feedback';
import * as suppressionCategories from './20261122_0701_suppression-categories';
import * as sendAlerts from './20261122_0702_send-alerts';
import * as sharedRateLimits from './20261123_0760_shared-rate-limits';
import * as engagement from './20261123_0740_engagement';
import * as engagementData from './20261123_0741_engagement-data';
import * as importSkippedRows from './20261123_0720_import-skipped-rows';
import * as importUploadPath from './20261123_0721_import-upload-path';
import * as contactsReferenceChecks from './20261124_0950_contacts-reference-checks';
import * as signupForms from './20261125_1000_signup-forms';
import * as outgoingWebhooks from './20261125_1010_outgoing-webhooks';
import * as accountTemplates from './20261125_1020_account-templates';
import * as contactsTypeCountIndex from './20261126_1100_contacts-type-count-index';
import * as providerWebhookTokens from './20261126_1942_provider-webhook-tokens';
import * as signupMailSlots from './20261126_1959_signup-mail-slots';
import * as resendAudience from './20261126_2250_resend-audience';
import * as retention from './20261126_2252_retention';
import * as templateErrors from './20261126_2314_template-errors';
import * as workerHeartbeats from './20261126_2323_worker-heartbeats';
import * as publicArchive from './20261126_2326_public-archive';
import * as abTests from './20261126_2330_ab-tests';
import * as timeZones from './20261126_2330_time-zones';
import * as largeAccounts from './20261126_2331_large-accounts';
import * as teamUsers from './20261127_0147_team-users';
import * as relays from './20261127_0150_relays';
import * as unloggedRateLimits from './20261127_0230_unlogged-rate-limits';
import * as sendingDomains from './20261127_0241_sending-domains';
import * as signupFormSender from './20261127_0244_signup-form-sender';
import * as auditLog from './20261127_0252_audit-log';
import * as twoFactor from './20261127_0253_two-factor';
import * as singleSignOn from './20261127_0254_single-sign-on';
import * as segmentEngagement from './20261127_0300_segment-engagement';
import * as signupFormFields from './20261127_0329_signup-form-fields';
import * as sqliteContactSearch from './20261127_0520_sqlite-contact-search';
import * as automationPauseReason from './20261127_0530_automation-pause-reason';
import * as segmentCityIndex from './20261127_0540_segment-city-index';
import * as keyMakers from './20261129_0800_key-makers';
import * as keyMakersFromLog from './20261129_0801_key-makers-from-log';
import * as oneResend from './20261129_0820_one-resend';
import * as linkVersions from './20261129_0830_link-versions';
import * as journeys from './20261129_1300_journeys';
import * as relayTlsVerify from './20261129_0831_relay-tls-verify';
import * as sendPauseReason from './20261129_1100_send-pause-reason';
import * as abTestDecision from './20261129_1101_ab-test-decision';
import * as fieldLabels from './20261129_1130_field-labels';
import * as transactional from './20261129_1200_transactional';
import * as sendExpansion from './20261129_1500_send-expansion';
import * as relayTests from './20261129_1150_relay-tests';
import * as bounceClasses from './20261129_1400_bounce-classes';
import * as recipientDomains from './20261129_1401_recipient-domains';
import * as providerThrottles from './20261129_1402_provider-throttles';
import * as providerPauses from './20261129_1403_provider-pauses';
import * as warmup from './20261129_1404_warmup';
import * as instanceBounces from './20261129_1410_instance-bounces';

/**
 * The ordered list of migrations. A static list (instead of a directory scan) makes the
 * same migrations load from TypeScript in tests and from compiled JavaScript in dist/.
 * Landed migrations never change: add a new file and append it here.
 */
export const migrations: ReadonlyArray<[name: string, migration: Knex.Migration]> = [
  ['20261122_0001_domain', domain],
  ['20261122_0100_custom_field_names', customFieldNames],
  ['20261122_0200_audience_list_order', audienceListOrder],
  ['20261122_0500_send-ledger', sendLedger],
  ['20261122_0501_automation-enrolments', automationEnrolments],
  ['20261122_0800_imports', imports],
  ['20261123_0630_contact-type-duplicates', contactTypeDuplicates],
  ['20261123_0631_contact-type-names', contactTypeNames],
  ['20261123_0632_idna-email-keys', idnaEmailKeys],
  ['20261123_0633_sender-verify-message', senderVerifyMessage],
  ['20261123_0634_verification-mail-tokens', verificationMailTokens],
  ['20261122_0610_send-failures', sendFailures],
  ['20261122_0611_count-failed', countFailed],
  ['20261122_0700_bounce-feedback', bounceFeedback],
  ['20261122_0701_suppression-categories', suppressionCategories],
  ['20261122_0702_send-alerts', sendAlerts],
  ['20261123_0760_shared-rate-limits', sharedRateLimits],
  ['20261123_0740_engagement', engagement],
  ['20261123_0741_engagement-data', engagementData],
  ['20261123_0720_import-skipped-rows', importSkippedRows],
  ['20261123_0721_import-upload-path', importUploadPath],
  ['20261124_0950_contacts-reference-checks', contactsReferenceChecks],
  ['20261125_1000_signup-forms', signupForms],
  ['20261125_1010_outgoing-webhooks', outgoingWebhooks],
  ['20261125_1020_account-templates', accountTemplates],
  ['20261126_1100_contacts-type-count-index', contactsTypeCountIndex],
  ['20261126_1942_provider-webhook-tokens', providerWebhookTokens],
  ['20261126_1959_signup-mail-slots', signupMailSlots],
  ['20261126_2250_resend-audience', resendAudience],
  ['20261126_2252_retention', retention],
  ['20261126_2314_template-errors', templateErrors],
  ['20261126_2323_worker-heartbeats', workerHeartbeats],
  ['20261126_2326_public-archive', publicArchive],
  ['20261126_2330_ab-tests', abTests],
  ['20261126_2330_time-zones', timeZones],
  ['20261126_2331_large-accounts', largeAccounts],
  ['20261127_0147_team-users', teamUsers],
  ['20261127_0150_relays', relays],
  ['20261127_0230_unlogged-rate-limits', unloggedRateLimits],
  ['20261127_0241_sending-domains', sendingDomains],
  ['20261127_0244_signup-form-sender', signupFormSender],
  ['20261127_0252_audit-log', auditLog],
  ['20261127_0253_two-factor', twoFactor],
  ['20261127_0254_single-sign-on', singleSignOn],
  ['20261127_0300_segment-engagement', segmentEngagement],
  ['20261127_0329_signup-form-fields', signupFormFields],
  ['20261127_0520_sqlite-contact-search', sqliteContactSearch],
  ['20261127_0530_automation-pause-reason', automationPauseReason],
  ['20261127_0540_segment-city-index', segmentCityIndex],
  ['20261129_0800_key-makers', keyMakers],
  ['20261129_0801_key-makers-from-log', keyMakersFromLog],
  ['20261129_0820_one-resend', oneResend],
  ['20261129_0830_link-versions', linkVersions],
  ['20261129_0831_relay-tls-verify', relayTlsVerify],
  ['20261129_1100_send-pause-reason', sendPauseReason],
  ['20261129_1101_ab-test-decision', abTestDecision],
  ['20261129_1130_field-labels', fieldLabels],
  ['20261129_1150_relay-tests', relayTests],
  ['20261129_1200_transactional', transactional],
  ['20261129_1300_journeys', journeys],
  ['20261129_1400_bounce-classes', bounceClasses],
  ['20261129_1401_recipient-domains', recipientDomains],
  ['20261129_1402_provider-throttles', providerThrottles],
  ['20261129_1403_provider-pauses', providerPauses],
  ['20261129_1404_warmup', warmup],
  ['20261129_1410_instance-bounces', instanceBounces],
  ['20261129_1500_send-expansion', sendExpansion],
];

export const migrationSource: Knex.MigrationSource<[string, Knex.Migration]> = {
  async getMigrations() {
    return [...migrations];
  },
  getMigrationName([name]) {
    return name;
  },
  async getMigration([, migration]) {
    return migration;
  },
};
