import fs from 'node:fs';
import { isIP } from 'node:net';
import path from 'node:path';
import { PASSWORD_MIN } from './lib/constants';
import { isEmail } from './lib/validation';

/** Every environment variable the service reads, parsed once and typed. */
export interface Config {
  /** `postgres://…` selects PostgreSQL; undefined means SQLite at `sqliteFile`. */
  databaseUrl: string | undefined;
  sqliteFile: string;
  /** SQLite's page cache per connection, in KiB (the OS caches the file as well); see SQLITE_CACHE_MB. */
  sqliteCacheKib: number;
  host: string;
  port: number;
  /** Public origin used in every link the service writes; no trailing slash. */
  baseUrl: string;
  /** `smtp://…` or `smtps://…`; undefined writes `.eml` files to `outboxDir`. */
  smtpUrl: string | undefined;
  /**
   * How SMTP is encrypted: `starttls` upgrades when the server offers STARTTLS, `tls` speaks
   * TLS from the first byte (what `smtps://` means), `none` never encrypts.
   */
  smtpTls: SmtpTls;
  /** Whether the SMTP server's certificate must be valid for its name (false accepts a self-signed one). */
  smtpTlsVerify: boolean;
  /** From address of the service's own mail (sender verification, notifications). */
  mailFrom: string;
  /** What the operator should fix though the service can start (printed at start, one line each). */
  warnings: string[];
  outboxDir: string;
  /** Maximum CSV upload size in bytes. */
  maxCsvBytes: number;
  /** Maximum JSON / urlencoded body size in bytes. */
  maxBodyBytes: number;
  /** Optional per-account sending rate, messages per second (0 = unlimited). */
  mailRate: number;
  /** SMTP connections the sending worker keeps open. */
  smtpMaxConnections: number;
  /** Attempts at a message the mail server keeps refusing with 4xx before it counts as failed. */
  sendMaxAttempts: number;
  /** Wait before the first retry of a refused message; it doubles with each further attempt (up to an hour). */
  sendRetryMs: number;
  /** How long a worker holds claimed messages before another worker may take them over. */
  sendLeaseMs: number;
  /** Addresses per batch of a running send's ledger expansion, and batches kept queued ahead of the sending. */
  sendExpandBatch: number;
  sendExpandAhead: number;
  /** How long a stopping process (SIGTERM, SIGINT) may take to finish what is in hand before it is forced out. */
  shutdownMs: number;
  /** HMAC secret for tokens in links; generated and stored in the database when unset. */
  appSecret: string | undefined;
  /**
   * Where the generated app secret is kept when APP_SECRET is unset: beside the SQLite file
   * (`<file>.secret`), or `<DATA_DIR>/app-secret` with PostgreSQL; APP_SECRET_FILE overrides.
   */
  appSecretFile: string;
  dkim: { domain: string; selector: string; privateKey: string } | undefined;
  /** How long a process trusts a key pair it authenticated, without reading the database again (0 = always read). */
  apiKeyCacheMs: number;
  /** API requests allowed per key pair per minute (0 = no limit). */
  apiRateLimitPerMinute: number;
  /** Failed dashboard sign-ins allowed per email and client address (and 4× per client address) per 15 minutes (0 = no limit). */
  loginRateLimit: number;
  /** Signup form submissions allowed per client address per hour, per process (0 = no limit). */
  signupRateLimit: number;
  /**
   * Which proxies' `X-Forwarded-For` to believe, as Express's `trust proxy` takes it: false (none,
   * the client is the socket's peer), true (any), a number of hops, or addresses/subnets.
   */
  trustProxy: boolean | number | string[];
  logLevel: string;
  /** Bearer token `GET /metrics` requires; undefined leaves the metrics open (keep them behind the proxy then). */
  metricsToken: string | undefined;
  dataDir: string;
  /** Domain of the VERP envelope sender `bounces+<token>@BOUNCE_DOMAIN`; undefined keeps the From address. */
  bounceDomain: string | undefined;
  /** Port of the inbound bounce listener (worker or inbound role); undefined: no listener. */
  bounceSmtpPort: number | undefined;
  bounceSmtpHost: string;
  /** Largest inbound bounce message accepted, in bytes. */
  bounceMaxBytes: number;
  /**
   * SMTP submission of transactional mail (SUBMISSION_PORT; undefined: off), in the `both` and
   * `inbound` roles: STARTTLS with `tls` (PEM files; unset: a self-signed pair in the data folder).
   */
  submission: { port: number; host: string; tls: { cert: string; key: string } | undefined; maxBytes: number } | undefined;
  /** Soft bounces within 30 days after which an address is suppressed. */
  softBounceLimit: number;
  /** `imaps://user:pass@host/INBOX`: a mailbox that receives bounces, polled by the worker. */
  bounceImapUrl: string | undefined;
  bounceImapPollMs: number;
  /** Outgoing webhooks may reach private, loopback and link-local addresses (WEBHOOK_ALLOW_PRIVATE=1; tests, closed networks). */
  webhookAllowPrivate: boolean;
  /** Accounts' relays may reach private, loopback and link-local addresses (RELAY_ALLOW_PRIVATE=1; tests, closed networks). */
  relayAllowPrivate: boolean;
  /** How long old data is kept before the worker's maintenance job deletes it, in days (0 = for ever). */
  retention: RetentionDays;
  /** Provider webhooks; each route answers 404 while its setting is unset. */
  webhooks: {
    /** SNS topics whose SES notifications `POST /webhooks/ses` accepts. */
    sesTopicArns: string[];
    /** SendGrid's Event Webhook verification key (base64 DER, ECDSA P-256). */
    sendgridPublicKey: string | undefined;
    /** `user:password` Postmark sends as HTTP basic auth. */
    postmarkAuth: string | undefined;
    /** Mailgun's HTTP webhook signing key. */
    mailgunSigningKey: string | undefined;
  };
  /** Sending domains and bounces over TLS. */
  domains: DomainConfig;
  /** The complaint and bounce guard per sending domain and provider (docs/deliverability.md). */
  deliverability: DeliverabilityConfig;
  /** Days audit log entries are kept before the maintenance job deletes them (AUDIT_RETENTION_DAYS; 0 = for ever). */
  auditRetentionDays: number;
  /** Single sign-on through an OpenID Connect provider (OIDC_*); undefined: password sign-in only. */
  oidc: OidcConfig | undefined;
  /** The first account of an empty database (ADMIN_EMAIL, ADMIN_PASSWORD); undefined: the demo account. */
  admin: { email: string; password: string } | undefined;
}

