import type { JsonSchema } from '../http/param-doc';
import { AUTOMATION_STATUS, AUTOMATION_TYPES, CUSTOM_FIELD_TYPES, SINGLE_SEND_STATUS, SUPPRESSION_REASONS, WAITING_TYPES } from '../lib/constants';
import type { ContactRecord } from '../services/audience/contact-records';
import type { ImportPreview, ImportSummary } from '../services/audience/contact-import';
import type { ContactTypeRecord } from '../services/audience/contact-types';
import type { FieldRecord } from '../services/audience/fields';
import type { ErasureCount, PrivacyExport } from '../services/audience/privacy';
import type { SegmentRecipientRecord, SegmentRecord } from '../services/audience/segment-records';
import type { UnsubscribeGroupRecord } from '../services/audience/unsubscribe-groups';
import type { UnsubscriberRecord } from '../services/shared/unsubscribers';
import type { NotificationRecipientRecord } from '../services/accounts/notification-recipients';
import type { ScheduleRecord } from '../services/campaigns/automation-schedules';
import type { AutomationRecord } from '../services/campaigns/automations';
import type { DesignTemplateRecord } from '../services/campaigns/design-templates';
import type { SenderRecord } from '../services/campaigns/senders';
import type { SingleSendRecord } from '../services/campaigns/single-sends';
import type { AbTestRecord, AbVariantRecord } from '../services/campaigns/ab-tests';
import type { SuppressionRecord } from '../services/delivery/feedback';
import type { RecipientReportRecord } from '../services/delivery/reports';
import { BOUNCE_CLASSES } from '../lib/bounce-class';
import { PROVIDERS, type DeferralCount, type ProviderDayRecord, type ProviderFiguresRecord } from '../services/delivery/providers';
import type { CityRecord, CountryRecord, StateRecord } from '../services/reference/geography';
import type { DeliveryRecord, WebhookRecord } from '../services/integrations/outgoing-webhooks';
import type { RelayRecord } from '../services/delivery/relays';
import { RELAY_KINDS } from '../lib/constants';
import type { SendingDomainRecord } from '../services/accounts/sending-domains';
import { DOMAIN_RECORD_PURPOSES, DOMAIN_STATUSES } from '../lib/constants';
import { AB_TEST_LIMITS, AB_WINNER_METRICS, HOOK_EVENTS, RECIPIENT_STATUSES, TEAM_ROLES, TEAM_USER_STATUSES } from '../lib/constants';
import type { TeamUserRecord } from '../services/accounts/team-users';
import type { ApiKeyRecord, CreatedApiKey } from '../services/accounts/api-keys';
import type { AuditRecord } from '../services/accounts/audit-log';
import { AUDIT_ACTIONS, AUDIT_ACTOR_TYPES } from '../lib/constants';
import type { AcceptedMessage } from '../services/transactional/accept';
import type { TransactionalDetails, TransactionalEvent, TransactionalMessageRecord } from '../services/transactional/message-log';
import type { TransactionalTemplateRecord } from '../services/transactional/templates';
import { TRANSACTIONAL_STATUSES } from '../lib/constants';
import { arrayOf, flag, int, Members, nullable, object, plainDateTime, str, strings, timestamp, uuid } from './schema-words';

/**
 * The records the API answers with, as shared components of the OpenAPI document. Each is
 * typed against the service's record type (`Members<T>`), so a field added to a record and not
 * here (or the reverse) is a compile error; the test suite checks every answer against them.
 */

const describe = (schema: JsonSchema, description: string): JsonSchema => ({ description, ...schema });
const record = <T>(description: string, members: Members<T>, optional: readonly (keyof T & string)[] = []) =>
  describe(object(members, optional), description);
