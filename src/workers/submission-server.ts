import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Logger } from 'pino';
import type { SMTPServerAddress, SMTPServerAuthentication, SMTPServerAuthenticationResponse, SMTPServerDataStream, SMTPServerSession } from 'smtp-server';
import type { Config } from '../config';
import { MessageConflictError, ValidationError } from '../lib/errors';
import { selfSignedPair } from '../lib/self-signed';
import type { Ctx } from '../services/context';
import type { Submission } from '../services/transactional/submission';
import { SENDER_DOMAIN_UNAUTHENTICATED } from '../services/delivery/relays';
import { smtpError } from './bounce-listener';

export interface SubmissionServer {
  readonly port: number;
  /** SHA-256 fingerprint of the certificate offered with STARTTLS. */
  readonly fingerprint: string;
  close(): Promise<void>;
}

type Deps = {
  config: Pick<Config, 'dataDir'> & { submission: NonNullable<Config['submission']> };
  submission: Submission;
  logger: Logger;
};

/**
 * SUBMISSION_TLS_CERT and SUBMISSION_TLS_KEY, or a self-signed pair made once in the data folder
 * (kept, so clients that pinned its fingerprint keep trusting it).
 */
function tlsPair(config: Deps['config']): { cert: Buffer; key: Buffer } {
  const files = config.submission.tls ?? { cert: path.join(config.dataDir, 'submission-cert.pem'), key: path.join(config.dataDir, 'submission-key.pem') };
  if (!config.submission.tls && !fs.existsSync(files.cert)) {
    const pair = selfSignedPair('smtp-submission', 3650);
    fs.mkdirSync(config.dataDir, { recursive: true });
    fs.writeFileSync(files.key, pair.key, { mode: 0o600 });
    fs.writeFileSync(files.cert, pair.cert);
  }
  return { cert: fs.readFileSync(files.cert), key: fs.readFileSync(files.key) };
}

/**
 * The SMTP submission server for apps that speak only SMTP (SUBMISSION_PORT): STARTTLS, then
 * AUTH PLAIN or LOGIN with a key pair (never before TLS), then each recipient of a message
 * becomes one transactional message. Nothing is taken from anyone not signed in, so it never
 * relays; a From that is not a verified sender of the account is 550 5.7.1, a message over
 * SUBMISSION_MAX_BYTES 552, wrong credentials 535 5.7.8.
 */
export async function startSubmissionServer(deps: Deps, port = deps.config.submission.port): Promise<SubmissionServer> {
  const { submission, logger } = deps;
  const { SMTPServer } = await import('smtp-server');
  const tls = tlsPair(deps.config);
  const fingerprint = new crypto.X509Certificate(tls.cert).fingerprint256;
  const ctxOf = (session: SMTPServerSession) => (session.user as unknown as { ctx: Ctx } | undefined)?.ctx;

  const server = new SMTPServer({
    ...tls,
    disableReverseLookup: true,
    authMethods: ['PLAIN', 'LOGIN'],
    // AUTH only after STARTTLS (smtp-server answers 538 before it).
    allowInsecureAuth: false,
    size: deps.config.submission.maxBytes,
    maxClients: 100,
    logger: false,
    banner: 'transactional mail submission',
    onAuth(auth: SMTPServerAuthentication, session: SMTPServerSession, callback: (err: Error | null | undefined, response?: SMTPServerAuthenticationResponse) => void) {
      submission.signIn(auth.username ?? '', auth.password ?? '', session.remoteAddress).then(
        (result) => {
          if ('ctx' in result) return callback(null, { user: { ctx: result.ctx } });
          if (result.refused === 'too_many') return callback(smtpError(454, '4.7.0 Too many failed sign-ins from your address: try again in a minute'));
          if (result.refused === 'role') return callback(smtpError(535, '5.7.8 This key may not send mail'));
          callback(smtpError(535, '5.7.8 Authentication credentials invalid'));
        },
        (err) => {
          logger.error({ err }, 'checking a submission sign-in failed');
          callback(smtpError(454, '4.7.0 Temporary authentication failure'));
        },
      );
    },
    onMailFrom(_address: SMTPServerAddress, session: SMTPServerSession, callback: (err?: Error | null) => void) {
      callback(ctxOf(session) ? null : smtpError(530, '5.7.0 Authentication required'));
    },
    onRcptTo(_address: SMTPServerAddress, session: SMTPServerSession, callback: (err?: Error | null) => void) {
      if (!ctxOf(session)) return callback(smtpError(530, '5.7.0 Authentication required'));
      if (session.envelope.rcptTo.length >= 50) return callback(smtpError(452, '4.5.3 Too many recipients: at most 50 a message'));
      callback();
    },
    onData(stream: SMTPServerDataStream, session: SMTPServerSession, callback: (err?: Error | null, message?: string) => void) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        if (stream.sizeExceeded) return callback(smtpError(552, `5.3.4 Message too big: at most ${deps.config.submission.maxBytes} bytes`));
        const ctx = ctxOf(session);
        if (!ctx) return callback(smtpError(530, '5.7.0 Authentication required'));
        const recipients = session.envelope.rcptTo.map((r) => r.address);
        submission.submit(ctx, Buffer.concat(chunks), recipients).then(
          (accepted) => callback(null, `2.0.0 Queued as ${accepted.map((m) => `${m.id} ${m.status}`).join(', ')}`),
          (err) => {
            if (err instanceof ValidationError) {
              const from = err.fields.from ?? err.fields.sender_id;
              if (from?.[0] === SENDER_DOMAIN_UNAUTHENTICATED) return callback(smtpError(550, "5.7.1 The sender's domain is not authenticated"));
              if (from) return callback(smtpError(550, '5.7.1 The From address is not a verified sender of this account'));
              const [field, messages] = Object.entries(err.fields)[0] ?? ['message', ['is invalid']];
              return callback(smtpError(550, `5.6.0 ${field}: ${messages[0]}`));
            }
            if (err instanceof MessageConflictError) return callback(smtpError(451, `4.5.0 ${err.message}`));
            logger.error({ err }, 'a submitted message could not be queued');
            callback(smtpError(451, '4.3.0 Could not queue the message now, try again later'));
          },
        );
      });
    },
  });
  server.on('error', (err: Error) => logger.error({ err }, 'submission server error'));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, deps.config.submission.host, () => resolve());
  });
  const address = server.server.address();
  return {
    port: typeof address === 'object' && address ? address.port : port,
    fingerprint,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
