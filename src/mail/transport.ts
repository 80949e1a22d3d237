import fs from 'node:fs';
import path from 'node:path';
import type * as Nodemailer from 'nodemailer';
import type { SendMailOptions, Transporter } from 'nodemailer';
import type { Logger } from 'pino';
import type { Config, SmtpTls } from '../config';
import { rawMessage } from './mime-message';
import type { OutgoingMessage } from './outgoing-message';
import type { DkimKey } from './dkim';
import { sendTracked, trackHandOver, UNCONFIRMED_WORDS, wasHandedOver } from './hand-over';
import { lazy } from '../lib/lazy';

/** Where the outbox writes (and the dashboard's Outbox page reads) one account's messages. */
export function outboxFolder(outboxDir: string, accountId: number | undefined): string {
  return accountId ? path.join(outboxDir, `account-${accountId}`) : outboxDir;
}

export interface SendResult {
  messageId: string;
  /** The SMTP server's final response, or the outbox file written. */
  response: string;
}

/**
 * The one way out for mail: SMTP through a pooled nodemailer transport when SMTP_URL is set,
 * otherwise an `.eml` file per message under the outbox folder (shown by the dashboard's
 * Outbox page).
 */
export interface MailTransport {
  readonly kind: 'smtp' | 'outbox';
  /** How many messages the caller should keep in flight at most (pool size × pipelining). */
  readonly concurrency: number;
  send(message: OutgoingMessage): Promise<SendResult>;
  close(): void;
}

export interface TransportOptions {
  /** SMTP connections kept open (default 5). */
  maxConnections?: number;
}

/** Both unsubscribe headers are signed (RFC 8058 §4 asks for it), with nodemailer's usual list. */
export const DKIM_SIGNED_HEADERS = [
  'From', 'Sender', 'Reply-To', 'Subject', 'Date', 'Message-ID', 'To', 'Cc', 'MIME-Version',
  'Content-Type', 'Content-Transfer-Encoding', 'List-Id', 'List-Unsubscribe', 'List-Unsubscribe-Post',
  // Gmail counts a Feedback-ID only when a signature covers it.
  'Feedback-ID',
].join(':');

/** nodemailer's DKIM options for a key. */
export function dkimOptions(key: DkimKey) {
  return { domainName: key.domain, keySelector: key.selector, privateKey: key.privateKey, headerFieldNames: DKIM_SIGNED_HEADERS };
}

/**
 * nodemailer's TLS options for SMTP_TLS and SMTP_TLS_VERIFY. nodemailer takes `secure` from
 * the URL's scheme (over any option), so the scheme is set to match the mode.
 */
export function smtpTlsOptions(smtpUrl: string, tls: SmtpTls, verify: boolean) {
  const url = smtpUrl.replace(/^smtps?:/, tls === 'tls' ? 'smtps:' : 'smtp:');
  return { url, ignoreTLS: tls === 'none', tls: { rejectUnauthorized: verify } };
}

export function createMailTransport(
  config: Pick<Config, 'smtpUrl' | 'outboxDir' | 'dkim'> & Partial<Pick<Config, 'smtpTls' | 'smtpTlsVerify'>>,
  logger?: Logger,
  options: TransportOptions = {},
): MailTransport {
  const dkim = config.dkim ? dkimOptions(config.dkim) : undefined;

  if (config.smtpUrl) {
    const maxConnections = options.maxConnections ?? 5;
    const tls = config.smtpTls ?? (config.smtpUrl.startsWith('smtps://') ? 'tls' : 'starttls');
    const server = smtpTlsOptions(config.smtpUrl, tls, config.smtpTlsVerify ?? true);
    // Tracked like a relay's: a message the server went silent on after taking it whole is not sent again.
    const transporter = onFirstUse(() => trackHandOver(createTransport({
      ...server,
      pool: true,
      maxConnections,
      maxMessages: Infinity,
      // Fail a dead server within a minute instead of nodemailer's ten, so leases stay short.
      connectionTimeout: 30_000,
      greetingTimeout: 30_000,
      socketTimeout: 60_000,
      dkim,
    } as never)));
    return {
      kind: 'smtp',
      concurrency: maxConnections * 2,
      async send({ accountId: _accountId, ...message }) {
        const info = await sendTracked(transporter.get(), mailOptions(message));
        return { messageId: info.messageId, response: String(info.response ?? '') };
      },
      close: () => transporter.made()?.close(),
    };
  }

  const transporter = onFirstUse(() => createTransport({ streamTransport: true, buffer: true, newline: 'unix', dkim } as never));
  fs.mkdirSync(config.outboxDir, { recursive: true });
  return {
    kind: 'outbox',
    concurrency: 4,
    async send({ accountId, ...message }) {
      const info = (await transporter.get().sendMail(mailOptions(message))) as unknown as { messageId: string; message: Buffer };
      const stamp = new Date().toISOString().replace(/[:.]/g, '-');
      const safeId = info.messageId.replace(/[^\w.@-]/g, '');
      const folder = outboxFolder(config.outboxDir, accountId);
      await fs.promises.mkdir(folder, { recursive: true });
      const file = path.join(folder, `${stamp}_${safeId}.eml`);
      await fs.promises.writeFile(file, info.message);
      logger?.debug({ file }, 'message written to outbox');
      return { messageId: info.messageId, response: `outbox ${path.basename(file)}` };
    },
    close: () => transporter.made()?.close(),
  };
}