export interface OidcConfig {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** Email domains (lower case) allowed to sign in with the provider, and the only ones that join by domain; empty: invited people of any domain, nobody joins by domain. */
  allowedDomains: string[];
  /** The role a first sign-in from a listed domain gets in the account whose owner's domain it is; null: only invited people sign in. */
  defaultRole: 'admin' | 'editor' | 'analyst' | null;
}

/** OIDC_ISSUER with its client: all three or none; OIDC_DEFAULT_ROLE never owner. */
function oidcOf(env: NodeJS.ProcessEnv): OidcConfig | undefined {
  const issuer = optional(env, 'OIDC_ISSUER');
  const clientId = optional(env, 'OIDC_CLIENT_ID');
  const clientSecret = optional(env, 'OIDC_CLIENT_SECRET');
  if (!issuer && !clientId && !clientSecret) return undefined;
  if (!issuer || !clientId || !clientSecret) throw new ConfigError('OIDC_ISSUER, OIDC_CLIENT_ID and OIDC_CLIENT_SECRET are set together');
  let url: URL;
  try {
    url = new URL(issuer);
  } catch {
    throw new ConfigError(`OIDC_ISSUER must be the provider's issuer URL, got "${issuer}"`);
  }
  if (url.protocol !== 'https:' && !['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname)) throw new ConfigError('OIDC_ISSUER must be an https:// URL');
  const role = optional(env, 'OIDC_DEFAULT_ROLE')?.toLowerCase();
  if (role !== undefined && role !== 'none' && !['admin', 'editor', 'analyst'].includes(role)) {
    throw new ConfigError(`OIDC_DEFAULT_ROLE must be admin, editor, analyst or none, got "${role}"`);
  }
  return {
    issuer,
    clientId,
    clientSecret,
    allowedDomains: (optional(env, 'OIDC_ALLOWED_DOMAINS') ?? '').split(',').map((d) => d.trim().toLowerCase()).filter(Boolean),
    defaultRole: role === undefined || role === 'none' ? null : (role as OidcConfig['defaultRole']),
  };
}

/** Sending domains' DNS checks and signing; the bounce mailbox's and listener's TLS. */
export interface DomainConfig {
  /** DNS servers the domain checks ask (DNS_SERVERS, `ip[:port]`); empty: the system resolver. */
  dnsServers: string[];
  /** What a sending domain's SPF record must include (SPF_INCLUDE), e.g. the relay's `_spf.example.net`. */
  spfInclude: string | undefined;
  /** Refuse starting a send or an automation whose sender's domain is not authenticated (REQUIRE_DOMAIN_AUTH). */
  requireDomainAuth: boolean;
  /** Whether the bounce mailbox's certificate must be valid for its name (BOUNCE_IMAP_TLS_VERIFY). */
  bounceImapTlsVerify: boolean;
  /** Files of the PEM certificate and key the bounce listener offers STARTTLS with (BOUNCE_TLS_CERT, BOUNCE_TLS_KEY). */
  bounceTls: { cert: string; key: string } | undefined;
}

/** RETENTION_*_DAYS: days each kind of old data is kept; 0 keeps it for ever. */
export interface RetentionDays {
  /** Opens and clicks of messages sent longer ago (RETENTION_EVENTS_DAYS). */
  events: number;
  /** The per-message rows (and system mail bodies) of finished sends (RETENTION_MESSAGES_DAYS). */
  messages: number;
  /** Outgoing webhook deliveries that were delivered or given up (RETENTION_WEBHOOK_DELIVERIES_DAYS). */
  webhookDeliveries: number;
}

/**
 * The unsubscribe link of a message works as long as its row is kept, and the law asks for at
 * least 30 days (CAN-SPAM), so message rows are not deleted sooner.
 */
export const MIN_MESSAGE_RETENTION_DAYS = 30;

export class ConfigError extends Error {}

export const SMTP_TLS_MODES = ['starttls', 'tls', 'none'] as const;
export type SmtpTls = (typeof SMTP_TLS_MODES)[number];

function flag(env: NodeJS.ProcessEnv, name: string, fallback: boolean): boolean {
  const raw = optional(env, name)?.toLowerCase();
  if (raw === undefined) return fallback;
  if (raw === 'true' || raw === '1') return true;
  if (raw === 'false' || raw === '0') return false;
  throw new ConfigError(`${name} must be true or false, got "${raw}"`);
}

/** SMTP_TLS, defaulting to what SMTP_URL's scheme says; `smtps://` with anything but `tls` is a contradiction. */
function smtpTlsOf(env: NodeJS.ProcessEnv, smtpUrl: string | undefined): SmtpTls {
  const implicit = Boolean(smtpUrl?.startsWith('smtps://'));
  const raw = optional(env, 'SMTP_TLS')?.toLowerCase();
  if (raw === undefined) return implicit ? 'tls' : 'starttls';
  if (!(SMTP_TLS_MODES as readonly string[]).includes(raw)) {
    throw new ConfigError(`SMTP_TLS must be one of ${SMTP_TLS_MODES.join(', ')}, got "${raw}"`);
  }
  if (implicit && raw !== 'tls') throw new ConfigError(`SMTP_URL smtps:// means TLS from the start; use smtp:// with SMTP_TLS=${raw}`);
  return raw as SmtpTls;
}

export interface DeliverabilityConfig {
  /** COMPLAINT_PAUSE_RATE: complaints over delivered (24 h) at which a domain's sends to a provider pause. */
  complaintPauseRate: number;
  /** BOUNCE_PAUSE_RATE: hard bounces over delivered (24 h) likewise. */
  bouncePauseRate: number;
  /** GUARD_MIN_DELIVERED: delivered messages (24 h) below which the guard does not judge. */
  guardMinDelivered: number;
  /**
   * INSTANCE_BOUNCE_LIST=1: an address that hard-bounced in any account is skipped in every
   * account's sends for 30 days (kept only as a keyed hash; docs/deliverability.md).
   */
  instanceBounceList: boolean;
}

/** A rate as `0.3%` or `0.003`, between 0 and 1. */
function rate(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name]?.trim();
  if (raw === undefined || raw === '') return fallback;
  const value = raw.endsWith('%') ? Number(raw.slice(0, -1)) / 100 : Number(raw);
  if (!Number.isFinite(value) || value <= 0 || value > 1) throw new ConfigError(`${name} must be a rate such as 0.3% or 0.003, got "${raw}"`);
  return value;
}

function integer(env: NodeJS.ProcessEnv, name: string, fallback: number, min = 0): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min) {
    throw new ConfigError(`${name} must be an integer of at least ${min}, got "${raw}"`);
  }
  return value;
}

