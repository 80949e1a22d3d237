import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ConfigError, loadConfig } from '../../src/config';
import { classifySendError, createMailTransport } from '../../src/mail/transport';
import { selfSignedCertificate, startTlsSmtpServer } from '../support/tls-smtp';

describe('SMTP_TLS and SMTP_TLS_VERIFY against a server with a self-signed certificate', () => {
  let dir: string;
  let starttls: Awaited<ReturnType<typeof startTlsSmtpServer>>;
  let implicit: Awaited<ReturnType<typeof startTlsSmtpServer>>;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'smtp-tls-'));
    const cert = selfSignedCertificate(dir, 'mail.local.test');
    starttls = await startTlsSmtpServer(cert);
    implicit = await startTlsSmtpServer(cert, { secure: true });
  });
  afterAll(async () => {
    await Promise.all([starttls?.close(), implicit?.close()]);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  async function send(env: Record<string, string>, to: string) {
    const config = loadConfig({ ...env, DATA_DIR: dir });
    const transport = createMailTransport(config);
    try {
      await transport.send({ from: 'news@acme.test', to, subject: 'TLS', html: '<p>x</p>' });
      return 'sent';
    } catch (err) {
      return classifySendError(err);
    } finally {
      transport.close();
    }
  }

  test('when the defaults meet STARTTLS with a self-signed certificate then the message is refused for the certificate and retried later', async () => {
    const outcome = await send({ SMTP_URL: starttls.url }, 'default@example.org');
    expect(outcome).toMatchObject({ outcome: 'retry', code: null, message: expect.stringMatching(/self[- ]signed certificate/i) });
    expect(starttls.received.filter((r) => r.to === 'default@example.org')).toEqual([]);
  });

  test('when SMTP_TLS_VERIFY is false then the message goes out over STARTTLS', async () => {
    expect(await send({ SMTP_URL: starttls.url, SMTP_TLS_VERIFY: 'false' }, 'unverified@example.org')).toBe('sent');
    expect(starttls.received.filter((r) => r.to === 'unverified@example.org')).toEqual([{ to: 'unverified@example.org', secure: true }]);
  });

  test('when SMTP_TLS is none then the message goes out in plain text without STARTTLS', async () => {
    expect(await send({ SMTP_URL: starttls.url, SMTP_TLS: 'none' }, 'plain@example.org')).toBe('sent');
    expect(starttls.received.filter((r) => r.to === 'plain@example.org')).toEqual([{ to: 'plain@example.org', secure: false }]);
  });

  test('when SMTP_TLS is tls then the connection is TLS from the start, verified unless SMTP_TLS_VERIFY is false', async () => {
    expect(await send({ SMTP_URL: implicit.url, SMTP_TLS: 'tls' }, 'refused@example.org')).toMatchObject({ outcome: 'retry', code: null });
    expect(await send({ SMTP_URL: implicit.url, SMTP_TLS: 'tls', SMTP_TLS_VERIFY: '0' }, 'implicit@example.org')).toBe('sent');
    const smtps = implicit.url.replace('smtp://', 'smtps://');
    expect(await send({ SMTP_URL: smtps, SMTP_TLS_VERIFY: 'false' }, 'smtps@example.org')).toBe('sent');
    expect(implicit.received).toEqual([{ to: 'implicit@example.org', secure: true }, { to: 'smtps@example.org', secure: true }]);
  });

  test('when SMTP_TLS or SMTP_TLS_VERIFY has a wrong value then the configuration is refused with one line', () => {
    const refused = (env: Record<string, string>) => {
      try {
        loadConfig(env);
        return undefined;
      } catch (err) {
        return err instanceof ConfigError ? err.message : err;
      }
    };
    expect(refused({ SMTP_TLS: 'ssl' })).toBe('SMTP_TLS must be one of starttls, tls, none, got "ssl"');
    expect(refused({ SMTP_TLS_VERIFY: 'maybe' })).toBe('SMTP_TLS_VERIFY must be true or false, got "maybe"');
    expect(refused({ SMTP_URL: 'smtps://mail.test', SMTP_TLS: 'none' })).toBe('SMTP_URL smtps:// means TLS from the start; use smtp:// with SMTP_TLS=none');
    expect(loadConfig({})).toMatchObject({ smtpTls: 'starttls', smtpTlsVerify: true });
    expect(loadConfig({ SMTP_URL: 'smtps://mail.test' })).toMatchObject({ smtpTls: 'tls', smtpTlsVerify: true });
  });
});
