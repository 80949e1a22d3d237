/**
 * One source for each fact of the domain: migrations, validators, services, seeds and
 * views import these instead of repeating them.
 */

/** Contact columns that are reserved field names (seeded into `fields` with is_reserved 1). */
export const RESERVED_FIELDS = [
  { field_name: 'first_name', field_type: 'text' },
  { field_name: 'last_name', field_type: 'text' },
  { field_name: 'email', field_type: 'text' },
  { field_name: 'alt_email', field_type: 'text' },
  { field_name: 'country', field_type: 'text' },
  { field_name: 'state', field_type: 'text' },
  { field_name: 'city', field_type: 'text' },
  { field_name: 'address_line1', field_type: 'text' },
  { field_name: 'address_line2', field_type: 'text' },
  { field_name: 'state_province_region', field_type: 'text' },
  { field_name: 'postal_code', field_type: 'text' },
] as const;

export const RESERVED_FIELD_NAMES: readonly string[] = RESERVED_FIELDS.map((f) => f.field_name);

/**
 * The words people see for the contact's own fields and the other names a segment selects on
 * (the dashboard's builder, forms and lists): never the column names. A custom field shows its
 * label, else its name (the account chose it).
 */
export const FIELD_LABELS: Readonly<Record<string, string>> = {
  email: 'Email',
  first_name: 'First name',
  last_name: 'Last name',
  alt_email: 'Other email',
  country: 'Country',
  state: 'State',
  city: 'City',
  address_line1: 'Address line 1',
  address_line2: 'Address line 2',
  state_province_region: 'State, province or region',
  postal_code: 'Postal code',
  created_at: 'Date added',
  full_name: 'Full name',
};

/**
 * Placeholders filled at send time, not stored on a contact. The sender's two come from the
 * send's sender; the preference link is a link in HTML text and the bare URL in an attribute
 * or the text part; the full name joins the first and last name.
 */
export const SENDER_PLACEHOLDERS = ['sender_name', 'sender_address'] as const;
export type SenderPlaceholder = (typeof SENDER_PLACEHOLDERS)[number];
export const UNSUBSCRIBE_PLACEHOLDER = 'unsubscribe_preferences';
export const FULL_NAME_PLACEHOLDER = 'full_name';
/**
 * Extension: the message as this recipient received it, on a web page (a signed link, no
 * sign-in); like the preference link, a link in HTML text and the bare URL elsewhere.
 */
export const WEBVIEW_PLACEHOLDER = 'webview_url';
/** The domain of the address an erased one becomes in the ledger (`erased-<hash>@erased.invalid`). */
export const ERASED_ADDRESS_DOMAIN = 'erased.invalid';
/** What the send fills for every recipient, so never empty. */
export const SEND_PLACEHOLDERS: readonly string[] = [...SENDER_PLACEHOLDERS, UNSUBSCRIBE_PLACEHOLDER, WEBVIEW_PLACEHOLDER];

/** Custom field names the reference lists among the placeholders (filled only for an account that adds such a field). */
const REFERENCE_CUSTOM_PLACEHOLDERS = ['father_name', 'designation', 'age', 'company_name', 'birth_date', 'join_date'];

/** Placeholder names usable as `((name))` in subjects, preheaders and bodies, in the reference's order. */
export const DYNAMIC_CONTENT: readonly string[] = [
  ...RESERVED_FIELD_NAMES,
  FULL_NAME_PLACEHOLDER,
  ...REFERENCE_CUSTOM_PLACEHOLDERS,
  ...SEND_PLACEHOLDERS,
];

/**
 * Names a custom field may not take besides the reserved ones: keys of the contact record
 * (segments select on them) and the placeholders filled at send time.
 */
export const NOT_CUSTOM_FIELD_NAMES: readonly string[] = [
  'id', 'user_id', 'contact_type_id', 'created_at', 'updated_at', 'deleted_at', 'fullname', 'custom_field', 'contact_type', 'time_zone',
  FULL_NAME_PLACEHOLDER, ...SEND_PLACEHOLDERS,
];

export const CUSTOM_FIELD_TYPES = ['text', 'number', 'datetime-local'] as const;
export type CustomFieldType = (typeof CUSTOM_FIELD_TYPES)[number];

