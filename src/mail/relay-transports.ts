import { AsyncLocalStorage } from 'node:async_hooks';
import diagnosticsChannel from 'node:diagnostics_channel';
import type { ClientRequest } from 'node:http';
import type { Config } from '../config';
import type { RelayKind } from '../lib/constants';
import { lazy } from '../lib/lazy';
import { refusedHost } from '../lib/public-address';
import { MESSAGE_HEADER } from '../lib/verp';
import { handedOver, HandOver, sendTracked, trackHandOver, UNCONFIRMED_WORDS, wasHandedOver } from './hand-over';
import type { OutgoingMessage } from './outgoing-message';
import { isPolicyRefusal } from './policy-refusal';
import { classifySendError, createTransport, DKIM_SIGNED_HEADERS, mailOptions, onFirstUse, smtpTlsOptions } from './transport';

/** One relay as a transport needs it: its secret opened, its URL whole. */
export interface RelaySettings {
  kind: RelayKind;
  /** SMTP: the server's URL with its password. */
  url: string | null;
  /** Provider API key (SES: `ACCESS_KEY_ID:SECRET_ACCESS_KEY`). */
  apiKey: string | null;
  region: string | null;
  /** The API's base URL instead of the provider's (EU regions, emulators). */
  endpoint: string | null;
  /** SMTP: false takes a certificate that does not verify (a self-signed one); the connection is still encrypted. */
  tlsVerify: boolean;
}

export interface RelaySendResult {
  /** The provider's id for the message (SES MessageId, SendGrid X-Message-Id, Postmark MessageID, Mailgun id); null over SMTP. */
  providerMessageId: string | null;
  response: string;
}

export interface RelayTransport {
  send(message: OutgoingMessage): Promise<RelaySendResult>;
  /** Connects and authenticates; sends nothing. */
  verify(): Promise<void>;
  close(): void;
}

/** What a relay's refusal means for the relay and for the message. */
export interface RelayFailure {
  /** The relay itself failed (unreachable, timed out, 421, its API's 5xx, 429 or 401): skip it for a while, try the next. */
  relayDown: boolean;
  /**
   * retry: try later; bounce: the address is refused; policy: the sender's authentication or
   * reputation; failed: give up; unconfirmed: the relay went silent after the whole message was
   * handed to it, so it may have accepted it: never sent again, through it or another relay.
   */
  outcome: 'retry' | 'bounce' | 'policy' | 'failed' | 'unconfirmed';
  code: number | null;
  message: string;
}

/** The provider's own base URLs (`endpoint` replaces them). */
export function defaultEndpoint(kind: RelayKind, region: string | null): string | null {
  switch (kind) {
    case 'ses':
      return `https://email.${region || 'us-east-1'}.amazonaws.com`;
    case 'sendgrid':
      return 'https://api.sendgrid.com';
    case 'postmark':
      return 'https://api.postmarkapp.com';
    case 'mailgun':
      return region === 'eu' ? 'https://api.eu.mailgun.net' : 'https://api.mailgun.net';
    default:
      return null;
  }
}

/** The host a relay connects to (its SMTP server or its API). */
export function relayHost(settings: Pick<RelaySettings, 'kind' | 'url' | 'endpoint' | 'region'>): string {
  const url = settings.kind === 'smtp' ? settings.url : settings.endpoint || defaultEndpoint(settings.kind, settings.region);
  return url ? new URL(url).hostname : '';
}

/**
 * Refuses a relay whose host resolves to a private, loopback or link-local address (the rule
 * outgoing webhooks follow), unless RELAY_ALLOW_PRIVATE: an account's setting must not reach
 * the service's own network.
 */
export async function checkRelayHost(host: string, allowPrivate: boolean): Promise<void> {
  const refused = await refusedHost(host, allowPrivate);
  if (!refused) return;
  const reason = refused === 'private' ? 'resolves to a private, loopback or link-local address' : 'could not be found';
  throw Object.assign(new Error(`${host} ${reason}`), { code: refused === 'private' ? 'EPRIVATE' : 'EDNS' });
}

