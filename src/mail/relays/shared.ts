// What every relay shares: its settings and results, the host check, the policy words, the
// hand-over watch of API calls and the message's parts for the JSON APIs.
import { AsyncLocalStorage } from 'node:async_hooks';
import diagnosticsChannel from 'node:diagnostics_channel';
import type { ClientRequest } from 'node:http';
import { decode } from 'libqp';
import type { Config } from '../../config';
import type { RelayKind } from '../../lib/constants';
import { emailKey } from '../../lib/email-key';
import { refusedHost } from '../../lib/public-address';
import { MESSAGE_HEADER } from '../../lib/verp';
import { handedOver, HandOver } from '../hand-over';
import type { OutgoingMessage } from '../outgoing-message';
import { createTransport, DKIM_SIGNED_HEADERS, mailOptions, onFirstUse } from '../transport';

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

export type Dkim = Config['dkim'];

export interface RelayTransportOptions {
  allowPrivate: boolean;
  dkim?: Dkim;
  /** SMTP connections kept open (default 5). */
  maxConnections?: number;
}

/** What a provider's transport is given: its settings read, and the host check to run before it connects. */
export interface RelayContext {
  settings: RelaySettings;
  options: RelayTransportOptions;
  /** The API's base URL: the relay's own, or the provider's. */
  endpoint: string;
  key: string;
  /** The host check, once per transport (again after a failure). */
  checkOnce(): Promise<void>;
  /** The host check, every time (a relay's test). */
  checkNow(): Promise<void>;
}

/** The HTTP status, the provider's words and its own error code, read from an SDK's error. */
export interface ProviderError {
  status: number | null;
  text: string;
  errorCode: number | string | null;
}

/** A provider reached through its API: one file each (ses.ts, sendgrid.ts, postmark.ts, mailgun.ts). */
export interface ApiProvider {
  /** The provider's own base URL (a relay's `endpoint` replaces it). */
  endpoint(region: string | null): string;
  transport(relay: RelayContext): RelayTransport;
  errorOf(e: Record<string, any>): ProviderError;
  /** The provider's own ways of saying "your sender or domain is not allowed", beside the policy words. */
  refusesSender(status: number, errorCode: number | string | null): boolean;
  /** The provider's own way of saying the address is refused, if it has one. */
  refusesAddress?(status: number, errorCode: number | string | null): boolean;
}

/** A number that is an HTTP status, else null (the SDKs' errors carry other codes in the same fields). */
export function httpStatus(value: unknown): number | null {
  return typeof value === 'number' && value >= 100 ? value : null;
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

const POLICY_CODES = /\b(5\.7\.26|5\.7\.515|4\.7\.32|5\.7\.25|5\.7\.28)\b/;
const POLICY_WORDS = /\b(dmarc|spf|dkim|policy|authenticat\w*|reputation|sender identity|not verified|unverified)\b/i;

/**
 * Whether a refusal is about the sender's authentication or reputation rather than the
 * address: the enhanced codes that mean it, or 5.7.1 with such wording. The one reading of it,
 * whoever says it: an SMTP answer (the instance's or a relay's), a provider's API error, or a
 * delivery status notification that comes back later (record-feedback.ts).
 */
export function isPolicyRefusal(text: string): boolean {
  if (POLICY_CODES.test(text)) return true;
  return /\b5\.7\.1\b/.test(text) && POLICY_WORDS.test(text);
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
export async function overHttp<T>(call: () => Promise<T>): Promise<T> {
  watchRequests();
  const handOver: HandOver = { whole: false };
  try {
    return await apiSends.run(handOver, call);
  } catch (err) {
    throw handOver.whole ? handedOver(err) : err;
  }
}

/** nodemailer's DKIM options for the instance's key, if it has one. */
export function dkimOption(dkim: Dkim) {
  return dkim ? { domainName: dkim.domain, keySelector: dkim.selector, privateKey: dkim.privateKey, headerFieldNames: DKIM_SIGNED_HEADERS } : undefined;
}

/** The message as MIME bytes (for the APIs that take raw mail: SES, Mailgun), signed like SMTP mail. */
export function rawBuilder(dkim: Dkim): (message: OutgoingMessage) => Promise<Buffer> {
  const transporter = onFirstUse(() => createTransport({ streamTransport: true, buffer: true, newline: 'windows', dkim: dkimOption(dkim) } as never));
  return async ({ accountId: _accountId, ...message }) =>
    ((await transporter.get().sendMail(mailOptions(message))) as unknown as { message: Buffer }).message;
}

/** html, text and headers of a message for a JSON API (a pre-encoded message's parts decoded), with the feedback token to echo back. */
export function jsonParts(message: OutgoingMessage) {
  const decoded = (v: string | undefined) => (v === undefined ? undefined : message.encoded ? decode(v).toString('utf8') : v);
  const headers: Record<string, string> = { ...message.headers };
  if (message.messageId) headers['Message-ID'] = message.messageId.startsWith('<') ? message.messageId : `<${message.messageId}>`;
  const from = typeof message.from === 'string' ? message.from : `"${message.from.name.replace(/["\\]/g, '')}" <${message.from.address}>`;
  return { from, html: decoded(message.html) ?? '', text: decoded(message.text), headers, token: message.headers?.[MESSAGE_HEADER] };
}

/**
 * The copies and files of a message for a JSON API: copies without the `to` address or a
 * repeat (the APIs refuse an address twice in one message), files as base64 with their type.
 */
export function jsonExtras(message: OutgoingMessage) {
  const seen = new Set([emailKey(message.to)]);
  const once = (list: string[] | undefined) => (list ?? []).filter((a) => {
    const key = emailKey(a);
    return seen.has(key) ? false : (seen.add(key), true);
  });
  const cc = once(message.cc);
  const bcc = once(message.bcc);
  const attachments = (message.attachments ?? []).map((a) => ({ filename: a.filename, content: a.content, type: a.contentType || 'application/octet-stream' }));
  return { cc, bcc, attachments };
}

/** The domain of a From address. */
export function fromDomain(from: OutgoingMessage['from']): string {
  const address = typeof from === 'string' ? (/<([^>]+)>/.exec(from)?.[1] ?? from) : from.address;
  return address.slice(address.lastIndexOf('@') + 1).trim().toLowerCase();
}
