import crypto from 'node:crypto';
import { PROVIDER_WEBHOOK_AGE } from '../../../lib/constants';
import { safeEqual } from '../../../lib/crypto';
import type { ServiceDeps } from '../../context';
import type { FeedbackService, Report } from './feedback';
import { isFresh, returnToken, takeToken } from './webhook-tokens';

/** What a webhook request did: its HTTP answer, and the events it recorded or could not match. */
export interface WebhookResult {
  status: 200 | 400 | 401 | 403 | 404;
  error?: string;
  counts?: { recorded: number; duplicate: number; ignored: number; unmatched: number };
}

/** Fetches a URL's text (SNS certificates, the subscription confirmation); tests replace it. */
export type HttpGet = (url: string) => Promise<string>;

interface Matched {
  messageId: number | undefined;
  report: Report | undefined;
  /** The provider's own id of the message (stored when one of the account's relays sent it through the provider's API). */
  providerId?: unknown;
}

const SNS_HOST = /^sns\.[a-z0-9-]+\.amazonaws\.com(\.cn)?$/;
const CERT_CACHE_MAX = 20;

async function defaultHttpGet(url: string): Promise<string> {
  const res = await fetch(url, { redirect: 'error', signal: AbortSignal.timeout(10_000) });
  if (!res.ok) throw new Error(`GET ${new URL(url).host} answered ${res.status}`);
  return res.text();
}

/** An SNS URL we may fetch: https on an `sns.<region>.amazonaws.com` host. */
export function isSnsUrl(value: unknown, pem = false): value is string {
  try {
    const url = new URL(String(value));
    return url.protocol === 'https:' && SNS_HOST.test(url.hostname) && !url.port && (!pem || url.pathname.endsWith('.pem'));
  } catch {
    return false;
  }
}

/**
 * Provider webhooks (SES through SNS, SendGrid, Postmark, Mailgun), each authenticated the
 * provider's way before anything is read; every event is matched to a ledger message through a
 * token the service wrote (X-Campaign-Message, its Message-ID, or the provider's echo of it),
 * never by address, and recorded through services.feedback, so it counts once. A signed
 * timestamp older than the provider's window (or ahead of our clock) is refused, and a Mailgun
 * signature, which does not cover the event it comes with, is taken once.
 */