// The providers' SDKs do not say whether their request went out before a socket hang-up or a
// timeout; node's HTTP clients do, to diagnostics channels, in the send's async context: its
// `http` module (the axios-based SDKs, AWS's) and its fetch (undici: Postmark's).
const apiSends = new AsyncLocalStorage<HandOver>();
const fetches = new WeakMap<object, HandOver>();
let watching = false;

function watchRequests(): void {
  if (watching) return;
  watching = true;
  diagnosticsChannel.subscribe('http.client.request.start', (event) => {
    const handOver = apiSends.getStore();
    if (!handOver) return;
    (event as { request: ClientRequest }).request.once('finish', () => {
      handOver.whole = true;
    });
  });
  diagnosticsChannel.subscribe('undici:request:create', (event) => {
    const handOver = apiSends.getStore();
    if (handOver) fetches.set((event as { request: object }).request, handOver);
  });
  diagnosticsChannel.subscribe('undici:request:bodySent', (event) => {
    const handOver = fetches.get((event as { request: object }).request);
    if (handOver) handOver.whole = true;
  });
}

/** Calls a provider's API, noting whether its request was written whole before it failed. */
async function overHttp<T>(call: () => Promise<T>): Promise<T> {
  watchRequests();
  const handOver: HandOver = { whole: false };
  try {
    return await apiSends.run(handOver, call);
  } catch (err) {
    throw handOver.whole ? handedOver(err) : err;
  }
}

/** Classifies an error of a relay's send (or of the instance's SMTP transport, kind `smtp`). */
export function classifyRelayError(kind: RelayKind, err: unknown): RelayFailure {
  const e = (err ?? {}) as Record<string, any>;
  // Handed over whole and then no answer at all (reset, closed, timed out): the relay may have
  // taken the message (classifySendError says so for SMTP). An answer, even a refusal, says it did not.
  if (kind !== 'smtp' && wasHandedOver(err) && providerError(kind, e).status === null) {
    return { relayDown: true, outcome: 'unconfirmed', code: null, message: `${UNCONFIRMED_WORDS} (${kind}: ${providerError(kind, e).text})`.slice(0, 480) };
  }
  if (e.code === 'EPRIVATE' || e.code === 'EDNS') return { relayDown: true, outcome: 'retry', code: null, message: String(e.message) };
  if (kind === 'smtp') {
    const f = classifySendError(err);
    if (f.outcome === 'unconfirmed') return { relayDown: true, outcome: 'unconfirmed', code: null, message: f.message };
    if (f.code !== null && isPolicyRefusal(f.message)) return { relayDown: false, outcome: 'policy', code: f.code, message: f.message };
    // No reply at all (refused, reset, timed out), a 421 (the server is going away) or a refused login: the relay, not the message.
    const down = f.code === 421 || e.code === 'EAUTH' || (f.code === null && e.code !== 'EENVELOPE' && e.code !== 'EMESSAGE');
    return { relayDown: down, outcome: f.outcome, code: f.code, message: f.message };
  }
  const { status, text, errorCode } = providerError(kind, e);
  const message = `${kind}${status ? ` ${status}` : ''}: ${text}`.slice(0, 480);
  if (status === null || status >= 500 || status === 429 || status === 401) return { relayDown: true, outcome: 'retry', code: status, message };
  if (providerPolicy(kind, status, errorCode, text)) return { relayDown: false, outcome: 'policy', code: status, message };
  // Postmark 406: the recipient is inactive (bounced or complained before) on Postmark's side.
  if (kind === 'postmark' && errorCode === 406) return { relayDown: false, outcome: 'bounce', code: status, message };
  return { relayDown: false, outcome: 'failed', code: status, message };
}

