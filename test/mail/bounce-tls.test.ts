import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import nodemailer from 'nodemailer';
import { BounceListener, startBounceListener } from '../../src/workers/bounce-listener';
import { createBounceMailbox } from '../../src/workers/bounce-mailbox';
import { useHarness } from '../support/harness';
import { addContactType, header, sendingFixtures, testWorker } from '../support/fixtures';
import { bounceFixture } from '../support/bounce-fixtures';
import { useSmtpSink } from '../support/smtp';
import { Dovecot, startDovecot } from '../support/dovecot';

/** Delivers a message to the listener over STARTTLS (nodemailer refuses to go on without it). */
async function deliverOverTls(port: number, to: string, raw: string): Promise<void> {
  const transport = nodemailer.createTransport({ host: '127.0.0.1', port, secure: false, requireTLS: true, tls: { rejectUnauthorized: false } });
  try {
    await transport.sendMail({ envelope: { from: '', to: [to] }, raw });
  } finally {
    transport.close();
  }
}

describe('bounces over TLS', () => {
  const h = useHarness({ BOUNCE_DOMAIN: 'bounces.campaigns.test', BOUNCE_SMTP_PORT: '0' });
  const f = sendingFixtures(h);
  const relay = useSmtpSink();
  const [alice] = h.accounts(1);
  let dir: string;
  let tls: { cert: string; key: string };
  let listener: BounceListener;
  let dovecot: Dovecot;

  beforeAll(async () => {
    // A self-signed certificate made for this run, as a fresh Debian install has (snakeoil).
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bounce-tls-'));
    tls = { cert: path.join(dir, 'cert.pem'), key: path.join(dir, 'key.pem') };
    execFileSync('openssl', [
      'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1',
      '-subj', '/CN=bounces.campaigns.test', '-keyout', tls.key, '-out', tls.cert,
    ], { stdio: 'ignore' });
    fs.chmodSync(dir, 0o755);
    fs.chmodSync(tls.key, 0o644);
    listener = await startBounceListener({ config: { ...h.runtime.config, domains: { ...h.runtime.config.domains, bounceTls: tls } }, feedback: h.runtime.services.feedback, logger: h.runtime.logger });
    dovecot = await startDovecot({ tls });
  });
  afterAll(async () => {
    await listener?.close();
    await dovecot?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  /** One message sent through the relay; what the relay got. */
  async function sent(email: string) {
    const type = await addContactType(h, alice, `Type ${email}`);
    await f.contact(alice.user_id, type, email);
    const sendId = await f.singleSend(alice.user_id, { senderId: await f.sender(alice.user_id), groupId: await f.group(alice.user_id), to: [{ contactType: type }] });
    relay.messages.splice(0);
    const { worker, close } = testWorker(h, relay.url);
    await worker.runOnce().finally(close);
    const m = relay.messages.find((r) => r.to[0] === email)!;
    return { sendId, message: { verp: m.from, token: header(m.raw, 'X-Campaign-Message')!, recipient: email } };
  }

  const suppressed = async () => (await h.runtime.services.suppressions.list({ userId: alice.user_id })).rows.map((r) => `${r.email_address} ${r.reason}`).sort();

  test('when the listener has a certificate then a bounce arrives over STARTTLS and is recorded, and any other recipient is still refused', async () => {
    const { message } = await sent('tls-gone@example.org');
    await deliverOverTls(listener.port, message.verp, bounceFixture('postfix-user-unknown.eml', message));
    expect(await suppressed()).toContain('tls-gone@example.org hard_bounce');
    await expect(deliverOverTls(listener.port, 'postmaster@bounces.campaigns.test', 'Subject: hi\r\n\r\nhello\r\n')).rejects.toMatchObject({ responseCode: 550 });
  });

  test('when the bounce mailbox has a self-signed certificate then a poll fails unless BOUNCE_IMAP_TLS_VERIFY is false, and then reads it over TLS', async () => {
    const { message } = await sent('imap-gone@example.org');
    const client = new (await import('imapflow')).ImapFlow({ host: '127.0.0.1', port: dovecot.port, secure: false, auth: { user: dovecot.user, pass: dovecot.password }, logger: false, tls: { rejectUnauthorized: false } });
    await client.connect();
    await client.append('INBOX', bounceFixture('postfix-user-unknown.eml', message));
    await client.logout();

    const mailbox = (verify: boolean) => createBounceMailbox({
      config: { bounceImapUrl: dovecot.url, bounceImapPollMs: 60_000, bounceMaxBytes: 512 * 1024, domains: { bounceImapTlsVerify: verify } },
      feedback: h.runtime.services.feedback,
      logger: h.runtime.logger,
    });
    await expect(mailbox(true).pollOnce()).rejects.toMatchObject({ code: expect.stringMatching(/SELF_SIGNED|UNABLE_TO_VERIFY|CERT/) });
    expect(await suppressed()).not.toContain('imap-gone@example.org hard_bounce');
    expect(await mailbox(false).pollOnce()).toEqual({ recorded: 1, duplicate: 0, ignored: 0, unrecognised: 0, tooLarge: 0 });
    expect(await suppressed()).toContain('imap-gone@example.org hard_bounce');
  });
});