export function createWebhooksService({
  db,
  config,
  logger,
  feedback,
  now: clock = () => new Date(),
}: Pick<ServiceDeps, 'db' | 'config' | 'logger'> & { feedback: FeedbackService; now?: () => Date }) {
  let httpGet: HttpGet = defaultHttpGet;
  let now = clock;
  const certificates = new Map<string, string>();
  const settings = config.webhooks;

  async function recordAll(provider: string, events: Matched[]): Promise<WebhookResult> {
    const counts = { recorded: 0, duplicate: 0, ignored: 0, unmatched: 0 };
    for (const { messageId: named, report, providerId } of events) {
      const messageId = named ?? (report && typeof providerId === 'string' && providerId ? await feedback.messageOfProviderId(providerId) : undefined);
      if (!report) counts.ignored += 1;
      else if (messageId === undefined) counts.unmatched += 1;
      else {
        const { result } = await feedback.record(messageId, report);
        if (result === 'unknown') counts.unmatched += 1;
        else counts[result] += 1;
      }
    }
    if (counts.unmatched) logger.warn({ provider, ...counts }, 'webhook events that name no message of this service');
    return { status: 200, counts };
  }

  const tokenOrMessageId = (token: unknown, messageId?: unknown) =>
    (typeof token === 'string' ? feedback.messageOfToken(token) : undefined) ?? (typeof messageId === 'string' ? feedback.messageOfMessageId(messageId) : undefined);

  async function snsCertificate(url: string): Promise<string> {
    const cached = certificates.get(url);
    if (cached) return cached;
    const pem = await httpGet(url);
    if (certificates.size >= CERT_CACHE_MAX) certificates.delete(certificates.keys().next().value as string);
    certificates.set(url, pem);
    return pem;
  }

  /** SNS's string to sign: the message's fields in a fixed order, each as "Name\nvalue\n". */
  function snsStringToSign(m: Record<string, unknown>): string {
    const names = m.Type === 'Notification'
      ? ['Message', 'MessageId', 'Subject', 'Timestamp', 'TopicArn', 'Type']
      : ['Message', 'MessageId', 'SubscribeURL', 'Timestamp', 'Token', 'TopicArn', 'Type'];
    return names.filter((n) => typeof m[n] === 'string').map((n) => `${n}\n${m[n]}\n`).join('');
  }

  return {
    /** Tests inject a fetcher that serves a locally generated certificate. */
    setHttpGet(get: HttpGet): void {
      httpGet = get;
      certificates.clear();
    },

    /** Tests move the clock that signed timestamps are checked against. */
    setClock(clock: () => Date): void {
      now = clock;
    },

    /** Amazon SES events through SNS: signature (certificate from sns.<region>.amazonaws.com), topic, then the event. */
    async ses(body: Buffer): Promise<WebhookResult> {
      if (!settings.sesTopicArns.length) return { status: 404, error: 'Not Found' };
      const m = parseJson(body) as Record<string, unknown> | undefined;
      if (!m || typeof m.Type !== 'string' || typeof m.Signature !== 'string') return { status: 400, error: 'The body is not an SNS message.' };
      if (!isSnsUrl(m.SigningCertURL, true)) return { status: 403, error: 'The signing certificate is not from SNS.' };
      if (!['1', '2'].includes(String(m.SignatureVersion))) return { status: 403, error: 'Unknown SNS signature version.' };
      let valid = false;
      try {
        const pem = await snsCertificate(m.SigningCertURL);
        const algorithm = m.SignatureVersion === '2' ? 'RSA-SHA256' : 'RSA-SHA1';
        valid = crypto.verify(algorithm, Buffer.from(snsStringToSign(m)), new crypto.X509Certificate(pem).publicKey, Buffer.from(m.Signature, 'base64'));
      } catch (err) {
        logger.warn({ err: (err as Error).message }, 'SNS signature could not be checked');
      }
      if (!valid) return { status: 403, error: 'Invalid SNS signature.' };
      if (!settings.sesTopicArns.includes(String(m.TopicArn))) return { status: 403, error: 'This SNS topic is not configured here.' };

      if (m.Type === 'SubscriptionConfirmation') {
        if (!isSnsUrl(m.SubscribeURL)) return { status: 400, error: 'The subscribe URL is not an SNS URL.' };
        await httpGet(m.SubscribeURL);
        logger.info({ topic: m.TopicArn }, 'SNS subscription confirmed');
        return { status: 200, counts: { recorded: 0, duplicate: 0, ignored: 1, unmatched: 0 } };
      }
      if (m.Type !== 'Notification') return recordAll('ses', [{ messageId: undefined, report: undefined }]);
      const n = parseJson(Buffer.from(String(m.Message))) as Record<string, any> | undefined;
      return recordAll('ses', sesEvents(n, tokenOrMessageId).map((e) => ({ ...e, providerId: n?.mail?.messageId })));
    },

    /** SendGrid's Event Webhook: ECDSA (P-256, SHA-256) over timestamp + raw body with SENDGRID_WEBHOOK_PUBLIC_KEY. */
    async sendgrid(body: Buffer, signature: string | undefined, timestamp: string | undefined): Promise<WebhookResult> {
      if (!settings.sendgridPublicKey) return { status: 404, error: 'Not Found' };
      if (!signature || !timestamp) return { status: 401, error: 'The SendGrid signature headers are missing.' };
      let valid = false;
      try {
        const key = crypto.createPublicKey({ key: Buffer.from(settings.sendgridPublicKey, 'base64'), format: 'der', type: 'spki' });
        valid = crypto.verify('sha256', Buffer.concat([Buffer.from(timestamp), body]), key, Buffer.from(signature, 'base64'));
      } catch (err) {
        logger.warn({ err: (err as Error).message }, 'SendGrid signature could not be checked');
      }
      if (!valid) return { status: 403, error: 'Invalid SendGrid signature.' };
      if (!isFresh(timestamp, now(), PROVIDER_WEBHOOK_AGE.sendgridMaxAgeMs, PROVIDER_WEBHOOK_AGE.maxAheadMs)) {
        return { status: 403, error: 'The SendGrid signature timestamp is too old or ahead of time.' };
      }
      const events = parseJson(body);
      if (!Array.isArray(events)) return { status: 400, error: 'The body is not a list of SendGrid events.' };
      return recordAll('sendgrid', events.map((e: Record<string, any>) => ({
        messageId: tokenOrMessageId(e?.campaign_message, e?.['smtp-id']),
        report: sendgridReport(e ?? {}),
        // sg_message_id is the X-Message-Id the send was answered with, a dot and SendGrid's suffix.
        providerId: typeof e?.sg_message_id === 'string' ? e.sg_message_id.split('.')[0] : undefined,
      })));
    },

    /** Postmark's bounce and spam-complaint webhooks, with the basic auth of POSTMARK_WEBHOOK_AUTH. */
    async postmark(authorization: string | undefined, body: Buffer): Promise<WebhookResult> {
      if (!settings.postmarkAuth) return { status: 404, error: 'Not Found' };
      const given = /^Basic\s+(\S+)$/i.exec(authorization ?? '')?.[1];
      const expected = Buffer.from(settings.postmarkAuth).toString('base64');
      if (!given || !safeEqual(given, expected)) return { status: 401, error: 'Invalid credentials.' };
      const e = parseJson(body) as Record<string, any> | undefined;
      if (!e || (typeof e.RecordType !== 'string' && typeof e.Type !== 'string')) return { status: 400, error: 'The body is not a Postmark webhook.' };
      return recordAll('postmark', [{ messageId: tokenOrMessageId(e.Metadata?.campaign_message), report: postmarkReport(e), providerId: e.MessageID }]);
    },

    /** Mailgun's webhooks: HMAC-SHA256 of timestamp + token under MAILGUN_WEBHOOK_SIGNING_KEY. */
    async mailgun(body: Buffer): Promise<WebhookResult> {
      if (!settings.mailgunSigningKey) return { status: 404, error: 'Not Found' };
      const payload = parseJson(body) as Record<string, any> | undefined;
      const sig = payload?.signature ?? {};
      if (typeof sig.token !== 'string' || !/^[\x21-\x7e]{1,200}$/.test(sig.token)) return { status: 403, error: 'Invalid Mailgun signature.' };
      const expected = crypto.createHmac('sha256', settings.mailgunSigningKey).update(`${sig.timestamp ?? ''}${sig.token}`).digest('hex');
      if (typeof sig.signature !== 'string' || !safeEqual(sig.signature, expected)) return { status: 403, error: 'Invalid Mailgun signature.' };
      const at = now();
      const maxAge = PROVIDER_WEBHOOK_AGE.mailgunMaxAgeMs;
      if (!isFresh(sig.timestamp, at, maxAge, PROVIDER_WEBHOOK_AGE.maxAheadMs)) return { status: 403, error: 'The Mailgun signature timestamp is too old or ahead of time.' };
      const e = payload?.['event-data'];
      if (!e || typeof e.event !== 'string') return { status: 400, error: 'The body is not a Mailgun event.' };
      // Kept for twice the window: by then its timestamp is refused anyway.
      const token: string = sig.token;
      if (!(await takeToken(db, 'mailgun', token, at, new Date(at.getTime() + 2 * maxAge)))) {
        logger.warn({ provider: 'mailgun' }, 'a Mailgun signature was posted again');
        return { status: 403, error: 'This Mailgun signature was used before.' };
      }
      try {
        return await recordAll('mailgun', [{
          messageId: tokenOrMessageId(e['user-variables']?.campaign_message, e.message?.headers?.['message-id']),
          report: mailgunReport(e),
          providerId: e.message?.headers?.['message-id'],
        }]);
      } catch (err) {
        await returnToken(db, 'mailgun', token).catch(() => undefined);
        throw err;
      }
    },
  };
}