/** 4 and 5 are extensions: a paused send, and one cancelled after it was scheduled or started. */
export const SINGLE_SEND_STATUS = { initiate: 0, ready: 1, running: 2, completed: 3, paused: 4, cancelled: 5 } as const;
/**
 * States of a send-ledger row (send_messages.state); 0 and 1 are the claimable ones. `held`: the
 * rest of an A/B test's audience, written as the send goes and released with the winner.
 */
export const MESSAGE_STATE = { queued: 0, sending: 1, sent: 2, failed: 3, bounced: 4, suppressed: 5, paused: 6, cancelled: 7, held: 8 } as const;
/**
 * What became of one recipient of a send or automation step, as its recipients report says it:
 * each message has the furthest of these it reached (`delivered` < `opened` < `clicked` <
 * `unsubscribed` < `complained`); `skipped` was never sent (unsubscribed, suppressed or its
 * contact deleted before it went, or its send cancelled).
 */
export const RECIPIENT_STATUSES = ['queued', 'delivered', 'opened', 'clicked', 'bounced', 'failed', 'unsubscribed', 'complained', 'skipped'] as const;
export type RecipientStatus = (typeof RECIPIENT_STATUSES)[number];
/** What a ledger row belongs to. */
export const MESSAGE_KIND = { single: 1, automation: 2, system: 3, transactional: 4 } as const;
/**
 * The ledger's `priority` of each kind of message: lower is claimed first, so system mail and
 * then transactional mail overtake single sends and automation steps already queued.
 */
export const MESSAGE_PRIORITY = { system: 0, transactional: 1, campaign: 5 } as const;
/** What a transactional message is, as its log and API say it. */
export const TRANSACTIONAL_STATUSES = ['queued', 'sent', 'delivered', 'deferred', 'bounced', 'complained', 'failed', 'suppressed'] as const;
export type TransactionalStatus = (typeof TRANSACTIONAL_STATUSES)[number];
/** Limits of a transactional message (docs/transactional.md). */
export const TRANSACTIONAL_LIMITS = {
  recipients: 50,
  batch: 100,
  attachments: 10,
  attachmentBytes: 10 * 1024 * 1024,
  tags: 10,
  tagLength: 64,
  sendAtDays: 30,
  idempotencyKey: 256,
  idempotencyHours: 24,
  /** A key whose first request has been in progress this long was abandoned (its process died): it may be used again. */
  idempotencyStaleMs: 120_000,
} as const;
/** States of an automation enrolment; `skipped`: a welcome automation's member from before go-live. */
export const ENROLMENT_STATE = { active: 0, left: 1, skipped: 2 } as const;
export const AUTOMATION_STATUS = { draft: 0, live: 1, paused: 2 } as const;
export const AUTOMATION_TYPES = { welcome: 1, custom: 2 } as const;
export const WAITING_TYPES = ['instantly', 'days', 'hours'] as const;
export const RECIPIENT_TABLES = ['contacts_', 'segments_'] as const;

/** Limits of the reference and of this project (docs/decisions.md, "Input"). */
export const LIMITS = {
  /** largest record id: id columns are 32-bit integers (PostgreSQL refuses larger values outright) */
  maxId: 2147483647,
  /** ids in one bulk delete */
  bulkIds: 1000,
  /** addresses in one comma-separated list */
  addressList: 1000,
  /** generic string columns */
  string: 255,
  /** generic text columns (descriptions) */
  text: 65535,
  /** custom field names (fields.field_name) */
  fieldName: 64,
  contactTypeNameMin: 2,
  /** list page size bounds for the optional page/per_page extension */
  perPageMax: 1000,
} as const;

export const DEMO_ACCOUNT_EMAIL = 'demo@example.com';

/** Limits of senders, single sends and automations beyond the generic 255-character string. */
export const CAMPAIGN_LIMITS = {
  /** fits senders.zip_code */
  zipCode: 64,
  /** fits the subject and preheader columns (RFC 5322 line length) */
  subject: 998,
  /** entries of recipient_id / exclude_specific_recipient_id */
  recipientRefs: 1000,
  /** largest waiting_period of a schedule (in days or hours) */
  waitingPeriodMax: 100000,
} as const;

