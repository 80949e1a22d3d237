import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Config, ConfigError, FILE_SETTINGS, loadConfig } from '../../src/config';

/** Secrets mounted as files (Docker and Kubernetes secrets): `<NAME>_FILE` instead of `<NAME>`. */
describe('settings read from files', () => {
  let dir: string;
  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'setting-files-'));
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  function secretFile(name: string, content: string): string {
    const file = path.join(dir, name);
    fs.writeFileSync(file, content, { mode: 0o600 });
    return file;
  }

  /** Each secret setting with a valid value, the variables it must come with, and where the config shows it. */
  const cases: Record<(typeof FILE_SETTINGS)[number], { value: string; with?: NodeJS.ProcessEnv; read: (c: Config) => unknown }> = {
    DATABASE_URL: { value: 'postgres://app:s3cret@db:5432/campaigns', read: (c) => c.databaseUrl },
    SMTP_URL: { value: 'smtp://mailer:s3cret@smtp.example.com:587', read: (c) => c.smtpUrl },
    DKIM_PRIVATE_KEY: { value: '-----BEGIN PRIVATE KEY-----\nMIIB\n-----END PRIVATE KEY-----', with: { DKIM_DOMAIN: 'example.com', DKIM_SELECTOR: 's1' }, read: (c) => c.dkim?.privateKey },
    BOUNCE_IMAP_URL: { value: 'imaps://bounces:s3cret@imap.example.com/INBOX', read: (c) => c.bounceImapUrl },
    METRICS_TOKEN: { value: 'metrics-token', read: (c) => c.metricsToken },
    SENDGRID_WEBHOOK_PUBLIC_KEY: { value: 'MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE', read: (c) => c.webhooks.sendgridPublicKey },
    POSTMARK_WEBHOOK_AUTH: { value: 'postmark:s3cret', read: (c) => c.webhooks.postmarkAuth },
    MAILGUN_WEBHOOK_SIGNING_KEY: { value: 'key-mailgun', read: (c) => c.webhooks.mailgunSigningKey },
    OIDC_CLIENT_SECRET: { value: 'oidc-s3cret', with: { OIDC_ISSUER: 'https://id.example.com', OIDC_CLIENT_ID: 'campaigns' }, read: (c) => c.oidc?.clientSecret },
    ADMIN_PASSWORD: { value: 'a long admin password', with: { ADMIN_EMAIL: 'owner@example.com' }, read: (c) => c.admin?.password },
  };

  test.each(Object.entries(cases))('when %s_FILE names a file then the setting is the file\'s content without its last line break', (name, c) => {
    const file = secretFile(name, `${c.value}\n`);
    expect(c.read(loadConfig({ ...c.with, [`${name}_FILE`]: file }))).toBe(c.value);
    // The same as given directly.
    expect(c.read(loadConfig({ ...c.with, [name]: c.value }))).toBe(c.value);
  });

  test('when a file holds a bad value then the start fails with the setting\'s own message', () => {
    const file = secretFile('bad-database-url', 'mysql://db/campaigns\n');
    expect(() => loadConfig({ DATABASE_URL_FILE: file })).toThrow('DATABASE_URL must start with postgres:// (unset it to use SQLite)');
  });

  test('when both NAME and NAME_FILE are set then the start fails naming both', () => {
    const file = secretFile('smtp-url', 'smtp://a@b:25\n');
    expect(() => loadConfig({ SMTP_URL: 'smtp://c@d:25', SMTP_URL_FILE: file })).toThrow(new ConfigError('SMTP_URL and SMTP_URL_FILE are both set; keep one'));
  });

  test('when NAME_FILE names a file that cannot be read then the start fails naming the variable and the file', () => {
    const missing = path.join(dir, 'no-such-file');
    expect(() => loadConfig({ OIDC_CLIENT_SECRET_FILE: missing })).toThrow(new ConfigError(`OIDC_CLIENT_SECRET_FILE names a file that cannot be read: ${missing} (ENOENT)`));
    expect(() => loadConfig({ METRICS_TOKEN_FILE: dir })).toThrow(`METRICS_TOKEN_FILE names a file that cannot be read: ${dir} (EISDIR)`);
  });

  test('when NAME_FILE is empty then the setting stays unset', () => {
    expect(loadConfig({ SMTP_URL_FILE: '' }).smtpUrl).toBeUndefined();
    expect(loadConfig({ SMTP_URL_FILE: secretFile('empty', '\n') }).smtpUrl).toBeUndefined();
  });
});

describe('the first account from ADMIN_EMAIL and ADMIN_PASSWORD', () => {
  test('when neither is set then there is no admin (the demo account is made)', () => {
    expect(loadConfig({}).admin).toBeUndefined();
  });

  test('when both are set then they are the first account\'s email and password', () => {
    expect(loadConfig({ ADMIN_EMAIL: ' owner@example.com ', ADMIN_PASSWORD: 'a long admin password' }).admin).toEqual({ email: 'owner@example.com', password: 'a long admin password' });
  });

  test('when one is missing, the email is no address or the password is short then the start fails with a clear message', () => {
    expect(() => loadConfig({ ADMIN_EMAIL: 'owner@example.com' })).toThrow(new ConfigError('ADMIN_EMAIL and ADMIN_PASSWORD are set together'));
    expect(() => loadConfig({ ADMIN_PASSWORD: 'a long admin password' })).toThrow(new ConfigError('ADMIN_EMAIL and ADMIN_PASSWORD are set together'));
    expect(() => loadConfig({ ADMIN_EMAIL: 'owner', ADMIN_PASSWORD: 'a long admin password' })).toThrow(new ConfigError('ADMIN_EMAIL must be an email address, got "owner"'));
    expect(() => loadConfig({ ADMIN_EMAIL: 'owner@example.com', ADMIN_PASSWORD: 'short' })).toThrow(new ConfigError('ADMIN_PASSWORD must be at least 10 characters'));
  });
});