/** The HTTP status, the provider's words and its own error code, read from each SDK's error. */
function providerError(kind: RelayKind, e: Record<string, any>): { status: number | null; text: string; errorCode: number | string | null } {
  const num = (v: unknown) => (typeof v === 'number' && v >= 100 ? v : null);
  switch (kind) {
    case 'ses':
      return { status: num(e.$metadata?.httpStatusCode), text: `${e.name ?? 'Error'}: ${e.message ?? ''}`, errorCode: e.name ?? null };
    case 'sendgrid': {
      const errors = e.response?.body?.errors;
      const text = Array.isArray(errors) && errors.length ? errors.map((x: any) => x?.message).join('; ') : String(e.message ?? e);
      return { status: num(e.code), text, errorCode: null };
    }
    case 'postmark':
      return { status: num(e.statusCode), text: String(e.message ?? e), errorCode: typeof e.code === 'number' ? e.code : null };
    case 'mailgun': {
      // mailgun.js answers a request that got no response (refused, reset, timed out) as a 400
      // whose message is the socket's error code.
      const noResponse = /^(E[A-Z_]+|ERR_[A-Z_]+)$/.test(String(e.message ?? ''));
      return { status: noResponse ? null : num(e.status), text: [e.message, e.details].filter(Boolean).join(': ') || String(e), errorCode: null };
    }
    default:
      return { status: null, text: String(e.message ?? e), errorCode: null };
  }
}

/**
 * The providers' ways of saying "your sender or domain is not allowed": SES MessageRejected and
 * its unverified-domain and paused-account errors, SendGrid's and Mailgun's 403, Postmark's
 * sender-signature and account-approval codes (400, 401, 412).
 */
function providerPolicy(kind: RelayKind, status: number, errorCode: number | string | null, text: string): boolean {
  if (isPolicyRefusal(text)) return true;
  if (kind === 'ses') return ['MessageRejected', 'MailFromDomainNotVerifiedException', 'AccountSuspendedException', 'SendingPausedException'].includes(String(errorCode));
  if (kind === 'sendgrid' || kind === 'mailgun') return status === 403;
  if (kind === 'postmark') return errorCode === 400 || errorCode === 401 || errorCode === 412;
  return false;
}

type Dkim = Config['dkim'];

function dkimOption(dkim: Dkim) {
  return dkim ? { domainName: dkim.domain, keySelector: dkim.selector, privateKey: dkim.privateKey, headerFieldNames: DKIM_SIGNED_HEADERS } : undefined;
}

/** The message as MIME bytes (for the APIs that take raw mail: SES, Mailgun), signed like SMTP mail. */
const rawBuilder = (dkim: Dkim) => {
  const transporter = onFirstUse(() => createTransport({ streamTransport: true, buffer: true, newline: 'windows', dkim: dkimOption(dkim) } as never));
  return async ({ accountId: _accountId, ...message }: OutgoingMessage): Promise<Buffer> =>
    ((await transporter.get().sendMail(mailOptions(message))) as unknown as { message: Buffer }).message;
};

/** Decodes quoted-printable (a pre-encoded message's parts), for the APIs that take the parts as JSON. */
function decodeQuotedPrintable(text: string): string {
  const bytes: number[] = [];
  const soft = text.replace(/=\r?\n/g, '');
  for (let i = 0; i < soft.length; i += 1) {
    if (soft[i] === '=' && /^[0-9A-Fa-f]{2}$/.test(soft.slice(i + 1, i + 3))) {
      bytes.push(parseInt(soft.slice(i + 1, i + 3), 16));
      i += 2;
    } else {
      bytes.push(...Buffer.from(soft[i], 'utf8'));
    }
  }
  return Buffer.from(bytes).toString('utf8');
}