/** A single send's A/B test: how many variants, what share of the audience tests them, how long before the winner goes. */
export const AB_TEST_LIMITS = { variantsMin: 2, variantsMax: 4, percentMin: 10, percentMax: 50, waitMin: 10, waitMax: 4320, fromName: 255 } as const;
/** What decides an A/B test's winner: the rate of unique opens (by a person) or unique clicks over delivered messages. */
export const AB_WINNER_METRICS = ['opens', 'clicks'] as const;
export type AbWinnerMetric = (typeof AB_WINNER_METRICS)[number];
/** What a variant may set of the send's content. */
export const AB_VARIANT_FIELDS = ['subject', 'preheader', 'from_name', 'template_html', 'template_json'] as const;
/** States of an A/B test (ab_tests.state): the send has not started, its test share is out, the winner went to the rest. */
export const AB_TEST_STATE = { waiting: 0, testing: 1, sent: 2 } as const;

/** Shortest dashboard password an account may choose. */
export const PASSWORD_MIN = 10;

/** Dashboard sessions: sliding expiry, renewed at most once a day. */
export const SESSION = { ttlMs: 14 * 24 * 3600_000, renewAfterMs: 24 * 3600_000 } as const;

/** Contact columns written as plain text by add, update and import, with their column limits. */
export const CONTACT_TEXT_COLUMNS = {
  first_name: 255,
  last_name: 255,
  state: 255,
  city: 255,
  address_line1: 255,
  address_line2: 255,
  state_province_region: 255,
  postal_code: 64,
} as const;
export type ContactTextColumn = keyof typeof CONTACT_TEXT_COLUMNS;

/** Segment operators per field type (docs/segments.md, "What the rules mean"); `is between` takes two values, the empties none. */
export const SEGMENT_OPERATORS = {
  text: ['is', 'is not', 'contains', 'does not contain', 'starts with', 'ends with', 'is empty', 'is not empty'],
  number: ['is', 'is not', 'greater than', 'less than', 'is between'],
  date: ['is', 'is before', 'is after', 'is between', 'in the last', 'more than ago'],
  engagement: ['opened', 'not opened', 'clicked', 'not clicked', 'was sent'],
} as const;
export type SegmentFieldKind = keyof typeof SEGMENT_OPERATORS;
export const SEGMENT_QUERY_TYPES = ['and', 'or'] as const;
/** Relative date conditions (`in the last`, `more than ago`) count whole days, from 1 to a hundred years. */
export const SEGMENT_RELATIVE_DAYS = { min: 1, max: 36_500 } as const;
/** The contact type a new account starts with (CLI and demo account). */
export const FIRST_CONTACT_TYPE = 'Subscribers';
/** The engagement conditions' field, and the value meaning every send rather than one (named by its utr). */
export const SEGMENT_ENGAGEMENT = { field: 'engagement', anySend: 'any' } as const;

/** CSV import: skipped rows reported in the summary (batch sizes are per database, in src/db/contact-upsert.ts). */
export const CSV_IMPORT = { reportedErrors: 100 } as const;

/** Dashboard CSV imports: their states, and how long one may go without progress before it counts as interrupted. */
export const IMPORT_JOB = {
  statuses: ['mapping', 'running', 'done', 'failed'] as const,
  staleMs: 10 * 60_000,
  progressEveryMs: 250,
  /** An upload left waiting for its columns this long is removed. */
  waitingMs: 24 * 60 * 60_000,
};
/** Why an address is on an account's suppression list (the `reason` of a suppression record). */
export const SUPPRESSION_REASONS = ['hard_bounce', 'soft_bounce', 'complaint', 'manual'] as const;
export type SuppressionReason = (typeof SUPPRESSION_REASONS)[number];
/**
 * What came back about a sent message: a bounce (permanent or not), a complaint, or a bounce
 * that is a policy refusal (the sender's authentication or reputation: see POLICY_REFUSALS),
 * recorded under its own name so that it never counts as the address's bounce.
 */
export const FEEDBACK_EVENT = { bounce: 'bounce', complaint: 'complaint', policy: 'policy' } as const;
/** Soft bounces are counted over this window before they suppress (SOFT_BOUNCE_LIMIT). */
export const SOFT_BOUNCE_WINDOW_MS = 30 * 24 * 3_600_000;
/** A send's bounce and complaint rates past which its notification recipients are told (what mailbox providers act on). */
export const ALERT_RATES = { bounce: 0.05, complaint: 0.001 } as const;

