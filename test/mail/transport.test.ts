import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createMailTransport } from '../../src/mail/transport';
import { useSmtpSink } from '../support/smtp';

describe('mail transport', () => {
  const sink = useSmtpSink();

  test('when SMTP_URL is set then the message arrives at the SMTP server', async () => {
    const transport = createMailTransport({ smtpUrl: sink.url, outboxDir: '', dkim: undefined });
    try {
      await transport.send({ from: 'news@example.com', to: 'jane@example.org', subject: 'Hello', html: '<p>Hi <b>Jane</b></p>' });
      const [message] = await sink.waitFor(1);
      expect(message.to).toEqual(['jane@example.org']);
      expect(message.parsed.subject).toBe('Hello');
      expect(message.parsed.html).toContain('<b>Jane</b>');
    } finally {
      transport.close();
    }
  });

  test('when SMTP_URL is unset then an .eml file is written to the outbox', async () => {
    const outboxDir = fs.mkdtempSync(path.join(os.tmpdir(), 'outbox-'));
    const transport = createMailTransport({ smtpUrl: undefined, outboxDir, dkim: undefined });
    const result = await transport.send({ from: 'news@example.com', to: 'joe@example.org', subject: 'Stored', html: '<p>x</p>' });
    const files = fs.readdirSync(outboxDir);
    expect(files).toHaveLength(1);
    expect(files[0]).toMatch(/\.eml$/);
    expect(result.response).toContain(files[0]);
    expect(fs.readFileSync(path.join(outboxDir, files[0]), 'utf8')).toMatch(/Subject: Stored/);
    fs.rmSync(outboxDir, { recursive: true });
  });
});