function retentionDays(env: NodeJS.ProcessEnv): RetentionDays {
  const messages = integer(env, 'RETENTION_MESSAGES_DAYS', 0, 0);
  if (messages > 0 && messages < MIN_MESSAGE_RETENTION_DAYS) {
    throw new ConfigError(`RETENTION_MESSAGES_DAYS must be 0 (keep) or at least ${MIN_MESSAGE_RETENTION_DAYS}: a message's unsubscribe link works only while its row is kept, got "${messages}"`);
  }
  return {
    events: integer(env, 'RETENTION_EVENTS_DAYS', 0, 0),
    messages,
    webhookDeliveries: integer(env, 'RETENTION_WEBHOOK_DELIVERIES_DAYS', 30, 0),
  };
}

/**
 * The settings that hold a secret. Each may instead be read from the file named by `<NAME>_FILE`
 * (what Docker and Kubernetes secrets mount), so the value never sits in the environment that
 * `docker inspect` and /proc show. APP_SECRET has its own: APP_SECRET_FILE is read when it
 * exists and written with a generated secret when it does not.
 */
export const FILE_SETTINGS = [
  'DATABASE_URL',
  'SMTP_URL',
  'DKIM_PRIVATE_KEY',
  'BOUNCE_IMAP_URL',
  'METRICS_TOKEN',
  'SENDGRID_WEBHOOK_PUBLIC_KEY',
  'POSTMARK_WEBHOOK_AUTH',
  'MAILGUN_WEBHOOK_SIGNING_KEY',
  'OIDC_CLIENT_SECRET',
  'ADMIN_PASSWORD',
] as const;