/** Double opt-in signups. */
export const SIGNUP = {
  /** how long a confirmation link works */
  linkTtlMs: 7 * 24 * 3600_000,
  /** confirmation mails one address may be sent per account in 24 hours (a form cannot be used to flood a mailbox) */
  mailsPerAddressPerDay: 3,
  /** unconfirmed signups are deleted this long after their link expired */
  keepExpiredMs: 30 * 24 * 3600_000,
  /** the form's hidden field that people leave empty and form-filling robots do not */
  honeypot: 'website',
} as const;

/** Outgoing webhooks: the events an endpoint may subscribe to, in the order the dashboard and the validation message list them. */
export const HOOK_EVENTS = [
  'message.delivered',
  'message.bounced',
  'message.opened',
  'message.clicked',
  'message.complained',
  'contact.unsubscribed',
  'contact.created',
  'single_send.started',
  'single_send.completed',
  'automation.live',
  'automation.paused',
  'import.finished',
] as const;
export type HookEventType = (typeof HOOK_EVENTS)[number];
/** High-volume events: posted in batches (`data.events`), never one request per message. */
export const BATCHED_HOOK_EVENTS: ReadonlySet<HookEventType> = new Set(['message.delivered', 'message.opened', 'message.clicked']);
export const HOOK_DELIVERY_STATE = { pending: 0, delivered: 1, failed: 2 } as const;
export const HOOK_DELIVERY = {
  /** Events in one batched request at most. */
  batchSize: 100,
  /** A request that has not answered by then failed. */
  timeoutMs: 10_000,
  /** Retries stop this long after the event; the delivery is then failed. */
  retryForMs: 24 * 3_600_000,
  /** First retry delay; doubles per attempt up to retryMaxMs, with ±20% jitter. */
  retryBaseMs: 30_000,
  retryMaxMs: 4 * 3_600_000,
  /** Endpoints per account. */
  maxEndpoints: 20,
} as const;

/** How old a provider webhook's signed timestamp may be, and how far ahead of our clock (skew). */
export const PROVIDER_WEBHOOK_AGE = {
  /** Mailgun signs only timestamp + token: a signature is good for this long, and once. */
  mailgunMaxAgeMs: 5 * 60_000,
  /** SendGrid signs timestamp + body; its documentation advises refusing old timestamps. */
  sendgridMaxAgeMs: 10 * 60_000,
  maxAheadMs: 60_000,
} as const;

/**
 * The audit log's actions, named like the webhook events (`record.verb`): one entry per change
 * through either face, export, sign-in and failed sign-in. The dashboard's filter lists them in
 * this order.
 */
export const AUDIT_ACTIONS = [
  'user.signed_in',
  'user.sign_in_failed',
  'user.signed_out',
  'user.password_changed',
  'user.invited',
  'user.role_changed',
  'user.two_factor_enabled',
  'user.two_factor_disabled',
  'account.settings_changed',
  'api_key.created',
  'api_key.deleted',
  'contact.created',
  'contact.updated',
  'contact.deleted',
  'contacts.imported',
  'contacts.exported',
  'contact_type.created',
  'contact_type.updated',
  'contact_type.deleted',
  'segment.created',
  'segment.updated',
  'segment.deleted',
  'single_send.created',
  'single_send.updated',
  'single_send.started',
  'single_send.scheduled',
  'single_send.paused',
  'single_send.resumed',
  'single_send.cancelled',
  'single_send.deleted',
  'automation.created',
  'automation.updated',
  'automation.live',
  'automation.paused',
  'automation.deleted',
  'template.created',
  'template.updated',
  'template.deleted',
  'sender.created',
  'sender.updated',
  'sender.deleted',
  'unsubscribe_group.created',
  'unsubscribe_group.updated',
  'unsubscribe_group.deleted',
  'field.created',
  'field.deleted',
  'global_unsubscribe.added',
  'global_unsubscribe.removed',
  'suppression.removed',
  'webhook.created',
  'webhook.updated',
  'webhook.deleted',
  // The team's own changes, and the resources that record since the log covers every change.
  'user.updated',
  'user.enabled',
  'user.disabled',
  'user.deleted',
  'user.ownership_transferred',
  'user.invitation_accepted',
  'user.invitation_resent',
  'user.password_reset',
  'field.updated',
  'suppression.added',
  'notification_recipient.created',
  'notification_recipient.deleted',
  'signup_form.created',
  'signup_form.updated',
  'signup_form.deleted',
  'sending_domain.created',
  'sending_domain.verified',
  'sending_domain.deleted',
  'sending_domain.provider_paused',
  'sending_domain.provider_resumed',
  'sending_domain.warmup_changed',
  'relay.created',
  'relay.updated',
  'relay.deleted',
  'recipient_report.exported',
  'engagement.exported',
  'unsubscribe_group.recipients_added',
  'unsubscribe_group.recipients_removed',
  // Privacy requests name the address only by its keyed hash (record_id), so the log can say
  // whether an address was erased without keeping it.
  'contact.erased',
  'contact.privacy_exported',
  'single_send.resent',
  'single_send.ab_test_saved',
  'single_send.ab_winner_chosen',
  'single_send.failed_retried',
  'transactional.sent',
  'transactional.retried',
  'transactional_template.created',
  'transactional_template.updated',
  'transactional_template.deleted',
] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];
/** Who an audit entry names: a person, an API key, or the service itself (a worker, a schedule). */
export const AUDIT_ACTOR_TYPES = ['user', 'api_key', 'system'] as const;
export type AuditActorType = (typeof AUDIT_ACTOR_TYPES)[number];
export const AUDIT = {
  /** Entries a page of the log holds when `per_page` is not given: the log is always paged. */
  perPage: 100,
} as const;
/** The kinds of relay an account may add: an SMTP server, or a provider's HTTP API. */
export const RELAY_KINDS = ['smtp', 'ses', 'sendgrid', 'postmark', 'mailgun'] as const;
export type RelayKind = (typeof RELAY_KINDS)[number];

