import fs from 'node:fs';
import path from 'node:path';
import nodemailer from 'nodemailer';
import type { Logger } from 'pino';
import type { Config } from '../config';

/** A message as the service hands it to the transport. */
export interface OutgoingMessage {
  from: string | { name: string; address: string };
  to: string;
  replyTo?: string;
  subject: string;
  html: string;
  text?: string;
  /** Extra headers, for example List-Unsubscribe. */
  headers?: Record<string, string>;
  messageId?: string;
  /** The account sending it: the outbox keeps each account's messages in its own folder. */
  accountId?: number;
}

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
 * The one way out for mail: SMTP through nodemailer when SMTP_URL is set, otherwise an
 * `.eml` file per message under the outbox folder (shown by the dashboard's Outbox page).
 */
export interface MailTransport {
  readonly kind: 'smtp' | 'outbox';
  send(message: OutgoingMessage): Promise<SendResult>;
  close(): void;
}

export function createMailTransport(config: Pick<Config, 'smtpUrl' | 'outboxDir' | 'dkim'>, logger?: Logger): MailTransport {
  const dkim = config.dkim
    ? { domainName: config.dkim.domain, keySelector: config.dkim.selector, privateKey: config.dkim.privateKey }
    : undefined;

  if (config.smtpUrl) {
    const transporter = nodemailer.createTransport({ url: config.smtpUrl, pool: true, maxConnections: 5, dkim } as never);
    return {
      kind: 'smtp',
      async send({ accountId: _accountId, ...message }) {
        const info = await transporter.sendMail(message);
        return { messageId: info.messageId, response: String(info.response ?? '') };
      },
      close: () => transporter.close(),
    };
  }

  const transporter = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'unix', dkim } as never);
  fs.mkdirSync(config.outboxDir, { recursive: true });
  return {
    kind: 'outbox',
    async send({ accountId, ...message }) {
      const info = (await transporter.sendMail(message)) as unknown as { messageId: string; message: Buffer };
      const stamp = new Date().toISOString().replace(/[:.]/g, '-');
      const safeId = info.messageId.replace(/[^\w.@-]/g, '');
      const folder = outboxFolder(config.outboxDir, accountId);
      await fs.promises.mkdir(folder, { recursive: true });
      const file = path.join(folder, `${stamp}_${safeId}.eml`);
      await fs.promises.writeFile(file, info.message);
      logger?.debug({ file }, 'message written to outbox');
      return { messageId: info.messageId, response: `outbox ${path.basename(file)}` };
    },
    close: () => transporter.close(),
  };
}