const stamps = { created_at: timestamp, updated_at: timestamp };
const providerFigures: Members<ProviderFiguresRecord> = {
  provider: { type: 'string', enum: [...PROVIDERS], description: 'By the MX hosts of the recipients\' domains: google, microsoft, yahoo, apple, proton, zoho, amazon, or other (a domain not resolved yet too).' },
  sent: int,
  delivered: int,
  deferred: { type: 'integer', description: 'Messages refused for now at least once.' },
  bounced: int,
  complained: int,
  opened: { type: 'integer', description: 'Opened by a person (automated opens are not counted).' },
  clicked: int,
  top_deferrals: arrayOf(record<DeferralCount>('A temporary refusal and how often it was answered.', { code: { type: 'string', description: 'The enhanced status code (4.7.28), or the reply code when it had none.' }, text: str, count: int })),
};
const keyMaker = nullable({
  ...object({ id: nullable(int), name: str }),
  description: 'Extension: who made the key (the person responsible for it; `id` null for the original key pair); null when not recorded. Removing that person deletes the key; a new role for them lowers it to that role.',
});
const statuses = (values: Record<string, number>) => ({
  type: 'integer',
  enum: Object.values(values),
  description: Object.entries(values).map(([name, value]) => `${value} ${name}`).join(', '),
});

const transactionalMessage: Members<TransactionalMessageRecord> = {
  id: { type: 'string', pattern: '^tx_[0-9]+$' },
  to: str,
  from: str,
  subject: str,
  status: { type: 'string', enum: [...TRANSACTIONAL_STATUSES] },
  bounce_class: { ...nullable({ type: 'string', enum: [...BOUNCE_CLASSES] }), description: 'The class of its last refusal: hard (no such address or domain), mailbox_full, policy (the sender\'s authentication or reputation, or the receiver\'s limits), soft (another temporary refusal), other; null when nobody refused it.' },
  tags: strings,
  created_at: nullable(timestamp),
  sent_at: nullable(timestamp),
  opened_at: nullable(timestamp),
  clicked_at: nullable(timestamp),
};

const unsubscriber: Members<UnsubscriberRecord> = {
  id: int,
  user_id: int,
  unsubscribe_groups_id: nullable(int),
  email_address: str,
  ...stamps,
};

const contactType: Members<Omit<ContactTypeRecord, 'contacts_count'>> = { id: int, user_id: int, name: str, deleted_at: nullable(timestamp), ...stamps };

const group: Members<Omit<UnsubscribeGroupRecord, 'unsubscribe_clients_count'>> = {
  id: int,
  user_id: int,
  rand_id: str,
  group_name: str,
  description: str,
  is_display: flag,
  ...stamps,
};

const contact: Members<Omit<ContactRecord, 'contact_type'>> = {
  id: int,
  user_id: int,
  contact_type_id: int,
  first_name: str,
  last_name: str,
  email: str,
  alt_email: nullable(str),
  country: nullable(str),
  state: str,
  city: str,
  address_line1: str,
  address_line2: str,
  state_province_region: str,
  postal_code: str,
  time_zone: nullable({ type: 'string', description: 'Extension: the contact\'s IANA time zone; null when it has none (a send derives it from the country and state, else uses the account\'s zone).' }),
  custom_field: nullable({
    type: 'object',
    description: 'Every custom field of the account, by name; null when the account has none.',
    additionalProperties: object({ field_name: str, field_value: nullable(str) }),
  }),
  deleted_at: nullable(timestamp),
  ...stamps,
  fullname: str,
};

const automation: Members<Omit<AutomationRecord, 'automation_schedule_count'>> = {
  id: int,
  user_id: int,
  automation_for: nullable(int),
  automation_for_table: nullable({ type: 'string', enum: ['contacts_', 'segments_'] }),
  automation_name: str,
  exit_criteria: int,
  unsubscribe_group_id: nullable({ type: 'string', description: 'The group id, as a string (as the reference shows it).' }),
  automation_type: { ...statuses(AUTOMATION_TYPES) },
  utr: uuid,
  status: statuses(AUTOMATION_STATUS),
  live_at: nullable(plainDateTime),
  total_triggered: int,
  total_delivered: int,
  total_unique_opens: int,
  total_opens: int,
  total_bounces: int,
  total_unsubscribe: int,
  total_failed: int,
  total_unique_clicks: int,
  total_clicks: int,
  total_template_errors: { type: 'integer', description: 'Delivered messages in which a Liquid value failed and was left empty.' },
  deleted_at: nullable(timestamp),
  ...stamps,
};

