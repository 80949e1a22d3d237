import fs from 'node:fs';
import path from 'node:path';
import { createMailTransport, outboxFolder } from '../../src/mail/transport';
import { createWorkerRuntime } from '../../src/workers/worker-runtime';
import { addContact, addVerifiedSender, berlin, countryId } from '../support/fixtures';
import { eventually } from '../e2e/browser';
import { createOutboxService } from '../../src/services/delivery/reports';
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

  test('when a campaign message with click tracking is looked at then its links go straight to their targets and no click is counted', async () => {
    const ctx = { userId: t.alice.user_id };
    const { services } = h.runtime;
    const sender = await addVerifiedSender(h, t.alice, await berlin(h), { nickname: 'Shop', from_email: 'shop@acme.example' });
    const group = await services.unsubscribeGroups.add(ctx, { group_name: 'Offers', description: 'Offers', is_display: 1 });
    const type = await services.contactTypes.add(ctx, { name: 'Buyers' });
    await addContact(h, t.alice, { contact_type_id: type, email: 'buyer@example.org', first_name: 'Bea', country: await countryId(h, 'FR') });
    const template = (await services.designTemplates.list()).rows.find((r) => r.is_blank === 0)!.id;
    const utr = await services.singleSends.create(ctx, {
      single_send_name: 'Sale', subject: 'Sale for ((first_name))', preheader: 'Now', sender_id: sender, unsubscribe_group_id: group, template_id: template, template_json: null,
      template_html: '<html><body><p><a href="https://shop.example/sale?a=1&amp;b=2">Sale</a> <a href="https://shop.example/faq">FAQ</a> ((unsubscribe_preferences))</p></body></html>',
      recipient_id: [{ id: String(type), table: 'contacts_' }], exclude_specific_recipient_id: [], schedule_type: 0, schedule_date: '0000-00-00', schedule_time: '00:00:00', track_clicks: 1,
    });
    const worker = createWorkerRuntime(h.runtime, { pollMs: 50 });
    worker.worker.start();
    try {
      await eventually('the send is delivered', async () => (await services.singleSends.get(ctx, utr)).delivered === 1);
    } finally {
      await worker.close();
    }
    const [sent] = (await services.outbox.list(ctx, { page: 1, perPage: 10 }, 'Sale for Bea')).rows;
    // As sent, the message's links are click links.
    const raw = await fs.promises.readFile(path.join(outboxFolder(h.runtime.config.outboxDir, t.alice.user_id), sent.name), 'utf8');
    expect(raw).toMatch(/http:\/\/campaigns\.test\/c\/[\w.-]+\/1/);

    const page = await t.web.get(`/outbox/${encodeURIComponent(sent.name)}`).expect(200);
    expect(page.text).toContain('<a href="https://shop.example/sale?a=1&amp;b=2" target="_blank" rel="noopener noreferrer">');
    expect(page.text).toContain('<a href="https://shop.example/faq" target="_blank" rel="noopener noreferrer">');
    expect(page.text).not.toContain('/c/');
    const html = await t.web.get(`/outbox/${encodeURIComponent(sent.name)}/html`).expect(200);
    expect(html.text).toContain('<a href="https://shop.example/sale?a=1&amp;b=2">Sale</a>');
    expect(html.text).not.toContain('/c/');
    expect((await services.singleSends.get(ctx, utr)).total_clicks).toBe(0);
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
    const outbox = createOutboxService({ config: { ...h.runtime.config, smtpUrl: 'smtp://127.0.0.1:2525' }, tracking: h.runtime.services.tracking });
    expect(outbox.enabled).toBe(false);
  });
});
