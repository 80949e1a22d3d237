import { sendTracked, trackHandOver } from '../hand-over';
import { classifySendError, createTransport, mailOptions, onFirstUse, smtpTlsOptions } from '../transport';
import { dkimOption, isPolicyRefusal, RelayContext, RelayFailure, RelayTransport } from './shared';

/** A relay that is an SMTP server: a nodemailer pool, DKIM-signed like the instance's own mail. */
export function smtpTransport({ settings, options, checkOnce, checkNow }: RelayContext): RelayTransport {
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
      await checkNow();
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

/** Classifies an SMTP relay's (or the instance's SMTP server's) error. */
export function classifySmtpError(err: unknown): RelayFailure {
  const e = (err ?? {}) as { code?: unknown };
  const f = classifySendError(err);
  if (f.outcome === 'unconfirmed') return { relayDown: true, outcome: 'unconfirmed', code: null, message: f.message };
  if (f.code !== null && isPolicyRefusal(f.message)) return { relayDown: false, outcome: 'policy', code: f.code, message: f.message };
  // No reply at all (refused, reset, timed out), a 421 (the server is going away) or a refused login: the relay, not the message.
  const down = f.code === 421 || e.code === 'EAUTH' || (f.code === null && e.code !== 'EENVELOPE' && e.code !== 'EMESSAGE');
  return { relayDown: down, outcome: f.outcome, code: f.code, message: f.message };
}