/** html, text and headers of a message for a JSON API, with the feedback token to echo back. */
function parts(message: OutgoingMessage) {
  const decode = (v: string | undefined) => (v === undefined ? undefined : message.encoded ? decodeQuotedPrintable(v) : v);
  const headers: Record<string, string> = { ...message.headers };
  if (message.messageId) headers['Message-ID'] = message.messageId.startsWith('<') ? message.messageId : `<${message.messageId}>`;
  const from = typeof message.from === 'string' ? message.from : `"${message.from.name.replace(/["\\]/g, '')}" <${message.from.address}>`;
  return { from, html: decode(message.html) ?? '', text: decode(message.text), headers, token: message.headers?.[MESSAGE_HEADER] };
}

/**
 * The From of a SendGrid message as its v3 API takes it, `{ email, name }`: the library splits a
 * string at `<` and keeps the quotes of a quoted name, which recipients would then see.
 */
function sendgridFrom(from: OutgoingMessage['from']): string | { email: string; name?: string } {
  if (typeof from === 'string') return from;
  return { email: from.address, ...(from.name ? { name: from.name } : {}) };
}

/** The domain of a From address. */
export function fromDomain(from: OutgoingMessage['from']): string {
  const address = typeof from === 'string' ? (/<([^>]+)>/.exec(from)?.[1] ?? from) : from.address;
  return address.slice(address.lastIndexOf('@') + 1).trim().toLowerCase();
}

const sesSdk = lazy(() => require('@aws-sdk/client-sesv2') as typeof import('@aws-sdk/client-sesv2'));
// Both packages export a default instance with the class beside it.
const sendgridMail = lazy(() => require('@sendgrid/mail') as { MailService: new () => import('@sendgrid/mail').MailService });
const sendgridClient = lazy(() => require('@sendgrid/client') as { Client: new () => import('@sendgrid/client').Client });
const postmarkSdk = lazy(() => require('postmark') as typeof import('postmark'));
const mailgunSdk = lazy(() => require('mailgun.js') as typeof import('mailgun.js').default);

export interface RelayTransportOptions {
  allowPrivate: boolean;
  dkim?: Dkim;
  /** SMTP connections kept open (default 5). */
  maxConnections?: number;
}

/**
 * A relay's transport: SMTP through a nodemailer pool, or the provider's API through its own
 * SDK (loaded on first use: they are heavy and most processes never need them). The host is
 * checked against the private-address rule before the first connection and on verify.
 */
