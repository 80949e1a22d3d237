import { simpleParser, ParsedMail } from 'mailparser';
import { MESSAGE_HEADER, VERP_PREFIX } from '../lib/verp';

/** What the returned original's own headers say it is: its X-Campaign-Message token and its Message-ID. */
export interface Named {
  token?: string;
  messageId?: string;
}

/**
 * What a message that came back says about the message it answers. `token` is the original's
 * X-Campaign-Message token, or else a VERP token the report shows anywhere (its own To: too);
 * `named` holds only what the returned original's headers say (absent when they say nothing).
 */
export type Reading = (
  | { kind: 'bounce'; permanent: boolean; status?: string; diagnostic: string; recipient?: string }
  | { kind: 'complaint'; diagnostic: string; recipient?: string }
  /** A DSN that reports no failure (delayed, delivered, relayed, expanded): nothing to record. */
  | { kind: 'not-a-failure' }
  /** RFC 3834 auto-replies, vacation and out-of-office answers: never bounces. */
  | { kind: 'auto-reply' }
  | { kind: 'unrecognised' }
) & { token?: string; named?: Named };

interface Field {
  name: string;
  value: string;
}

/**
 * Reads a bounce, complaint or auto-reply with mailparser:
 * - RFC 3464 delivery status notifications (`multipart/report; report-type=delivery-status`,
 *   as Postfix, Exim, Sendmail, Exchange and Gmail send them): the first failed recipient's
 *   Status (5.x.x permanent, 4.x.x transient) and Diagnostic-Code;
 * - RFC 5965 ARF feedback reports (`report-type=feedback-report`, Feedback-Type abuse or fraud):
 *   a complaint;
 * - anything else from a mail system (MAILER-DAEMON, postmaster, X-Failed-Recipients) is a
 *   malformed DSN: its status code is looked for in the text;
 * - RFC 3834 Auto-Submitted (not `no`), X-Autoreply and vacation subjects: an auto-reply.
 * `token` is the message's X-Campaign-Message (or VERP) token when the returned original shows it,
 * `named` the X-Campaign-Message and Message-ID of the returned original.
 */
export async function readReport(raw: Buffer | string): Promise<Reading> {
  const mail = await simpleParser(raw, { keepDeliveryStatus: true, skipHtmlToText: true, skipTextLinks: true, skipImageLinks: true });
  const source = typeof raw === 'string' ? raw : raw.toString('utf8');
  const named = namedBy(mail, source);
  const token = named.token ?? verpTokenIn(mail, source);
  return { ...classify(mail), ...(token ? { token } : {}), ...(named.token || named.messageId ? { named } : {}) };
}

type Kind = DistributiveOmit<Reading, 'token' | 'named'>;
type DistributiveOmit<T, K extends keyof never> = T extends unknown ? Omit<T, K> : never;

function classify(mail: ParsedMail): Kind {
  const type = mail.headers.get('content-type') as { value?: string; params?: Record<string, string> } | undefined;
  const reportType = type?.value === 'multipart/report' ? String(type.params?.['report-type'] ?? '').toLowerCase() : '';
  const part = (contentType: string) => mail.attachments.find((a) => a.contentType.toLowerCase() === contentType);

  const feedback = part('message/feedback-report');
  if (reportType === 'feedback-report' || feedback) {
    const fields = feedback ? parseFields(feedback.content.toString('utf8')).flat() : [];
    const feedbackType = (get(fields, 'feedback-type') ?? 'abuse').toLowerCase();
    if (['abuse', 'fraud'].includes(feedbackType)) {
      return { kind: 'complaint', diagnostic: `${feedbackType} report${get(fields, 'user-agent') ? ` from ${get(fields, 'user-agent')}` : ''}`, recipient: address(get(fields, 'original-rcpt-to')) };
    }
    return { kind: 'not-a-failure' };
  }

  const status = part('message/delivery-status');
  if (status) {
    const groups = parseFields(status.content.toString('utf8'));
    const recipients = groups.slice(1).filter((g) => get(g, 'final-recipient') || get(g, 'original-recipient') || get(g, 'status'));
    const failed = recipients.find((g) => (get(g, 'action') ?? 'failed').toLowerCase() === 'failed');
    if (failed) {
      const code = /([245])\.\d{1,3}\.\d{1,3}/.exec(get(failed, 'status') ?? '')?.[0] ?? statusIn(get(failed, 'diagnostic-code') ?? '');
      const diagnostic = get(failed, 'diagnostic-code') ?? get(failed, 'status') ?? 'delivery failed';
      return {
        kind: 'bounce',
        permanent: code ? code.startsWith('5') : true,
        ...(code ? { status: code } : {}),
        diagnostic,
        recipient: address(get(failed, 'final-recipient') ?? get(failed, 'original-recipient')),
      };
    }
    if (recipients.length) return { kind: 'not-a-failure' };
    // A report without per-recipient fields is malformed: read it like a plain bounce below.
  }

  const from = mail.from?.value.map((a) => a.address ?? '').join(' ').toLowerCase() ?? '';
  const failedHeader = String(mail.headers.get('x-failed-recipients') ?? '');
  const fromMailSystem = /(^|\s)(mailer-daemon|postmaster|mail-daemon)@/.test(from) || !!failedHeader || reportType === 'delivery-status';
  if (fromMailSystem) {
    const text = `${mail.subject ?? ''}\n${mail.text ?? ''}`;
    const code = statusIn(text);
    const permanent = code ? code.startsWith('5') : /permanent(ly)?|does not exist|unknown user|user unknown|no such user/i.test(text);
    return {
      kind: 'bounce',
      permanent,
      ...(code ? { status: code } : {}),
      diagnostic: diagnosticLine(mail.text ?? '', code) || String(mail.subject ?? 'delivery failed'),
      recipient: address(failedHeader.split(',')[0]),
    };
  }

  if (isAutoReply(mail)) return { kind: 'auto-reply' };
  return { kind: 'unrecognised' };
}

