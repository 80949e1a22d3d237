import fs from 'node:fs';
import type { Logger } from 'pino';
import { SMTPServer, SMTPServerAddress, SMTPServerDataStream, SMTPServerSession } from 'smtp-server';
import type { Config } from '../config';
import { verpToken } from '../lib/verp';
import { RETURN_PATH_LABEL } from '../lib/constants';
import type { FeedbackService } from '../services/delivery/feedback';
import { readReport } from '../mail/bounce-reader';

export interface BounceListener {
  readonly port: number;
  /** What the listener did since it started, one count per received message. */
  readonly counts: Record<'recorded' | 'duplicate' | 'ignored' | 'unrecognised' | 'failed', number>;
  close(): Promise<void>;
}

type Deps = {
  config: Pick<Config, 'bounceDomain' | 'bounceSmtpHost' | 'bounceSmtpPort' | 'bounceMaxBytes'> & { domains?: Pick<Config['domains'], 'bounceTls'> };
  feedback: FeedbackService;
  logger: Logger;
};

/** The certificate and key files of BOUNCE_TLS_CERT and BOUNCE_TLS_KEY, read at start (a missing file stops the start). */
function tlsOptions(files: { cert: string; key: string } | undefined) {
  if (!files) return { disabledCommands: ['AUTH', 'STARTTLS'] };
  return { disabledCommands: ['AUTH'], cert: fs.readFileSync(files.cert), key: fs.readFileSync(files.key) };
}

/** The host of an address when it is a sending domain's bounce subdomain (`bounces.example.com`). */
function returnPathHost(address: string): string | undefined {
  const host = address.slice(address.lastIndexOf('@') + 1).toLowerCase().replace(/\.$/, '');
  return host.startsWith(`${RETURN_PATH_LABEL}.`) ? host : undefined;
}

/** An answer to an SMTP command with its reply code (smtp-server sends `code message`). */
export function smtpError(code: number, message: string): Error {
  return Object.assign(new Error(message), { responseCode: code });
}

/**
 * The inbound SMTP server that bounces come back to (BOUNCE_SMTP_PORT). It accepts mail only
 * for VERP addresses whose signed token names a ledger message (anything else: 550 at RCPT,
 * so it is never an open relay), refuses messages over BOUNCE_MAX_KB (552), reads each with
 * readReport and records it through the ledger (services.feedback). A failure to record
 * answers 451, so the sending MTA tries again later instead of the report being lost.
 */
export async function startBounceListener(deps: Deps, port = deps.config.bounceSmtpPort ?? 0): Promise<BounceListener> {
  const { config, feedback, logger } = deps;
  const counts = { recorded: 0, duplicate: 0, ignored: 0, unrecognised: 0, failed: 0 };
  // BOUNCE_DOMAIN exactly, or the bounce subdomain of one of the sending domains of the account
  // whose message the token names (a CNAME of BOUNCE_DOMAIN: its mail arrives here through
  // BOUNCE_DOMAIN's MX); never a host that merely starts like one.
  const messageOf = async (address: string): Promise<number | undefined> => {
    const atBounceDomain = feedback.messageOfToken(verpToken(address, config.bounceDomain));
    if (atBounceDomain !== undefined) return atBounceDomain;
    const returnPath = returnPathHost(address);
    const id = returnPath ? feedback.messageOfToken(verpToken(address, returnPath)) : undefined;
    return id !== undefined && returnPath && (await feedback.isReturnPathOf(id, returnPath)) ? id : undefined;
  };

  const server = new SMTPServer({
    disableReverseLookup: true,
    authOptional: true,
    // STARTTLS with BOUNCE_TLS_CERT and BOUNCE_TLS_KEY, so the bounce domain can publish MTA-STS;
    // the recipient checks are the same either way.
    ...tlsOptions(config.domains?.bounceTls),
    size: config.bounceMaxBytes,
    maxClients: 50,
    logger: false,
    banner: 'bounce processing only',
    onRcptTo(address: SMTPServerAddress, session: SMTPServerSession, callback: (err?: Error | null) => void) {
      if (session.envelope.rcptTo.length >= 10) return callback(smtpError(452, '4.5.3 Too many recipients'));
      messageOf(address.address).then(
        (id) => callback(id === undefined ? smtpError(550, '5.1.1 No such mailbox here: this server only takes bounces') : null),
        (err) => {
          logger.error({ err }, 'checking a bounce address failed');
          callback(smtpError(451, '4.3.0 Could not check this address now, try again later'));
        },
      );
    },
    onData(stream: SMTPServerDataStream, session: SMTPServerSession, callback: (err?: Error | null, message?: string) => void) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        if (stream.sizeExceeded) {
          callback(smtpError(552, `5.3.4 Message too big for this server (at most ${config.bounceMaxBytes} bytes)`));
          return;
        }
        const raw = Buffer.concat(chunks);
        Promise.all(session.envelope.rcptTo.map((r) => messageOf(r.address)))
          .then((found) => handle(raw, found.filter((id): id is number => id !== undefined)))
          .then(
          () => callback(null, 'Report received'),
          (err) => {
            counts.failed += 1;
            logger.error({ err }, 'recording a returned message failed; the sender will retry');
            callback(smtpError(451, '4.3.0 Could not record the report now, try again later'));
          },
        );
      });
    },
  });
  server.on('error', (err) => logger.warn({ err: err.message }, 'bounce listener connection error'));

  async function handle(raw: Buffer, ids: number[]): Promise<void> {
    const reading = await readReport(raw);
    const named = feedback.messageOfReading(reading);
    for (const envelope of ids) {
      // A report may come to one message's address about another (a feedback loop's address
      // for a whole stream): it is charged to the message it is about, within the account.
      const id = await feedback.chargedMessage(envelope, named);
      const outcome = await feedback.recordReading(id, reading, 'dsn');
      counts[outcome] += 1;
      logger.info({ messageId: id, ...(id !== envelope ? { envelope } : {}), kind: reading.kind, outcome }, 'returned message read');
    }
  }

  await new Promise<void>((resolve, reject) => {
    server.server.once('error', reject);
    server.listen(port, config.bounceSmtpHost, () => resolve());
  });
  const address = server.server.address();
  return {
    port: typeof address === 'object' && address ? address.port : port,
    counts,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