/** `env` with each `<NAME>_FILE` of FILE_SETTINGS replaced by the file's content as `<NAME>`. */
function withSettingFiles(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const read: NodeJS.ProcessEnv = {};
  for (const name of FILE_SETTINGS) {
    const file = optional(env, `${name}_FILE`);
    if (file === undefined) continue;
    if (optional(env, name) !== undefined) throw new ConfigError(`${name} and ${name}_FILE are both set; keep one`);
    try {
      read[name] = fs.readFileSync(file, 'utf8');
    } catch (err) {
      throw new ConfigError(`${name}_FILE names a file that cannot be read: ${file} (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
    }
  }
  return { ...env, ...read };
}

/** ADMIN_EMAIL with ADMIN_PASSWORD, both or neither; the password as long as any other. */
function adminOf(env: NodeJS.ProcessEnv): Config['admin'] {
  const email = optional(env, 'ADMIN_EMAIL');
  const password = optional(env, 'ADMIN_PASSWORD');
  if (email === undefined && password === undefined) return undefined;
  if (email === undefined || password === undefined) throw new ConfigError('ADMIN_EMAIL and ADMIN_PASSWORD are set together');
  if (!isEmail(email)) throw new ConfigError(`ADMIN_EMAIL must be an email address, got "${email}"`);
  if (password.length < PASSWORD_MIN) throw new ConfigError(`ADMIN_PASSWORD must be at least ${PASSWORD_MIN} characters`);
  return { email, password };
}

function optional(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const raw = env[name];
  return raw === undefined || raw.trim() === '' ? undefined : raw.trim();
}

const PROXY_NAMES = new Set(['loopback', 'linklocal', 'uniquelocal']);

/** An address or subnet Express's `trust proxy` takes: `10.0.0.1`, `10.0.0.0/8`, `::1`, `loopback`. */
function isProxyAddress(entry: string): boolean {
  if (PROXY_NAMES.has(entry)) return true;
  const [address, bits, ...rest] = entry.split('/');
  const family = isIP(address);
  if (family === 0 || rest.length > 0) return false;
  if (bits === undefined) return true;
  const n = /^\d+$/.test(bits) ? Number(bits) : -1;
  return n >= 0 && n <= (family === 4 ? 32 : 128);
}

/** TRUST_PROXY: unset/`false`/`0` = no proxy; `true`; a hop count; or a comma-separated list of addresses. */
function trustProxy(env: NodeJS.ProcessEnv): Config['trustProxy'] {
  const raw = optional(env, 'TRUST_PROXY')?.toLowerCase();
  if (raw === undefined || raw === 'false' || raw === '0') return false;
  if (raw === 'true') return true;
  if (/^\d+$/.test(raw)) return Number(raw);
  const entries = raw.split(',').map((e) => e.trim()).filter(Boolean);
  const wrong = entries.filter((e) => !isProxyAddress(e));
  if (entries.length === 0 || wrong.length > 0) {
    throw new ConfigError(`TRUST_PROXY must be false, true, a number of hops or proxy addresses such as "loopback, 10.0.0.0/8", got "${wrong[0] ?? raw}"`);
  }
  return entries;
}

function hostOf(baseUrl: string): string {
  try {
    return new URL(baseUrl).hostname;
  } catch {
    throw new ConfigError(`BASE_URL must be an absolute URL such as https://campaigns.example.com, got "${baseUrl}"`);
  }
}

/**
 * The default MAIL_FROM is no-reply@ BASE_URL's host: with an IP address or a name without a dot
 * (localhost) there, the service's own mail would go out from an address real mail servers refuse.
 */
function mailFromWarnings(env: NodeJS.ProcessEnv, baseUrl: string): string[] {
  if (optional(env, 'MAIL_FROM') !== undefined) return [];
  const host = hostOf(baseUrl).replace(/^\[|\]$/g, '');
  if (isIP(host) === 0 && host.includes('.')) return [];
  return [
    `MAIL_FROM is not set, so the service's own mail (sender verification, notifications, sign-up confirmations) would come from no-reply@${host}, ` +
      `which mail servers refuse (BASE_URL's host ${host} is not a domain name). Set MAIL_FROM to an address at your domain, for example MAIL_FROM="Campaigns <no-reply@example.com>".`,
  ];
}

function bounceDomainOf(raw: string | undefined): string | undefined {
  if (raw === undefined) return undefined;
  const domain = raw.toLowerCase();
  if (!/^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)*[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/.test(domain)) {
    throw new ConfigError(`BOUNCE_DOMAIN must be a domain name such as bounces.example.com, got "${raw}"`);
  }
  return domain;
}

function imapUrlOf(raw: string | undefined): string | undefined {
  if (raw === undefined) return undefined;
  let url: URL | undefined;
  try {
    url = new URL(raw);
  } catch {
    url = undefined;
  }
  if (!url || !['imap:', 'imaps:'].includes(url.protocol) || !url.hostname || !url.username) {
    throw new ConfigError('BOUNCE_IMAP_URL must look like imaps://user:password@imap.example.com/INBOX');
  }
  return raw;
}

/** DNS_SERVERS: comma-separated `ip`, `ip:port` or `[ipv6]:port`. */
function dnsServersOf(raw: string | undefined): string[] {
  const servers = (raw ?? '').split(',').map((s) => s.trim()).filter(Boolean);
  for (const server of servers) {
    const v6 = /^\[([^\]]+)\](?::(\d+))?$/.exec(server);
    const v4 = /^([^:]+)(?::(\d+))?$/.exec(server);
    const address = v6?.[1] ?? v4?.[1] ?? server;
    const port = v6?.[2] ?? v4?.[2];
    if (isIP(address) === 0 || (port !== undefined && (Number(port) < 1 || Number(port) > 65535))) {
      throw new ConfigError(`DNS_SERVERS must be addresses such as 127.0.0.1, 127.0.0.1:5353 or [::1]:53, got "${server}"`);
    }
  }
  return servers;
}

function postmarkAuthOf(raw: string | undefined): string | undefined {
  if (raw !== undefined && !/^[^:]+:.+$/.test(raw)) throw new ConfigError('POSTMARK_WEBHOOK_AUTH must be user:password');
  return raw;
}

/**
 * SQLite's page cache when SQLITE_CACHE_MB is unset, in MiB, by what the process does. A
 * process that serves HTTP keeps 16 (imports and lists go through many pages again and again);
 * a worker alone keeps 4: it reads each recipient's contact once, so a larger cache only fills
 * up with pages it does not read again (bench:send, 100,000 recipients: peak RSS 14 MiB lower
 * with 4 than with 16, at the same CPU per message).
 */
const SQLITE_CACHE_MB = { server: 16, worker: 4 } as const;

/** `kind`: `worker` for a process that does not serve HTTP (`--role=worker` or `inbound`). */
export function loadConfig(given: NodeJS.ProcessEnv = process.env, kind: keyof typeof SQLITE_CACHE_MB = 'server'): Config {
  const env = withSettingFiles(given);
  const dataDir = path.resolve(optional(env, 'DATA_DIR') ?? 'data');
  const port = integer(env, 'PORT', 3000, 0);
  const databaseUrl = optional(env, 'DATABASE_URL');
  if (databaseUrl && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    throw new ConfigError('DATABASE_URL must start with postgres:// (unset it to use SQLite)');
  }
  const smtpUrl = optional(env, 'SMTP_URL');
  if (smtpUrl && !/^smtps?:\/\//.test(smtpUrl)) {
    throw new ConfigError('SMTP_URL must start with smtp:// or smtps://');
  }
  const dkimDomain = optional(env, 'DKIM_DOMAIN');
  const dkimSelector = optional(env, 'DKIM_SELECTOR');
  const dkimKey = optional(env, 'DKIM_PRIVATE_KEY');
  if ((dkimDomain || dkimSelector || dkimKey) && !(dkimDomain && dkimSelector && dkimKey)) {
    throw new ConfigError('DKIM_DOMAIN, DKIM_SELECTOR and DKIM_PRIVATE_KEY must be set together');
  }
  if (optional(env, 'BOUNCE_SMTP_PORT') !== undefined && optional(env, 'BOUNCE_DOMAIN') === undefined) {
    throw new ConfigError('BOUNCE_SMTP_PORT needs BOUNCE_DOMAIN: the listener accepts only bounces+<token>@BOUNCE_DOMAIN');
  }
  const bounceTlsCert = optional(env, 'BOUNCE_TLS_CERT');
  const bounceTlsKey = optional(env, 'BOUNCE_TLS_KEY');
  if (Boolean(bounceTlsCert) !== Boolean(bounceTlsKey)) throw new ConfigError('BOUNCE_TLS_CERT and BOUNCE_TLS_KEY must be set together');
  const submissionCert = optional(env, 'SUBMISSION_TLS_CERT');
  const submissionKey = optional(env, 'SUBMISSION_TLS_KEY');
  if (Boolean(submissionCert) !== Boolean(submissionKey)) throw new ConfigError('SUBMISSION_TLS_CERT and SUBMISSION_TLS_KEY must be set together');
  const submission =
    optional(env, 'SUBMISSION_PORT') === undefined
      ? undefined
      : {
          port: integer(env, 'SUBMISSION_PORT', 587, 0),
          host: optional(env, 'SUBMISSION_HOST') ?? '0.0.0.0',
          tls: submissionCert && submissionKey ? { cert: submissionCert, key: submissionKey } : undefined,
          maxBytes: integer(env, 'SUBMISSION_MAX_BYTES', 25 * 1024 * 1024, 1024),
        };
  const sqliteFile = path.resolve(optional(env, 'SQLITE_FILE') ?? path.join(dataDir, 'campaigns.sqlite3'));
  const baseUrl = (optional(env, 'BASE_URL') ?? `http://localhost:${port}`).replace(/\/+$/, '');
  return {
    databaseUrl,
    sqliteFile,
    sqliteCacheKib: integer(env, 'SQLITE_CACHE_MB', SQLITE_CACHE_MB[kind], 1) * 1024,
    host: optional(env, 'HOST') ?? '127.0.0.1',
    port,
    baseUrl,
    smtpUrl,
    smtpTls: smtpTlsOf(env, smtpUrl),
    smtpTlsVerify: flag(env, 'SMTP_TLS_VERIFY', true),
    mailFrom: optional(env, 'MAIL_FROM') ?? `Campaigns <no-reply@${hostOf(baseUrl)}>`,
    warnings: mailFromWarnings(env, baseUrl),
    outboxDir: path.resolve(optional(env, 'OUTBOX_DIR') ?? path.join(dataDir, 'outbox')),
    maxCsvBytes: integer(env, 'MAX_CSV_MB', 100, 1) * 1024 * 1024,
    maxBodyBytes: integer(env, 'MAX_BODY_KB', 2048, 1) * 1024,
    mailRate: integer(env, 'MAIL_RATE', 0, 0),
    smtpMaxConnections: integer(env, 'SMTP_MAX_CONNECTIONS', 5, 1),
    sendMaxAttempts: integer(env, 'SEND_MAX_ATTEMPTS', 5, 1),
    sendRetryMs: integer(env, 'SEND_RETRY_SECONDS', 60, 1) * 1000,
    sendLeaseMs: integer(env, 'SEND_LEASE_SECONDS', 300, 1) * 1000,
    sendExpandBatch: integer(env, 'SEND_EXPAND_BATCH', 5000, 1),
    sendExpandAhead: integer(env, 'SEND_EXPAND_AHEAD', 3, 1),
    shutdownMs: integer(env, 'SHUTDOWN_SECONDS', 30, 1) * 1000,
    appSecret: optional(env, 'APP_SECRET'),
    appSecretFile: path.resolve(optional(env, 'APP_SECRET_FILE') ?? (databaseUrl ? path.join(dataDir, 'app-secret') : `${sqliteFile}.secret`)),
    dkim: dkimDomain && dkimSelector && dkimKey
      ? { domain: dkimDomain, selector: dkimSelector, privateKey: dkimKey.replace(/\\n/g, '\n') }
      : undefined,
    apiKeyCacheMs: integer(env, 'API_KEY_CACHE_SECONDS', 5, 0) * 1000,
    apiRateLimitPerMinute: integer(env, 'API_RATE_LIMIT', 6000, 0),
    loginRateLimit: integer(env, 'LOGIN_RATE_LIMIT', 10, 0),
    signupRateLimit: integer(env, 'SIGNUP_RATE_LIMIT', 10, 0),
    trustProxy: trustProxy(env),
    logLevel: optional(env, 'LOG_LEVEL') ?? 'info',
    metricsToken: optional(env, 'METRICS_TOKEN'),
    dataDir,
    bounceDomain: bounceDomainOf(optional(env, 'BOUNCE_DOMAIN')),
    bounceSmtpPort: optional(env, 'BOUNCE_SMTP_PORT') === undefined ? undefined : integer(env, 'BOUNCE_SMTP_PORT', 0, 0),
    bounceSmtpHost: optional(env, 'BOUNCE_SMTP_HOST') ?? '127.0.0.1',
    bounceMaxBytes: integer(env, 'BOUNCE_MAX_KB', 512, 16) * 1024,
    submission,
    softBounceLimit: integer(env, 'SOFT_BOUNCE_LIMIT', 3, 1),
    bounceImapUrl: imapUrlOf(optional(env, 'BOUNCE_IMAP_URL')),
    bounceImapPollMs: integer(env, 'BOUNCE_IMAP_POLL_SECONDS', 60, 1) * 1000,
    webhookAllowPrivate: flag(env, 'WEBHOOK_ALLOW_PRIVATE', false),
    relayAllowPrivate: flag(env, 'RELAY_ALLOW_PRIVATE', false),
    retention: retentionDays(env),
    webhooks: {
      sesTopicArns: (optional(env, 'SES_SNS_TOPIC_ARNS') ?? '').split(',').map((a) => a.trim()).filter(Boolean),
      sendgridPublicKey: optional(env, 'SENDGRID_WEBHOOK_PUBLIC_KEY'),
      postmarkAuth: postmarkAuthOf(optional(env, 'POSTMARK_WEBHOOK_AUTH')),
      mailgunSigningKey: optional(env, 'MAILGUN_WEBHOOK_SIGNING_KEY'),
    },
    deliverability: {
      complaintPauseRate: rate(env, 'COMPLAINT_PAUSE_RATE', 0.003),
      bouncePauseRate: rate(env, 'BOUNCE_PAUSE_RATE', 0.05),
      guardMinDelivered: integer(env, 'GUARD_MIN_DELIVERED', 1000, 1),
      instanceBounceList: flag(env, 'INSTANCE_BOUNCE_LIST', false),
    },
    domains: {
      dnsServers: dnsServersOf(optional(env, 'DNS_SERVERS')),
      spfInclude: optional(env, 'SPF_INCLUDE')?.toLowerCase(),
      requireDomainAuth: flag(env, 'REQUIRE_DOMAIN_AUTH', false),
      bounceImapTlsVerify: flag(env, 'BOUNCE_IMAP_TLS_VERIFY', true),
      bounceTls: bounceTlsCert && bounceTlsKey ? { cert: bounceTlsCert, key: bounceTlsKey } : undefined,
    },
    auditRetentionDays: integer(env, 'AUDIT_RETENTION_DAYS', 365, 0),
    oidc: oidcOf(env),
    admin: adminOf(env),
  };
}