/**
 * nodemailer's transports are loaded with the first message: a process that sends nothing (a
 * web process, a worker with an empty queue) does not load them at start (~13 ms of a start).
 */
export const createTransport = (options: never): Transporter => (require('nodemailer') as typeof Nodemailer).createTransport(options);

/** A transporter made on first use; `made()` is it only if it was. */
export function onFirstUse(make: () => Transporter): { get(): Transporter; made(): Transporter | undefined } {
  let made: Transporter | undefined;
  const get = lazy(() => (made = make()));
  return { get, made: () => made };
}

/**
 * nodemailer's options for a message: a pre-encoded one goes as `raw`, built once here. A
 * sending domain's key replaces the transport's (DKIM_DOMAIN) for this message.
 */
export function mailOptions({ encoded, dkim, ...message }: Omit<OutgoingMessage, 'accountId'>): SendMailOptions {
  const signing = dkim ? { dkim: dkimOptions(dkim) } : {};
  if (!encoded) return { ...message, ...signing };
  const built = rawMessage({ ...message, text: message.text ?? '' });
  return { envelope: built.envelope, raw: built.raw, messageId: built.messageId, ...signing };
}

/** How long a failure's text may be (its column holds 500). */
const ANSWER_MAX = 480;

/**
 * An SMTP answer as one line: a multi-line reply (`550-5.7.26 This mail…\n550-5.7.26 Gmail
 * requires…\n550 5.7.26 …`) keeps its codes once and every line's words, so it reads as the
 * server wrote it instead of stopping at the end of its first line.
 */
export function smtpAnswer(response: string): string {
  const lines = response.split(/\r?\n/).map((line) => line.trim()).filter(Boolean);
  const codes = /^(\d{3})[- ](?:(\d\.\d{1,3}\.\d{1,3})(?:\s+|$))?/;
  const first = codes.exec(lines[0] ?? '');
  const words = lines.map((line) => line.replace(codes, '').trim()).filter(Boolean).join(' ').replace(/\s+/g, ' ');
  const head = first ? [first[1], first[2]].filter(Boolean).join(' ') : '';
  return wholeSentences(head ? `${head} ${words}`.trim() : words);
}

/**
 * A failure's text as stored before answers were kept whole (`EMESSAGE: 550-5.7.26 …`): the
 * library's code before a server's answer left out, the answer's first code read as a final one.
 */
export function storedAnswer(text: string): string {
  return text.replace(/^E[A-Z]{3,}: (?=\d{3}[- ])/, '').replace(/^(\d{3})-/, '$1 ');
}

/** Text cut to fit ANSWER_MAX at the end of a sentence (or else of a word), never in the middle of one. */
export function wholeSentences(text: string, max = ANSWER_MAX): string {
  if (text.length <= max) return text;
  const room = text.slice(0, max - 1);
  const sentence = Math.max(room.lastIndexOf('. '), room.lastIndexOf('! '), room.lastIndexOf('? '));
  if (sentence > max / 3) return `${room.slice(0, sentence + 1)} …`;
  const word = room.lastIndexOf(' ');
  return `${room.slice(0, word > 0 ? word : room.length)} …`;
}

/**
 * The text of a message the relay may have taken (UNCONFIRMED_WORDS) with what its connection
 * said, the latter shortened to fit so that the whole still reads to its closing bracket.
 */
export function unconfirmedText(kind: string, said: string): string {
  const frame = `${UNCONFIRMED_WORDS} (${kind}: )`;
  return `${UNCONFIRMED_WORDS} (${kind}: ${wholeSentences(said, ANSWER_MAX - frame.length)})`;
}

/** What to do with a message whose send failed. */
export interface SendFailure {
  /**
   * `retry`: SMTP 4xx or a connection problem; `bounce`: SMTP 5xx, the address is refused;
   * `unconfirmed`: the server went silent after the whole message was handed to it, so it may
   * have accepted it: never sent again.
   */
  outcome: 'retry' | 'bounce' | 'unconfirmed';
  code: number | null;
  message: string;
}

/**
 * Classifies a nodemailer error: 5xx replies bounce, 4xx replies and everything else retry,
 * but no answer at all (reset, closed, timed out) after the whole message went (sendTracked)
 * is unconfirmed. Any answer, even a refusal, says the server did not take it.
 */
export function classifySendError(err: unknown): SendFailure {
  const e = err as { responseCode?: unknown; response?: unknown; message?: unknown; code?: unknown };
  const code = typeof e?.responseCode === 'number' ? e.responseCode : null;
  // A server's answer is shown as it said it, without the library's code (`EMESSAGE:`); an
  // error without an answer (a refused connection) keeps its code, which is all it has.
  const answered = typeof e?.response === 'string' && e.response.trim() !== '';
  const text = answered ? smtpAnswer(String(e.response)) : wholeSentences(String(e?.message ?? err).replace(/\s+/g, ' ').trim());
  const message = !answered && e?.code && !text.includes(String(e.code)) ? `${String(e.code)}: ${text}` : text;
  if (wasHandedOver(err) && code === null && !['EENVELOPE', 'EMESSAGE', 'EAUTH', 'ESTREAM'].includes(String(e?.code))) {
    return { outcome: 'unconfirmed', code: null, message: unconfirmedText('smtp', message) };
  }
  return { outcome: code !== null && code >= 500 && code < 600 ? 'bounce' : 'retry', code, message };
}