export type WebhooksService = ReturnType<typeof createWebhooksService>;

function parseJson(body: Buffer): unknown {
  try {
    return JSON.parse(body.toString('utf8'));
  } catch {
    return undefined;
  }
}

/** SES notifications (notificationType) and event publishing (eventType): Bounce and Complaint. */
function sesEvents(n: Record<string, any> | undefined, match: (token: unknown, messageId?: unknown) => number | undefined): Matched[] {
  if (!n) return [{ messageId: undefined, report: undefined }];
  const headers: Array<{ name: string; value: string }> = Array.isArray(n.mail?.headers) ? n.mail.headers : [];
  const header = (name: string) => headers.find((h) => String(h?.name).toLowerCase() === name.toLowerCase())?.value;
  const messageId = match(header('X-Campaign-Message'), header('Message-ID'));
  const type = n.notificationType ?? n.eventType;
  if (type === 'Bounce') {
    const b = n.bounce ?? {};
    if (b.bounceType === 'Undetermined') return [{ messageId, report: undefined }];
    const recipient = Array.isArray(b.bouncedRecipients) ? b.bouncedRecipients[0] ?? {} : {};
    const permanent = b.bounceType === 'Permanent';
    return [{
      messageId,
      report: {
        event: 'bounce',
        permanent,
        ...(typeof recipient.status === 'string' ? { status: recipient.status } : {}),
        diagnostic: String(recipient.diagnosticCode ?? `${b.bounceType} bounce (${b.bounceSubType ?? 'General'})`),
        source: 'ses',
      },
    }];
  }
  if (type === 'Complaint') {
    const c = n.complaint ?? {};
    if (c.complaintSubType === 'OnAccountSuppressionList') return [{ messageId, report: undefined }];
    return [{ messageId, report: { event: 'complaint', diagnostic: `${c.complaintFeedbackType ?? 'abuse'} complaint`, source: 'ses' } }];
  }
  return [{ messageId, report: undefined }];
}

