import { createMailTransport } from '../../src/mail/transport';
import { createOutboxService } from '../../src/services/delivery/outbox';
import { useHarness } from '../support/harness';
import { asFragment, signIn, useTwoAccounts } from '../support/web';

describe('dashboard outbox', () => {
  const h = useHarness();
  const t = useTwoAccounts(h);
  let name: string;

  beforeAll(async () => {
    const transport = createMailTransport(h.runtime.config);
    const sent = await transport.send({
      accountId: t.alice.user_id,
      from: { name: 'Shop <Team>', address: 'team@example.com' },
      to: 'jane@example.org',
      subject: 'Please verify <your> address',
      html: '<p>Hello</p><script>alert(1)</script><a href="http://campaigns.test/verify-sender/abc?x=1&amp;y=2">Verify</a>',
      text: 'Verify at http://campaigns.test/verify-sender/abc?x=1&y=2',
    });
    name = sent.response.replace(/^outbox /, '');
    transport.close();
  });

  test('when the account has sent a message then the outbox lists it, escaped', async () => {
    const res = await t.web.get('/outbox').expect(200);
    expect(res.text).toContain(`<a href="/outbox/${encodeURIComponent(name)}">Please verify &lt;your&gt; address</a>`);
    expect(res.text).toContain('<td>jane@example.org</td>');
    expect(res.text).toContain('1–1 of 1');
  });

  test('when a message is opened then its links are listed and its HTML is framed under a sandbox CSP', async () => {
    const page = await t.web.get(`/outbox/${encodeURIComponent(name)}`).expect(200);
    expect(page.text).toContain('<a href="http://campaigns.test/verify-sender/abc?x=1&amp;y=2" target="_blank" rel="noopener noreferrer">');
    expect(page.text).toContain(`<iframe class="message-frame" title="The message as a mail program shows it" sandbox src="/outbox/${encodeURIComponent(name)}/html"></iframe>`);
    expect(page.text).not.toContain('<script>alert(1)</script>');

    const html = await t.web.get(`/outbox/${encodeURIComponent(name)}/html`).expect(200);
    expect(html.headers['content-security-policy']).toBe(
      "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; font-src 'self'; sandbox; frame-ancestors 'self'",
    );
    expect(html.text).toContain('<p>Hello</p>');
  });

  test('when a tracked message is looked at in the outbox then its open pixel is blank and no open is counted', async () => {
    const transport = createMailTransport(h.runtime.config);
    const pixel = 'http://campaigns.test/open/1.abcdefghijklmnopqrstuv.gif';
    const sent = await transport.send({
      accountId: t.alice.user_id,
      from: { name: 'Shop', address: 'team@example.com' },
      to: 'joe@example.org',
      subject: 'Tracked',
      html: `<p>Hi</p><img src="${pixel}" width="1" height="1" alt="">`,
      text: 'Hi',
    });
    transport.close();
    const tracked = sent.response.replace(/^outbox /, '');
    const html = await t.web.get(`/outbox/${encodeURIComponent(tracked)}/html`).expect(200);
    expect(html.text).toContain('<img src="data:image/gif;base64,');
    expect(html.text).not.toContain('/open/');
  });

  test('when a message has a namespace and text links in brackets then only the links a reader can follow are listed', async () => {
    const transport = createMailTransport(h.runtime.config);
    const sent = await transport.send({
      accountId: t.alice.user_id,
      from: { name: 'Shop', address: 'team@example.com' },
      to: 'links@example.org',
      subject: 'Newsletter with links',
      html: '<!DOCTYPE html><html xmlns="http://www.w3.org/1999/xhtml"><body><a class="btn" href="https://shop.example/sale?a=1&amp;b=2">Sale</a> <a href="mailto:x@example.org">Mail</a></body></html>',
      text: 'Sale [https://shop.example/sale?a=1&b=2]',
    });
    transport.close();
    const page = await t.web.get(`/outbox/${encodeURIComponent(sent.response.replace(/^outbox /, ''))}`).expect(200);
    const listed = [...page.text.matchAll(/<a href="([^"]+)" target="_blank" rel="noopener noreferrer">/g)].map((m) => m[1]);
    expect(listed).toEqual(['https://shop.example/sale?a=1&amp;b=2']);
  });

  test('when the outbox is searched by address or subject then only matching messages are listed, and the list alone is swapped', async () => {
    const bySubject = await t.web.get('/outbox?search=VERIFY').expect(200);
    expect(bySubject.text).toContain('Please verify &lt;your&gt; address');
    expect(bySubject.text).not.toContain('<td>joe@example.org</td>');
    const byAddress = await t.web.get('/outbox?search=joe@example').expect(200);
    expect(byAddress.text).toContain('<td>joe@example.org</td>');
    expect(byAddress.text).not.toContain('Please verify');
    const none = await asFragment(t.web.get('/outbox?search=nobody'), 'outbox-list').expect(200);
    expect(none.text.trimStart()).toMatch(/^<div id="outbox-list">/);
    expect(none.text).toContain('No message matches “nobody”.');
  });

  test('when another account or a crafted name asks for a message then it is not found', async () => {
    const other = await signIn(h, t.bob);
    const list = await other.get('/outbox').expect(200);
    expect(list.text).not.toContain('Please verify');
    await other.get(`/outbox/${encodeURIComponent(name)}`).expect(404);
    await other.get(`/outbox/${encodeURIComponent(name)}/html`).expect(404);
    await t.web.get(`/outbox/${encodeURIComponent(`../account-${t.bob.user_id}/${name}`)}`).expect(404);
    await t.web.get('/outbox/missing.eml').expect(404);
  });

  test('when mail goes through SMTP then the outbox says nothing is kept', async () => {
    const outbox = createOutboxService({ config: { ...h.runtime.config, smtpUrl: 'smtp://127.0.0.1:2525' } });
    expect(outbox.enabled).toBe(false);
  });
});
