import { compileMessage, renderEncoded, renderMessage, renumberLinks } from '../../src/mail/render';
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

  test('when a message uses Liquid then the pre-encoded one still reads like the composed one and its links keep their stored numbers', async () => {
    const liquid = compileMessage(
      {
        subject: '{% if first_name %}Grüße {{ first_name }}{% else %}Hallo{% endif %}',
        preheader: 'For {{ first_name | default: "you" }}',
        html: `<html><body><p>{{ last_name }}</p><p><a href="https://shop.example/b">B</a>{% if first_name %} <a href="https://shop.example/a">A</a>{% endif %}</p>${'<p>A long line without any break</p>'.repeat(8)}((unsubscribe_preferences))</body></html>`,
      },
      { trackOpens: true, trackClicks: true },
    );
    // Stored as an automation step edited while running: b is link 7, a is link 5.
    const renumbered = renumberLinks(liquid, [7, 5]);
    const transport = createMailTransport({ smtpUrl: sink.url, outboxDir: '', dkim: undefined });
    try {
      const plain = renderMessage(renumbered, input);
      const encoded = renderEncoded(renumbered, input);
      expect(encoded.subject).toBe('Grüße Zoë =?utf-8?q?x?=');
      sink.messages.length = 0;
      await transport.send({ from: 'news@acme.example', to: 'composed@example.org', subject: plain.subject, html: plain.html, text: plain.text });
      await transport.send({ from: 'news@acme.example', to: 'raw@example.org', subject: encoded.subject, html: encoded.html, text: encoded.text, encoded: true });
      const [composed, raw] = await sink.waitFor(2);
      for (const key of ['subject', 'html', 'text'] as const) expect(raw.parsed[key]).toBe(composed.parsed[key]);
      expect(raw.parsed.html).toContain('<p>O&#39;Brien &lt;b&gt;</p>');
      expect(raw.parsed.html).toContain('<a href="https://campaigns.example/c/tok/7">B</a> <a href="https://campaigns.example/c/tok/5">A</a>');
      expect(raw.parsed.html).toContain('For Zoë =?utf-8?q?x?=');
      // The text part shows the links as written and the preference page's address.
      expect(raw.parsed.text).toContain("O'Brien <b>");
      expect(raw.parsed.text).toContain('B [https://shop.example/b] A [https://shop.example/a]');
      expect(raw.parsed.text).toContain('https://campaigns.example/unsubscribe/tok');
      for (const line of raw.raw.split('\r\n')) expect(line.length).toBeLessThanOrEqual(78);
    } finally {
      transport.close();
    }
  });
});