/** SendGrid: `bounce` (type bounce: permanent; blocked: transient) and `spamreport`; others are not failures. */
function sendgridReport(e: Record<string, any>): Report | undefined {
  if (e.event === 'spamreport') return { event: 'complaint', diagnostic: 'spam report', source: 'sendgrid' };
  if (e.event !== 'bounce') return undefined;
  const permanent = e.type !== 'blocked';
  return {
    event: 'bounce',
    permanent,
    ...(typeof e.status === 'string' && /^[45]\.\d+\.\d+$/.test(e.status) ? { status: e.status } : {}),
    diagnostic: String(e.reason ?? e.type ?? 'bounce'),
    source: 'sendgrid',
  };
}

/** Postmark bounce types: HardBounce and BadEmailAddress are permanent, SoftBounce and DnsError transient. */
const POSTMARK_BOUNCES: Record<string, boolean> = { HardBounce: true, BadEmailAddress: true, SoftBounce: false, DnsError: false };

function postmarkReport(e: Record<string, any>): Report | undefined {
  // Older webhook payloads have no RecordType: the Type tells.
  const recordType = e.RecordType ?? (e.Type === 'SpamComplaint' ? 'SpamComplaint' : 'Bounce');
  if (recordType === 'SpamComplaint') return { event: 'complaint', diagnostic: String(e.Description ?? 'spam complaint'), source: 'postmark' };
  if (recordType !== 'Bounce' || !(e.Type in POSTMARK_BOUNCES)) return undefined;
  return { event: 'bounce', permanent: POSTMARK_BOUNCES[e.Type], diagnostic: String(e.Details || e.Description || e.Name), source: 'postmark' };
}

/** Mailgun: `failed` with severity permanent (temporary failures are still being retried), and `complained`. */
function mailgunReport(e: Record<string, any>): Report | undefined {
  if (e.event === 'complained') return { event: 'complaint', diagnostic: 'spam complaint', source: 'mailgun' };
  if (e.event !== 'failed' || e.severity !== 'permanent') return undefined;
  const status = e['delivery-status'] ?? {};
  const diagnostic = [status.code, status.message || status.description].filter(Boolean).join(' ') || String(e.reason ?? 'failed');
  const code = /\b([45])\.\d{1,3}\.\d{1,3}\b/.exec(diagnostic)?.[0];
  return { event: 'bounce', permanent: true, ...(code ? { status: code } : {}), diagnostic, source: 'mailgun' };
}
