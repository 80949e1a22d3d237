import { ImapFlow } from 'imapflow';
import type { Logger } from 'pino';
import type { Config } from '../config';
import type { FeedbackService } from '../services/delivery/feedback';
import { readReport } from '../mail/bounce-reader';
import { periodic } from './periodic';

export interface MailboxCounts {
  recorded: number;
  duplicate: number;
  ignored: number;
  /** Left in the mailbox, marked read, for a person: no report of a message of this service. */
  unrecognised: number;
  /** Over BOUNCE_MAX_KB: left, marked read. */
  tooLarge: number;
}

export interface BounceMailbox {
  /** Reads every unread message once: reports are recorded and deleted, the rest marked read. */
  pollOnce(): Promise<MailboxCounts>;
  start(): void;
  stop(): Promise<void>;
}

type Deps = {
  config: Pick<Config, 'bounceImapUrl' | 'bounceImapPollMs' | 'bounceMaxBytes'> & { domains?: Pick<Config['domains'], 'bounceImapTlsVerify'> };
  feedback: FeedbackService;
  logger: Logger;
};

/** `imaps://user:pass@host[:port]/Folder` → imapflow options and the folder (INBOX by default). */
export function imapTarget(url: string, tlsVerify = true): { options: ConstructorParameters<typeof ImapFlow>[0]; folder: string } {
  const u = new URL(url);
  const secure = u.protocol === 'imaps:';
  return {
    options: {
      host: u.hostname,
      port: u.port ? Number(u.port) : secure ? 993 : 143,
      secure,
      auth: { user: decodeURIComponent(u.username), pass: decodeURIComponent(u.password) },
      logger: false,
      disableAutoIdle: true,
      // BOUNCE_IMAP_TLS_VERIFY=false takes a certificate that does not verify (dovecot's
      // self-signed Debian default); the connection is still encrypted.
      tls: { rejectUnauthorized: tlsVerify },
    },
    folder: decodeURIComponent(u.pathname.replace(/^\/+/, '')) || 'INBOX',
  };
}

/**
 * Why a poll failed, in words an operator can act on: imapflow's own message is often only
 * "Command failed", with the server's answer and the kind of failure in other fields.
 */
function mailboxFailure(err: unknown): string {
  const e = (err ?? {}) as { message?: string; code?: string; authenticationFailed?: boolean; responseText?: string; address?: string; port?: number };
  const said = e.responseText ? ` (the server said: ${e.responseText})` : '';
  if (e.authenticationFailed) return `the mail server refused the user name or password in BOUNCE_IMAP_URL${said}`;
  if (e.code && /^(ECONNREFUSED|ENOTFOUND|EAI_AGAIN|ETIMEDOUT|ECONNRESET|EHOSTUNREACH)$/.test(e.code)) {
    return `could not reach the mail server${e.address ? ` at ${e.address}${e.port ? `:${e.port}` : ''}` : ''} (${e.code})`;
  }
  return `${e.message ?? String(err)}${said}`;
}

/**
 * The bounce mailbox (BOUNCE_IMAP_URL) for senders whose bounces land in an existing mailbox:
 * polled with imapflow; each unread message is read by the same reader as the SMTP listener and
 * matched through the X-Campaign-Message (or VERP) token it shows. Reports are recorded and
 * then deleted; anything else is marked read and left for a person. A failure to record leaves
 * the message unread, so the next poll tries again.
 */
export function createBounceMailbox({ config, feedback, logger }: Deps): BounceMailbox {
  if (!config.bounceImapUrl) throw new Error('BOUNCE_IMAP_URL is not set');
  const { options, folder } = imapTarget(config.bounceImapUrl, config.domains?.bounceImapTlsVerify ?? true);

  async function pollOnce(): Promise<MailboxCounts> {
    const counts: MailboxCounts = { recorded: 0, duplicate: 0, ignored: 0, unrecognised: 0, tooLarge: 0 };
    const client = new ImapFlow(options);
    client.on('error', (err: Error) => logger.warn({ err: err.message }, 'bounce mailbox connection error'));
    await client.connect();
    try {
      const lock = await client.getMailboxLock(folder);
      try {
        const uids = (await client.search({ seen: false }, { uid: true })) || [];
        for (const uid of uids) {
          const head = await client.fetchOne(String(uid), { size: true }, { uid: true });
          if (!head) continue;
          if ((head.size ?? 0) > config.bounceMaxBytes) {
            counts.tooLarge += 1;
            await client.messageFlagsAdd(String(uid), ['\\Seen'], { uid: true });
            continue;
          }
          const message = await client.fetchOne(String(uid), { source: true }, { uid: true });
          if (!message || !message.source) continue;
          const reading = await readReport(message.source);
          const id = feedback.messageOfReading(reading);
          const outcome = id === undefined ? 'unrecognised' : await feedback.recordReading(id, reading, 'imap');
          counts[outcome] += 1;
          if (outcome === 'unrecognised') await client.messageFlagsAdd(String(uid), ['\\Seen'], { uid: true });
          else await client.messageDelete(String(uid), { uid: true });
        }
      } finally {
        lock.release();
      }
    } finally {
      await client.logout().catch(() => client.close());
    }
    if (Object.values(counts).some((n) => n > 0)) logger.info({ ...counts }, 'bounce mailbox read');
    return counts;
  }

  return {
    pollOnce,
    ...periodic(pollOnce, config.bounceImapPollMs, (err) =>
      logger.error({ reason: mailboxFailure(err) }, 'reading the bounce mailbox failed; trying again at the next poll'),
    ),
  };
}
