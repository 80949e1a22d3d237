import { compileMessage, renderEncoded, renderMessage } from '../../src/mail/render';
import { createMailTransport } from '../../src/mail/transport';
import { header } from '../support/fixtures';
import { useSmtpSink } from '../support/smtp';

/**
 * The worker sends campaign mail pre-encoded (the template's literal parts quoted-printable
 * encoded once per send, as `raw`); a reader must get exactly the message nodemailer's own
 * composer makes of the same HTML and text.
 */
describe('pre-encoded campaign messages', () => {
  const sink = useSmtpSink();

  const template = [
    '<html><body><p>Grüße, ((first_name))!</p>',
    '.a line that starts with a dot',
    `<p>${'A long line without any break '.repeat(12)}</p>`,
    '<p>trailing spaces   ',
    'an = sign, a tab\tand ((last_name))</p>',
    '<p><a href="https://shop.example/a?b=c&amp;d=e">Shop ((first_name))</a> ((unsubscribe_preferences))</p>',
    '</body></html>',
  ].join('\n');
  const compiled = compileMessage({ subject: 'Grüße ((first_name)) – news', preheader: 'For ((first_name))', html: template }, { trackOpens: true, trackClicks: true });
  const input = {
    values: { first_name: 'Zoë =?utf-8?q?x?=', last_name: "O'Brien <b>" },
    unsubscribeUrl: 'https://campaigns.example/unsubscribe/tok',
    pixelUrl: 'https://campaigns.example/open/tok.gif',
    clickUrl: 'https://campaigns.example/c/tok',
  };

  test('when a message goes out pre-encoded then it reads exactly like the one nodemailer composes', async () => {
    const transport = createMailTransport({ smtpUrl: sink.url, outboxDir: '', dkim: undefined });
    const common = {
      from: { name: 'Äcme News', address: 'news@acme.example' },
      replyTo: 'reply@acme.example',
      headers: { 'List-Unsubscribe': '<https://campaigns.example/unsubscribe/tok>', 'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click' },
    };
    try {
      const plain = renderMessage(compiled, input);
      const encoded = renderEncoded(compiled, input);
      expect(encoded.subject).toBe(plain.subject);
      await transport.send({ ...common, to: 'composed@example.org', subject: plain.subject, html: plain.html, text: plain.text, messageId: '<composed@acme.example>' });
      await transport.send({ ...common, to: 'raw@example.org', subject: encoded.subject, html: encoded.html, text: encoded.text, encoded: true, messageId: '<raw@acme.example>' });
      const [composed, raw] = await sink.waitFor(2);
      expect(raw.to).toEqual(['raw@example.org']);
      expect(raw.from).toBe('news@acme.example');
      for (const key of ['subject', 'html', 'text'] as const) expect(raw.parsed[key]).toBe(composed.parsed[key]);
      expect(raw.parsed.html).toContain('Grüße, Zoë =?utf-8?q?x?=!');
      expect(raw.parsed.html).toContain('O&#39;Brien &lt;b&gt;');
      expect(raw.parsed.html).toContain('href="https://campaigns.example/c/tok/1"');
      expect(raw.parsed.from?.value).toEqual(composed.parsed.from?.value);
      expect(raw.parsed.replyTo?.value).toEqual(composed.parsed.replyTo?.value);
      expect(raw.parsed.messageId).toBe('<raw@acme.example>');
      for (const name of ['List-Unsubscribe', 'List-Unsubscribe-Post']) expect(header(raw.raw, name)).toBe(header(composed.raw, name));
      expect(header(raw.raw, 'List-Unsubscribe-Post')).toBe('List-Unsubscribe=One-Click');
      expect(raw.parsed.date).toBeInstanceOf(Date);
      // RFC 5322 and RFC 2045: no line over 78 (quoted-printable: 76) characters, CRLF only.
      for (const line of raw.raw.split('\r\n')) expect(line.length).toBeLessThanOrEqual(78);
      expect(raw.raw).not.toMatch(/[^\r]\n/);
    } finally {
      transport.close();
    }
  });
});