export const RELAY_LIMITS = {
  /** Relays per account. */
  maxPerAccount: 20,
  /** First backoff of a relay found down; doubles with each failure in a row up to maxBackoffMs. */
  firstBackoffMs: 30_000,
  maxBackoffMs: 10 * 60_000,
  /** How long a worker trusts what it read of an account's relays (health is re-read after). */
  cacheMs: 2_000,
} as const;

/**
 * Why the service paused a single send (`single_sends.pause_reason`; null: paused by a person):
 * receivers' policy refusals, a template that does not render, an unverified sending domain at
 * its start (REQUIRE_DOMAIN_AUTH).
 */
export const SEND_PAUSE_REASONS = ['policy', 'template_error', 'unauthenticated'] as const;
export type SendPauseReason = (typeof SEND_PAUSE_REASONS)[number];

/**
 * Refusals that mean "your authentication or reputation", not "this address": they never
 * suppress the address; the message fails with reason `policy` and the send pauses once
 * `minCount` of them or `share` of the messages attempted are refused so.
 */
export const POLICY_REFUSALS = {
  minCount: 10,
  share: 0.01,
} as const;

/**
 * A message whose subject or body does not render (its Liquid ran past LIQUID_LIMITS) is never
 * sent: it fails with reason `template_error`. Once `sample` messages of a send were attempted,
 * more than `share` of them failing so pauses it: a template that fails everyone stops after its
 * first 20 messages, one recipient's odd value does not stop the rest.
 */
export const TEMPLATE_ERRORS = {
  sample: 20,
  share: 0.05,
} as const;

/**
 * The bounds of Liquid in subjects and bodies (docs/sending-and-tracking.md, "Liquid"), set so
 * that the costliest template a user can write costs at most about 50 ms of CPU per message
 * (and per preview or test send) and nothing holds the event loop longer.
 */
export const LIQUID_LIMITS = {
  /** Characters of one subject, preheader or body that uses Liquid (liquidjs `parseLimit`); longer is refused when saved. */
  parseChars: 200_000,
  /** Tags and outputs in one source: parsing costs per tag (a send parses once, a save or preview each time). */
  tags: 2_000,
  /**
   * Milliseconds of rendering for all the Liquid of one message (liquidjs `renderLimit`, what is
   * left of it for each part in turn); a usual message takes well under one. A message out of
   * time is rendered once more afresh before it fails, so the costliest costs twice this.
   */
  messageRenderMs: 24,
  /** The same for one preview or test send. */
  requestRenderMs: 20,
  /**
   * Characters one render may build through filters (`append`, `join`, `split`, …) and ranges
   * (liquidjs `memoryLimit`): a range `(a..b)` counts its size each time it is evaluated, so this
   * also bounds the loops over ranges, nested or not, and keeps any single step between two
   * time checks short.
   */
  memory: 200_000,
  /** Characters one rendered part may have: what follows a render (placeholders, encoding) stays linear and small. */
  outputChars: 500_000,
  /**
   * Characters of a rendered body made text per recipient, which happens only when its text part
   * could not be made once per send (HTML-to-text costs microseconds per character).
   */
  textOfHtmlChars: 20_000,
} as const;

