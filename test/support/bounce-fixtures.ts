import fs from 'node:fs';
import path from 'node:path';
import nodemailer from 'nodemailer';

const DIR = path.join(__dirname, '..', 'fixtures', 'bounces');

/**
 * A returned-mail fixture (test/fixtures/bounces/, each in its MTA's own format) addressed to
 * one sent message: `{{VERP}}` its envelope sender, `{{TOKEN}}` its X-Campaign-Message,
 * `{{RCPT}}` the recipient, `{{MESSAGE_ID}}` its Message-ID. Lines end in CRLF, as on the wire.
 */
export function bounceFixture(name: string, values: { verp: string; token: string; recipient: string; messageId?: string }): string {
  return fs
    .readFileSync(path.join(DIR, name), 'utf8')
    .replace(/\{\{VERP\}\}/g, values.verp)
    .replace(/\{\{TOKEN\}\}/g, values.token)
    .replace(/\{\{RCPT\}\}/g, values.recipient)
    .replace(/\{\{MESSAGE_ID\}\}/g, values.messageId ?? '<20261123091539.unknown@acme.test>')
    .replace(/\r?\n/g, '\r\n');
}

/** Delivers a raw message with the null sender (`MAIL FROM:<>`), as an MTA returns a bounce. */
export async function deliverRaw(port: number, to: string, raw: string): Promise<void> {
  const transport = nodemailer.createTransport({ host: '127.0.0.1', port, secure: false, ignoreTLS: true, disableFileAccess: true, disableUrlAccess: true });
  try {
    await transport.sendMail({ envelope: { from: '', to: [to] }, raw });
  } finally {
    transport.close();
  }
}