export function createRelayTransport(settings: RelaySettings, options: RelayTransportOptions): RelayTransport {
  const host = relayHost(settings);
  let checked: Promise<void> | undefined;
  const checkOnce = () => {
    checked ??= checkRelayHost(host, options.allowPrivate).catch((err) => {
      checked = undefined;
      throw err;
    });
    return checked;
  };
  const endpoint = settings.endpoint || defaultEndpoint(settings.kind, settings.region) || '';
  const key = settings.apiKey ?? '';

  switch (settings.kind) {
    case 'smtp': {
      const url = settings.url ?? '';
      const server = smtpTlsOptions(url, url.startsWith('smtps://') ? 'tls' : 'starttls', settings.tlsVerify);
      const transporter = onFirstUse(() => trackHandOver(createTransport({
        ...server,
        pool: true,
        maxConnections: options.maxConnections ?? 5,
        maxMessages: Infinity,
        connectionTimeout: 30_000,
        greetingTimeout: 30_000,
        socketTimeout: 60_000,
        dkim: dkimOption(options.dkim),
      } as never)));
      return {
        async send({ accountId: _accountId, ...message }) {
          await checkOnce();
          const info = await sendTracked(transporter.get(), mailOptions(message));
          return { providerMessageId: null, response: String(info.response ?? '') };
        },
        async verify() {
          await checkRelayHost(host, options.allowPrivate);
          const once = createTransport({ ...server, connectionTimeout: 15_000, greetingTimeout: 15_000, socketTimeout: 15_000 } as never);
          try {
            await once.verify();
          } finally {
            once.close();
          }
        },
        close: () => transporter.made()?.close(),
      };
    }

    case 'ses': {
      const raw = rawBuilder(options.dkim);
      const client = lazy(() => {
        const split = key.indexOf(':');
        return new (sesSdk().SESv2Client)({
          region: settings.region || 'us-east-1',
          endpoint,
          credentials: { accessKeyId: key.slice(0, Math.max(0, split)), secretAccessKey: key.slice(split + 1) },
          // Failover and retries are the worker's: one attempt per call.
          maxAttempts: 1,
        });
      });
      return {
        async send(message) {
          await checkOnce();
          const sdk = sesSdk();
          const data = await raw(message);
          const out = await overHttp(() => client().send(new sdk.SendEmailCommand({ Destination: { ToAddresses: [message.to] }, Content: { Raw: { Data: data } } })));
          return { providerMessageId: out.MessageId ?? null, response: `ses ${out.MessageId ?? ''}` };
        },
        async verify() {
          await checkRelayHost(host, options.allowPrivate);
          await client().send(new (sesSdk().GetAccountCommand)({}));
        },
        close: () => undefined,
      };
    }

    case 'sendgrid': {
      const mail = lazy(() => {
        const client = new (sendgridClient().Client)();
        client.setApiKey(key);
        client.setDefaultRequest('baseUrl', endpoint);
        client.setDefaultRequest('timeout' as never, 60_000 as never);
        const service = new (sendgridMail().MailService)();
        service.setClient(client);
        return { service, client };
      });
      return {
        async send(message) {
          await checkOnce();
          const p = parts(message);
          const [response] = await overHttp(() => mail().service.send({
            from: sendgridFrom(message.from),
            to: message.to,
            ...(message.replyTo ? { replyTo: message.replyTo } : {}),
            subject: message.subject,
            html: p.html,
            ...(p.text ? { text: p.text } : {}),
            headers: p.headers,
            ...(p.token ? { customArgs: { campaign_message: p.token } } : {}),
          }));
          const id = response.headers?.['x-message-id'];
          return { providerMessageId: id ? String(id) : null, response: `sendgrid ${response.statusCode}` };
        },
        async verify() {
          await checkRelayHost(host, options.allowPrivate);
          await mail().client.request({ method: 'GET', url: '/v3/scopes' });
        },
        close: () => undefined,
      };
    }

    case 'postmark': {
      const base = new URL(endpoint);
      const client = lazy(() => new (postmarkSdk().ServerClient)(key, { useHttps: base.protocol === 'https:', requestHost: base.host, timeout: 60 }));
      return {
        async send(message) {
          await checkOnce();
          const p = parts(message);
          const out = await overHttp(() => client().sendEmail({
            From: p.from,
            To: message.to,
            ...(message.replyTo ? { ReplyTo: message.replyTo } : {}),
            Subject: message.subject,
            HtmlBody: p.html,
            ...(p.text ? { TextBody: p.text } : {}),
            Headers: Object.entries(p.headers).map(([Name, Value]) => ({ Name, Value })),
            ...(p.token ? { Metadata: { campaign_message: p.token } } : {}),
            // Campaigns belong in Postmark's broadcast stream, which every server has.
            MessageStream: 'broadcast',
          }));
          return { providerMessageId: out.MessageID ?? null, response: `postmark ${out.Message ?? ''}` };
        },
        async verify() {
          await checkRelayHost(host, options.allowPrivate);
          await client().getServer();
        },
        close: () => undefined,
      };
    }

    case 'mailgun': {
      const raw = rawBuilder(options.dkim);
      const client = lazy(() => new (mailgunSdk())(FormData).client({ username: 'api', key, url: endpoint.replace(/\/+$/, ''), timeout: 60_000 }));
      return {
        async send(message) {
          await checkOnce();
          const data = await raw(message);
          const out = await overHttp(() => client().messages.create(fromDomain(message.from), { to: [message.to], message: data }));
          return { providerMessageId: out.id ?? null, response: `mailgun ${out.message ?? ''}` };
        },
        async verify() {
          await checkRelayHost(host, options.allowPrivate);
          await client().domains.list();
        },
        close: () => undefined,
      };
    }
  }
}