/** RFC 3834 and the de-facto vacation markers. */
function isAutoReply(mail: ParsedMail): boolean {
  const header = (name: string) => String(mail.headers.get(name) ?? '').toLowerCase().trim();
  const autoSubmitted = header('auto-submitted');
  if (autoSubmitted && autoSubmitted !== 'no') return true;
  if (mail.headers.has('x-autoreply') || mail.headers.has('x-autorespond') || mail.headers.has('x-autoresponder')) return true;
  if (['auto_reply', 'auto-reply'].includes(header('precedence'))) return true;
  if (header('x-auto-response-suppress') && /out of (the )?office|automatic reply/i.test(mail.subject ?? '')) return true;
  return /^(auto(matic)?[ -]?(reply|response)|out of (the )?office|vacation|abwesenheitsnotiz|r[ée]ponse automatique)\b/i.test(mail.subject ?? '');
}

const ORIGINAL_TYPES = ['message/rfc822', 'text/rfc822-headers', 'message/rfc822-headers', 'message/global', 'message/global-headers'];

/**
 * Where the returned original can be: the parts that carry it, the text, and the source after
 * the report's own header (an inline original, as ARF reports often send it, is folded into the
 * text by the parser), so that the report's own Message-ID is never taken for the original's.
 */
function originalTexts(mail: ParsedMail, source: string): string[] {
  const body = /\r?\n\r?\n/.exec(source);
  return [
    ...mail.attachments.filter((a) => ORIGINAL_TYPES.includes(a.contentType.toLowerCase())).map((a) => a.content.toString('utf8')),
    mail.text ?? '',
    body ? source.slice(body.index + body[0].length) : '',
  ];
}

/** The X-Campaign-Message and Message-ID of the returned original, wherever the report shows them. */
function namedBy(mail: ParsedMail, source: string): Named {
  const texts = originalTexts(mail, source);
  const first = (pattern: RegExp) => texts.map((t) => pattern.exec(t)?.[1]).find((v) => v !== undefined);
  const own = mail.headers.get(MESSAGE_HEADER.toLowerCase());
  const token = typeof own === 'string' && own.trim() ? own.trim() : first(new RegExp(`^${MESSAGE_HEADER}:[ \\t]*([0-9a-zA-Z]+-[0-9a-fA-F]+)`, 'im'));
  const messageId = first(/^Message-ID:[ \t]*(?:\r?\n[ \t]+)?(<[^<>\s]+@[^<>\s]+>)/im);
  return { ...(token ? { token } : {}), ...(messageId ? { messageId } : {}) };
}

/** A VERP token anywhere in the report, the report's own To: included (a bounce without the original). */
function verpTokenIn(mail: ParsedMail, source: string): string | undefined {
  const verp = new RegExp(`${VERP_PREFIX.replace('+', '\\+')}([0-9a-zA-Z]+-[0-9a-fA-F]+)@`, 'i');
  for (const text of [...originalTexts(mail, source), source]) {
    const match = verp.exec(text);
    if (match) return match[1];
  }
  return undefined;
}

/** RFC 822-style field groups separated by blank lines (the body of message/delivery-status). */
function parseFields(body: string): Field[][] {
  const groups: Field[][] = [];
  for (const block of body.replace(/\r\n/g, '\n').split(/\n[ \t]*\n/)) {
    const fields: Field[] = [];
    for (const line of block.split('\n')) {
      if (/^[ \t]/.test(line) && fields.length) {
        fields[fields.length - 1].value += ` ${line.trim()}`;
        continue;
      }
      const colon = line.indexOf(':');
      if (colon > 0) fields.push({ name: line.slice(0, colon).trim().toLowerCase(), value: line.slice(colon + 1).trim() });
    }
    if (fields.length) groups.push(fields);
  }
  return groups;
}

function get(fields: Field[], name: string): string | undefined {
  return fields.find((f) => f.name === name)?.value;
}

/** `rfc822; user@example.org` → `user@example.org`. */
function address(value: string | undefined): string | undefined {
  const match = /([^\s;<>]+@[^\s;<>]+)/.exec(value ?? '');
  return match?.[1];
}

/** The first enhanced status code in a text, or one made from a basic SMTP reply code (550 → 5.0.0). */
function statusIn(text: string): string | undefined {
  const enhanced = /\b([45])\.(\d{1,3})\.(\d{1,3})\b/.exec(text);
  if (enhanced) return enhanced[0];
  const basic = /\b([45])[0-5]\d(?=[ -])/.exec(text);
  return basic ? `${basic[1]}.0.0` : undefined;
}

/** The line of a plain-text bounce that carries its status, for the diagnostic. */
function diagnosticLine(text: string, code: string | undefined): string {
  const lines = text.split(/\r?\n/).map((l) => l.trim()).filter(Boolean);
  const withCode = code ? lines.find((l) => l.includes(code) || /\b[45]\d\d\b/.test(l)) : undefined;
  return (withCode ?? lines.find((l) => /fail|not be delivered|undeliver|rejected|unknown/i.test(l)) ?? '').slice(0, 500);
}