const recipientRef = object({ id: str, table: { type: 'string', enum: ['contacts_', 'segments_'] } });

export const RECORDS = {
  Unsubscriber: record<UnsubscriberRecord>('A global unsubscriber, or a recipient of an unsubscribe group.', unsubscriber),
  UnsubscribeGroup: record<Omit<UnsubscribeGroupRecord, 'unsubscribe_clients_count'>>('An unsubscribe group.', group),
  UnsubscribeGroupListed: record<UnsubscribeGroupRecord>('An unsubscribe group as listed, with its count of recipients.', {
    ...group,
    unsubscribe_clients_count: int,
  }),
  ContactType: record<Omit<ContactTypeRecord, 'contacts_count'>>('A contact type.', contactType),
  ContactTypeListed: record<ContactTypeRecord>('A contact type as listed, with its count of contacts.', { ...contactType, contacts_count: int }),
  Contact: record<Omit<ContactRecord, 'contact_type'>>('A contact (details: `country` holds the country id as a string).', contact),
  ContactListed: record<ContactRecord>('A contact as listed: `country` is the country name, and its contact type comes along.', {
    ...contact,
    contact_type: { $ref: '#/components/schemas/ContactType' },
  }),
  Segment: record<SegmentRecord>('A segment.', {
    id: int,
    user_id: int,
    contact_type_id: int,
    segment_name: str,
    select_field: strings,
    select_operator: strings,
    value: strings,
    query_type: nullable({ type: 'string', enum: ['and', 'or'] }),
    deleted_at: nullable(timestamp),
    ...stamps,
    segment_emails_count: int,
  }),
  SegmentRecipient: record<SegmentRecipientRecord>('A recipient of a segment (`contact_id` set for a rule member).', {
    id: int,
    user_id: int,
    segment_id: int,
    contact_id: nullable(int),
    first_name: str,
    last_name: str,
    email: str,
    country: nullable(str),
    state: nullable(str),
    city: nullable(str),
    address_line1: nullable(str),
    ...stamps,
    fullname: str,
  }),
  Field: record<FieldRecord>('A reserved field (user_id null, is_reserved 1) or a custom field of the account.', {
    id: int,
    user_id: nullable(int),
    field_name: str,
    field_type: str,
    is_reserved: flag,
    created_at: nullable(timestamp),
    updated_at: nullable(timestamp),
  }),
  DesignTemplate: record<DesignTemplateRecord>('A built-in design template (id 1 is the blank one).', {
    id: int,
    template_name: str,
    preview_image: str,
    json_code: str,
    html_code: str,
    is_blank: flag,
    created_at: nullable(timestamp),
    updated_at: nullable(timestamp),
  }),
  SingleSend: record<SingleSendRecord>('A single send.', {
    id: int,
    user_id: int,
    template_id: int,
    recipient_id: arrayOf(recipientRef),
    exclude_specific_recipient_id: arrayOf(recipientRef),
    sender_id: int,
    unsubscribe_group_id: int,
    single_send_name: str,
    from_sender: str,
    reply_to: str,
    sender_name: nullable(str),
    sender_address: nullable(str),
    subject: str,
    preheader: str,
    schedule_type: { type: 'integer', enum: [0, 1, 2], description: '0 at once, 1 at the date and time in the account\'s time zone, 2 (extension) in each recipient\'s own time zone.' },
    schedule_date: { type: 'string', pattern: '^[0-9]{4}-[0-9]{2}-[0-9]{2}$', description: '`0000-00-00` when not scheduled.' },
    schedule_time: { type: 'string', pattern: '^[0-9]{2}:[0-9]{2}:[0-9]{2}$', description: '`00:00:00` when not scheduled.' },
    status: statuses(SINGLE_SEND_STATUS),
    utr: uuid,
    template_json: nullable(str),
    template_html: nullable(str),
    triggered: int,
    delivered: int,
    unique_opens: int,
    total_opens: int,
    bounces: int,
    unsubscribes: int,
    failed: int,
    unique_clicks: int,
    total_clicks: int,
    template_errors: { type: 'integer', description: 'Delivered messages in which a Liquid value failed and was left empty.' },
    track_opens: flag,
    track_clicks: flag,
    archive: { ...flag, description: 'Extension: 1 when the send is listed in the account\'s public archive once completed.' },
    resend_of: { ...nullable(uuid), description: 'Extension: the utr of the send whose non-openers this resend goes to; null for any other send.' },
    relay_id: { ...nullable(int), description: 'Extension: the account\'s relay its mail goes through first; null: the account\'s usual choice.' },
    unique_open_token: { type: 'object', additionalProperties: str, description: 'The n-th unique open (from 1) → that message\'s token.' },
    ab: { ...nullable({ $ref: '#/components/schemas/AbTest' }), description: 'Extension: the send\'s A/B test; null when it has none.' },
    sent_at: nullable(plainDateTime),
    ...stamps,
  }),
  AbTest: record<AbTestRecord>('A single send\'s A/B test (extension): the variants go to a random share of the audience, and after the wait the best of them to the rest.', {
    test_percent: { type: 'integer', minimum: AB_TEST_LIMITS.percentMin, maximum: AB_TEST_LIMITS.percentMax, description: 'The share of the audience (percent) that receives the test, split evenly over the variants.' },
    winner_metric: { type: 'string', enum: [...AB_WINNER_METRICS], description: 'opens: unique opens by a person (automated opens excluded) over delivered; clicks: unique clicks over delivered.' },
    wait_minutes: { type: 'integer', minimum: AB_TEST_LIMITS.waitMin, maximum: AB_TEST_LIMITS.waitMax },
    status: { type: 'string', enum: ['waiting', 'testing', 'sent'], description: 'waiting: the send has not started; testing: the variants went to the test share and the winner is not chosen yet; sent: the winner went to the rest.' },
    winner: { ...nullable({ type: 'integer', minimum: 0 }), description: 'The index (from 0) of the variant sent to the rest; null until chosen.' },
    variants: arrayOf(record<AbVariantRecord>('A variant, with what became of its messages (the rest\'s count with the winner\'s).', {
      index: { type: 'integer', minimum: 0 },
      subject: str,
      from_name: str,
      triggered: int,
      delivered: int,
      unique_opens: int,
      unique_clicks: int,
    })),
  }),
  SendRecipient: record<RecipientReportRecord>('A recipient of a single send or automation email, and what became of the message (extension).', {
    contact_id: nullable(int),
    email: str,
    status: { type: 'string', enum: [...RECIPIENT_STATUSES], description: 'The furthest the message got: queued (waiting or retrying), delivered, opened (by a person: automated opens are not counted), clicked, unsubscribed, complained; or bounced, failed (given up after its retries), skipped (not sent: unsubscribed, suppressed or deleted first, or its send cancelled).' },
    reason: nullable(str),
    bounce_class: { ...nullable({ type: 'string', enum: [...BOUNCE_CLASSES] }), description: 'The class of its last refusal: hard (no such address or domain), mailbox_full, policy (the sender\'s authentication or reputation, or the receiver\'s limits: never suppressed), soft (another temporary refusal), other.' },
    sent_at: nullable(plainDateTime),
    opened_at: nullable(plainDateTime),
    clicked_at: nullable(plainDateTime),
  }),
  Automation: record<Omit<AutomationRecord, 'automation_schedule_count'>>('An automation.', automation),
  AutomationListed: record<AutomationRecord>('An automation as listed, with its count of emails.', { ...automation, automation_schedule_count: int }),
  AutomationSchedule: record<ScheduleRecord>('An email (step) of an automation.', {
    id: int,
    user_id: int,
    automation_id: int,
    sender_id: int,
    subject: str,
    waiting_period: int,
    waiting_type: { type: 'string', enum: [...WAITING_TYPES] },
    utr: uuid,
    template_id: int,
    preview_img: str,
    template_json: str,
    template_html: str,
    ...stamps,
    design_url: { type: 'string', format: 'uri' },
    image: { type: 'string', format: 'uri' },
    track_opens: flag,
    relay_id: { ...nullable(int), description: 'Extension: the account\'s relay this step\'s mail goes through first; null: the account\'s usual choice.' },
    track_clicks: flag,
  }),
  TeamUser: record<TeamUserRecord>('A person of the account (`id`); `user_id` is the account.', {
    id: int,
    user_id: int,
    email: str,
    name: str,
    role: { type: 'string', enum: [...TEAM_ROLES] },
    status: { type: 'string', enum: [...TEAM_USER_STATUSES] },
    two_factor: flag,
    sso: flag,
    last_sign_in_at: nullable(timestamp),
    ...stamps,
  }),
  ApiKey: record<ApiKeyRecord>('An API key pair with a role (its secret is never shown again).', {
    id: int,
    name: str,
    role: { type: 'string', enum: [...TEAM_ROLES] },
    public_key: str,
    last_used_at: nullable(timestamp),
    created_at: timestamp,
    made_by: keyMaker,
  }),
  CreatedApiKey: record<CreatedApiKey>('A new API key pair: the only answer with its secret key.', {
    id: int,
    name: str,
    role: { type: 'string', enum: [...TEAM_ROLES] },
    public_key: str,
    secret_key: str,
    last_used_at: nullable(timestamp),
    created_at: timestamp,
    made_by: keyMaker,
  }),
  AuditEntry: record<AuditRecord>('One entry of the audit log: who did what to which record, from where.', {
    id: int,
    user_id: int,
    actor: object({
      type: { type: 'string', enum: [...AUDIT_ACTOR_TYPES], description: 'user: a person signed in to the dashboard; api_key: a request with an API key; system: the service itself (a worker, a schedule).' },
      id: nullable({ type: 'integer', description: 'The user\'s or key\'s id; null for the account\'s original key pair and for the system.' }),
      name: { type: 'string', description: 'The name or address at the time of the change.' },
    }),
    action: { type: 'string', enum: [...AUDIT_ACTIONS], description: 'What was done, named like the webhook events.' },
    record_type: nullable({ type: 'string', description: 'The kind of record changed (single_send, contact, …).' }),
    record_id: nullable({ type: 'string', description: 'The record\'s id or utr, as text.' }),
    summary: str,
    ip: nullable({ type: 'string', description: 'The client\'s address (as TRUST_PROXY lets the service read it); null for the system.' }),
    created_at: timestamp,
  }),
  NotificationRecipient: record<NotificationRecipientRecord>('An address told of the account\'s events.', {
    id: int,
    user_id: int,
    email_address: str,
    email_owner: str,
    ...stamps,
  }),
  Sender: record<SenderRecord>('A sender.', {
    id: int,
    user_id: int,
    from_name: str,
    from_email: str,
    reply_to_email: str,
    country_id: int,
    state_id: nullable(int),
    city_id: nullable(int),
    zip_code: str,
    company_address: str,
    company_address2: str,
    nickname: str,
    is_verified: flag,
    utr: str,
    send_at: nullable(plainDateTime),
    ...stamps,
    deleted_at: nullable(timestamp),
    domain_status: { type: 'string', enum: ['verified', 'failing', 'unauthenticated'], description: 'verified: mail from its address is signed by a verified sending domain of the account; failing: that domain\'s DNS records no longer check out; unauthenticated: no sending domain covers it' },
  }),
  Country: record<CountryRecord>('A country.', { id: int, name: str, iso2: str, phone_code: str }),
  State: record<StateRecord>('A state.', { id: int, country_id: int, name: str, iso2: str }),
  City: record<CityRecord>('A city.', { id: int, state_id: int, name: str }),
  Suppression: record<SuppressionRecord>('An address left out of every send: it bounced, complained or was added by hand.', {
    id: int,
    user_id: int,
    email_address: str,
    reason: { type: 'string', enum: [...SUPPRESSION_REASONS] },
    bounce_class: { ...nullable({ type: 'string', enum: [...BOUNCE_CLASSES] }), description: 'The class of the refusal that suppressed it; null for complaints and addresses added by hand.' },
    diagnostic: str,
    source: str,
    created_at: timestamp,
  }),
  ImportSummary: record<ImportSummary>('What an import did.', {
    rows: int,
    created: int,
    updated: int,
    skipped: int,
    unsubscribed: int,
    errors: arrayOf(object({ row: int, reason: str })),
    several_addresses: int,
    ignored_attributes: strings,
  }, ['ignored_attributes', 'several_addresses']),
  ImportPreview: record<ImportPreview>('What an upload would read.', {
    encoding: str,
    delimiter: str,
    header: strings,
    rows: arrayOf(strings),
    mapping: { type: 'object', additionalProperties: nullable(str) },
  }),
  PrivacyExport: record<PrivacyExport>('Everything the account holds about one address.', {
    email: str,
    contacts: arrayOf({ $ref: '#/components/schemas/Contact' }),
    segments: arrayOf(object({ segment_id: int, segment_name: str, source: str, created_at: nullable(timestamp) })),
    unsubscribe_groups: arrayOf(object({ unsubscribe_groups_id: int, group_name: str, created_at: nullable(timestamp) })),
    global_unsubscribe: nullable(object({ created_at: nullable(timestamp) })),
    suppressed: nullable(object({ reason: str, created_at: nullable(timestamp) })),
    automations: arrayOf(object({ automation_id: int, automation_name: str, state: str, enrolled_at: nullable(timestamp) })),
    messages: arrayOf(object({
      id: int,
      single_send_id: nullable(int),
      automation_id: nullable(int),
      state: str,
      sent_at: nullable(timestamp),
      opened_at: nullable(timestamp),
      unsubscribed_at: nullable(timestamp),
      created_at: nullable(timestamp),
    })),
    opens: arrayOf(object({ message_id: int, opened_at: nullable(timestamp) })),
    unsubscribes: arrayOf(object({ message_id: int, unsubscribed_at: nullable(timestamp) })),
    signups: arrayOf(object({
      form_id: int,
      form_name: str,
      group_ids: arrayOf(int),
      requested_at: nullable(timestamp),
      requested_ip: str,
      expires_at: nullable(timestamp),
      confirmed_at: nullable(timestamp),
      confirmed_ip: nullable(str),
    })),
  }),
  SendingDomain: record<SendingDomainRecord>('A sending domain of the account: its DKIM selector, the DNS records it needs and what the last check found.', {
    id: int,
    user_id: int,
    domain: str,
    dkim_selector: str,
    status: { type: 'string', enum: [...DOMAIN_STATUSES], description: 'pending: not verified yet; verified: its DKIM record is right and a DMARC record applies, so its mail is signed with its key; failing: it was verified and a record has gone' },
    records: arrayOf(object({
      purpose: { type: 'string', enum: [...DOMAIN_RECORD_PURPOSES] },
      type: { type: 'string', enum: ['TXT', 'CNAME'] },
      host: str,
      value: str,
      status: { type: 'string', enum: ['ok', 'missing', 'wrong'] },
      found: nullable(str),
    })),
    last_checked_at: nullable(timestamp),
    verified_at: nullable(timestamp),
    warmup: { ...nullable(arrayOf({ type: 'integer', minimum: 1 })), description: 'The warm-up schedule: each day\'s cap per mailbox provider from `warmup_started_at` (then 30% more a day until no cap); null: none.' },
    warmup_started_at: nullable(timestamp),
    ...stamps,
  }),
  Webhook: record<WebhookRecord>('An outgoing webhook (`secret` only in the answer of save, and of update with rotate_secret).', {
    id: int,
    user_id: int,
    url: { type: 'string', format: 'uri' },
    description: str,
    events: arrayOf({ type: 'string', enum: [...HOOK_EVENTS] }),
    created_at: timestamp,
    updated_at: timestamp,
    secret: str,
  }, ['secret']),
  Relay: record<RelayRecord>('A relay of the account: an SMTP server or a provider API its mail leaves through (its password or API key is never shown).', {
    id: int,
    user_id: int,
    name: str,
    kind: { type: 'string', enum: [...RELAY_KINDS] },
    url: nullable(str),
    region: nullable(str),
    endpoint: nullable(str),
    max_rate: { type: 'number', description: 'messages per second; 0: no limit of its own' },
    priority: int,
    domains: strings,
    tls_verify: { type: 'boolean', description: 'SMTP: whether the server certificate must verify (false: a self-signed one is taken)' },
    has_secret: { type: 'boolean' },
    health: { type: 'string', enum: ['up', 'down'] },
    down_until: nullable(timestamp),
    last_error: nullable(str),
    last_error_at: nullable(timestamp),
    tested_at: nullable(timestamp),
    test_ok: nullable({ type: 'boolean' }),
    created_at: timestamp,
    updated_at: timestamp,
  }),
  WebhookDelivery: record<DeliveryRecord>('A delivery of an event to a webhook.', {
    id: int,
    webhook_id: int,
    event_id: str,
    type: str,
    status: { type: 'string', enum: ['pending', 'delivered', 'failed'] },
    attempts: int,
    response_code: nullable(int),
    error: nullable(str),
    next_attempt_at: nullable(timestamp),
    delivered_at: nullable(timestamp),
    created_at: timestamp,
    updated_at: timestamp,
    data: { description: 'The event\'s payload, as sent.' },
  }),
  ErasureCount: record<ErasureCount>('What an erasure changed.', {
    contacts: int,
    segment_recipients: int,
    messages: int,
    automation_enrolments: int,
    skipped_import_rows: int,
    webhook_deliveries: int,
    signups: int,
  }),
  ProviderFigures: record<ProviderFiguresRecord>('How one mailbox provider treated a set of messages (extension); rates read over `delivered`.', providerFigures),
  ProviderDay: record<ProviderDayRecord>('How one mailbox provider treated the mail of a sending domain on one UTC day (extension).', { day: { type: 'string', format: 'date' }, ...providerFigures }),
  TransactionalAccepted: record<AcceptedMessage>('A transactional message as a send answers it: queued, or suppressed for an address that bounced or complained (nothing is sent).', {
    id: { type: 'string', pattern: '^tx_[0-9]+$' },
    to: str,
    status: { type: 'string', enum: ['queued', 'suppressed'] },
  }),
  TransactionalMessage: record<TransactionalMessageRecord>('A transactional message as the log lists it.', transactionalMessage),
  TransactionalDetails: record<TransactionalDetails>('A transactional message with its timeline and the mail server\'s last answer.', {
    ...transactionalMessage,
    cc: strings,
    bcc: strings,
    reply_to: nullable(str),
    source: { type: 'string', enum: ['api', 'smtp'] },
    events: arrayOf(record<TransactionalEvent>('One thing that happened to the message.', {
      type: { type: 'string', enum: ['accepted', 'sent', 'deferred', 'delivered', 'bounced', 'complained', 'opened', 'clicked', 'failed', 'suppressed'] },
      at: nullable(timestamp),
      detail: nullable(str),
    })),
    last_smtp_response: nullable(object({ code: nullable(int), message: str })),
  }),
  TransactionalTemplate: record<TransactionalTemplateRecord>('A template of transactional mail (Liquid reads `data` and a contact\'s fields).', {
    id: int,
    name: str,
    subject: str,
    html: str,
    text: nullable(str),
    ...stamps,
  }),
} satisfies Record<string, JsonSchema>;

export type RecordName = keyof typeof RECORDS;