/** Roles of the people and API keys of an account, most powerful first (docs/team-and-roles.md). */
/**
 * What a route does: reads, changes something (one audit entry), or exports data (one audit
 * entry, with the right to read). A route's method says it unless it is declared.
 */
export const ROUTE_EFFECTS = ['reads', 'changes', 'exports'] as const;
export type RouteEffect = (typeof ROUTE_EFFECTS)[number];
export const TEAM_ROLES = ['owner', 'admin', 'editor', 'analyst'] as const;
export type TeamRole = (typeof TEAM_ROLES)[number];
/** A role's name as people read it, and what it may do (the Team page, the invitation mail). */
export const TEAM_ROLE_NAMES: Record<TeamRole, string> = { owner: 'Owner', admin: 'Admin', editor: 'Editor', analyst: 'Analyst' };
export const TEAM_ROLE_DUTIES: Record<TeamRole, string> = {
  owner: 'everything, and hands ownership over',
  admin: 'everything but ownership',
  editor: 'audience, campaigns, automations and templates',
  analyst: 'reads and exports, changes nothing',
};
/** Statuses of a person of an account: invited (no password yet), active, disabled (cannot sign in). */
export const TEAM_USER_STATUSES = ['invited', 'active', 'disabled'] as const;
export type TeamUserStatus = (typeof TEAM_USER_STATUSES)[number];
/** How long an invitation link and a password-reset link stay usable. */
export const TEAM_TOKEN_TTL_MS = { invite: 7 * 24 * 3600_000, reset: 3600_000 } as const;
export type TeamTokenPurpose = keyof typeof TEAM_TOKEN_TTL_MS;

// Sending domains.
/** A sending domain's state: `verified` needs its DKIM record right and a DMARC record present. */
export const DOMAIN_STATUSES = ['pending', 'verified', 'failing'] as const;
export type DomainStatus = (typeof DOMAIN_STATUSES)[number];
/** What a sender's From domain is, for its `domain_status`. */
export type SenderDomainStatus = 'verified' | 'failing' | 'unauthenticated';
export const DOMAIN_RECORD_PURPOSES = ['dkim', 'spf', 'dmarc', 'return_path'] as const;
export type DomainRecordPurpose = (typeof DOMAIN_RECORD_PURPOSES)[number];
export type DomainRecordStatus = 'ok' | 'missing' | 'wrong';
/** How often the worker checks the DNS of verified (and failing) domains again. */
export const DOMAIN_RECHECK_MS = 24 * 3_600_000;
/** The label under a sending domain that the return-path record (a CNAME to BOUNCE_DOMAIN) sits at. */
export const RETURN_PATH_LABEL = 'bounces';
/** Sending domains per account. */
export const MAX_SENDING_DOMAINS = 100;

/** Two-step sign-in (TOTP). */
export const TWO_FACTOR = {
  /** One-time recovery codes made at enrolment. */
  recoveryCodes: 10,
  /** Seconds a code is accepted before and after its own 30 seconds (one step either side). */
  toleranceSeconds: 30,
  /** How long the code step may follow the password. */
  pendingMs: 5 * 60_000,
} as const;

/**
 * Whom a preview is shown as when the audience has nobody yet (or a search finds nobody), and
 * whom the public archive's messages are rendered for: a made-up contact, so placeholders show
 * as values rather than as empty text. Custom fields show their own name in brackets.
 */
export const SAMPLE_CONTACT = {
  first_name: 'Alex',
  last_name: 'Sample',
  email: 'alex.sample@example.com',
  country: 'Germany',
  state: 'Berlin',
  city: 'Berlin',
  address_line1: 'Sample Street 1',
  postal_code: '10115',
} as const;

/** What the editor's picker offers besides placeholders: Liquid written for the reader, inserted at the caret. */
export const LIQUID_SNIPPETS = [
  { label: 'Greeting with a fallback', text: '{% if first_name %}Hi {{ first_name }}{% else %}Hi there{% endif %}' },
  { label: 'First name or “friend”', text: '{{ first_name | default: "friend" }}' },
] as const;
