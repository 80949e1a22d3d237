import { DomUtils, parseDocument } from 'htmlparser2';
import type { Element } from 'domhandler';
import request from 'supertest';
import { useHarness, TestAccount } from '../support/harness';
import { addContactType, addCustomField, manualClock, sendingFixtures, singleSendBody, testWorker } from '../support/fixtures';
import { useSmtpSink } from '../support/smtp';
import { signIn } from '../support/web';

/** The web view of each message and an account's public archive of its sends, with its RSS feed. */
describe('web view and public archive', () => {
  const sink = useSmtpSink({ emptyBeforeEach: true });
  const h = useHarness({ SMTP_URL: () => sink.url, RETENTION_MESSAGES_DAYS: '30' });
  const f = sendingFixtures(h);
  // Ahead of the real clock, so sends saved "now" through the API are due for the test's worker.
  const clock = manualClock(new Date(Date.now() + 3_600_000));
  let alice: TestAccount;

  beforeEach(async () => {
    alice = await h.account();
  });

  const BODY =
    '<html><body><p>Dear ((first_name)) &lt;((email))&gt;, your code is ((code)).</p>' +
    '<p><a href="https://acme.test/offer">Offer</a> · ((webview_url)) · <a href="((webview_url))">online</a></p>' +
    '<p>((sender_name)), ((sender_address))</p><p>((unsubscribe_preferences))</p></body></html>';

  /** A send created through the API to these contacts of a fresh contact type; answers its utr. */
  async function createSend(account: TestAccount, people: Array<{ email: string; first_name: string; code?: string }>, overrides: Record<string, unknown> = {}): Promise<string> {
    const sender = await f.sender(account.user_id, { from_name: 'Acme News' });
    const group = await f.group(account.user_id);
    const type = await addContactType(h, account, `Type ${Math.random()}`);
    for (const p of people) await f.contact(account.user_id, type, p.email, { first_name: p.first_name, custom_fields: { code: p.code ?? '' } });
    const body = singleSendBody({ senderId: sender, groupId: group, contactTypeId: type, segmentId: 0 }, {
      recipient_id: [`contacts_${type}`],
      subject: 'News for ((first_name))',
      template_html: BODY,
      ...overrides,
    });
    return (await h.api(account).post('/single/send/create').send(body).expect(200)).body.message.utr as string;
  }

  async function run(): Promise<void> {
    const { worker, close } = testWorker(h, sink.url, { now: clock.now });
    await worker.runOnce().finally(close);
  }

  const details = async (account: TestAccount, utr: string) => (await h.api(account).get(`/single-send/details?utr=${utr}`).expect(200)).body.message.singleSend[0];
  const mailTo = (email: string) => sink.messages.find((m) => m.to.includes(email))!;
  /** The path of the web-view link in a received message's HTML. */
  const viewPath = (html: string) => {
    const match = /href="http:\/\/campaigns\.test(\/view\/[\w.-]+)"/.exec(html);
    if (!match) throw new Error(`no web-view link in ${html}`);
    return match[1];
  };
  const app = () => request(h.runtime.app);

  test('when a sent message\'s web-view link is opened then it shows that recipient\'s own message, with no script and without counting an open', async () => {
    const utr = await createSend(alice, [
      { email: 'ada@example.org', first_name: 'Ada', code: 'A-111' },
      { email: 'bob@example.org', first_name: 'Bob', code: 'B-222' },
    ]);
    await run();
    expect(await details(alice, utr)).toMatchObject({ status: 3, delivered: 2 });

    const ada = mailTo('ada@example.org');
    const html = String(ada.parsed.html);
    // In text the placeholder is a link, in an attribute the URL, in the text part the URL.
    expect(html).toContain('>View this email in your browser</a>');
    const path = viewPath(html);
    expect(html).toContain(`<a href="http://campaigns.test${path}">online</a>`);
    expect(ada.parsed.text).toContain(`http://campaigns.test${path}`);

    const page = await app().get(path).expect(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    expect(page.text).toContain('Dear Ada &lt;ada@example.org&gt;, your code is A-111.');
    expect(page.text).not.toContain('Bob');
    expect(page.text).toContain('Acme News');
    // The message's own links, as the recipient got them: the click link and the preference page.
    expect(page.text).toMatch(/href="http:\/\/campaigns\.test\/c\/[\w.-]+\/1"/);
    expect(page.text).toMatch(/href="http:\/\/campaigns\.test\/unsubscribe\/[\w.-]+"/);
    expect(page.text).not.toContain('/open/');
    const csp = String(page.headers['content-security-policy']);
    expect(csp).toContain("default-src 'none'");
    expect(csp).not.toContain('script-src');
    expect(csp).toMatch(/sandbox(?![^;]*allow-scripts)/);
    expect(page.headers['cache-control']).toBe('no-store, private');

    // Bob's link shows Bob's message.
    const bobPage = await app().get(viewPath(String(mailTo('bob@example.org').parsed.html))).expect(200);
    expect(bobPage.text).toContain('Dear Bob &lt;bob@example.org&gt;, your code is B-222.');
    expect(bobPage.text).not.toContain('Ada');

    // Looking is not opening.
    expect(await details(alice, utr)).toMatchObject({ unique_opens: 0, total_opens: 0 });
  });

  test('when an automation email has a web-view link then it shows that step\'s message for its recipient', async () => {
    const { sender, group, type } = await f.basics(alice, 'Signups');
    const automation = await f.automation(alice.user_id, { type: 'welcome', contactType: type, groupId: group });
    await f.schedule(alice.user_id, automation, { senderId: sender, subject: 'Welcome ((first_name))', waitingPeriod: 1, waitingType: 'instantly', html: '<p>Welcome aboard, ((first_name)). ((webview_url))</p>' });
    await f.setAutomationStatus(automation, 1);
    const steps = manualClock(new Date(Date.now() + 3_600_000));
    const { worker, close } = testWorker(h, sink.url, { now: steps.now });
    try {
      await worker.runOnce();
      await f.contact(alice.user_id, type, 'kim@example.org', { first_name: 'Kim' });
      steps.advance(60_000);
      await worker.runOnce();
    } finally {
      await close();
    }
    const page = await app().get(viewPath(String(mailTo('kim@example.org').parsed.html))).expect(200);
    expect(page.text).toContain('Welcome aboard, Kim.');
  });

  test('when the web-view token is tampered with, or another link\'s token is used, then the page says the link is not valid (404)', async () => {
    await createSend(alice, [{ email: 'cy@example.org', first_name: 'Cy' }]);
    await run();
    const path = viewPath(String(mailTo('cy@example.org').parsed.html));
    const token = path.slice('/view/'.length);
    const [id, mac] = token.split('.');
    const tampered = [
      `${id}.${mac.slice(0, -1)}${mac.endsWith('A') ? 'B' : 'A'}`,
      `${(parseInt(id, 36) + 1).toString(36)}.${mac}`,
      'garbage',
      // The unsubscribe link's token names the same message but is signed for another use.
      f.token(parseInt(id, 36)),
    ];
    for (const bad of tampered) {
      const res = await app().get(`/view/${bad}`).expect(404);
      expect(res.text).toContain('This link is not valid');
      expect(res.text).not.toContain('Cy');
    }
  });

  test('when a send is saved with archive then its record shows it, update changes it, absent leaves it, and a bad value is refused', async () => {
    const utr = await createSend(alice, [{ email: 'dee@example.org', first_name: 'Dee' }], { schedule_type: 1, schedule_date: '2031-01-15', schedule_time: '09:30' });
    expect((await details(alice, utr)).archive).toBe(0);
    const body = (await details(alice, utr)) as Record<string, unknown>;
    const refs = (body.recipient_id as Array<{ table: string; id: string }>).map((r) => `${r.table}${r.id}`);
    const update = {
      utr, template_id: body.template_id, sender_id: body.sender_id, unsubscribe_group_id: body.unsubscribe_group_id, single_send_name: 'Later', subject: 'S',
      preheader: 'P', recipient_id: refs, schedule_type: 1, schedule_date: '2031-01-15', schedule_time: '09:30', template_html: '<p>x</p>',
    };
    await h.api(alice).post('/single/send/update').send({ ...update, archive: 1 }).expect(200);
    expect((await details(alice, utr)).archive).toBe(1);
    await h.api(alice).post('/single/send/update').send(update).expect(200);
    expect((await details(alice, utr)).archive).toBe(1);
    await h.api(alice).post('/single/send/update').type('form').send({ ...update, recipient_id: refs.join(','), archive: '0' }).expect(200);
    expect((await details(alice, utr)).archive).toBe(0);
    const refused = await h.api(alice).post('/single/send/update').send({ ...update, archive: 'yes' }).expect(422);
    expect(refused.body).toEqual({ status: 'failed', errors: { archive: ['The archive field must be true or false.'] } });
  });

  test('when sends are archived then the account\'s archive lists only its completed archived ones, without personal data, the RSS feed has the same items, and one taken down is gone', async () => {
    const people = [{ email: 'erin.private@example.org', first_name: 'Erinna', code: 'SECRET-1' }];
    await addCustomField(h, alice, 'code', 'text');
    const archived = await createSend(alice, people, { archive: 1, subject: 'Autumn <b>news</b> & "more" for ((first_name))' });
    const notArchived = await createSend(alice, [{ email: 'fay.private@example.org', first_name: 'Fayette' }], { subject: 'Not for the archive' });
    await run();
    expect(await details(alice, archived)).toMatchObject({ status: 3, archive: 1 });
    expect(await details(alice, notArchived)).toMatchObject({ status: 3, archive: 0 });
    // Archived, but not sent yet: not listed until it has completed.
    const later = await createSend(alice, [{ email: 'gil@example.org', first_name: 'Gil' }], { archive: 1, subject: 'Still scheduled', schedule_type: 1, schedule_date: '2031-01-15', schedule_time: '09:30' });
    expect((await details(alice, later)).status).toBe(1);
    // Another account's archived send is in its own archive only.
    const bob = await h.account();
    await createSend(bob, [{ email: 'hal@example.org', first_name: 'Hal' }], { archive: 1, subject: 'Bob\'s own news' });
    await run();

    const address = await h.runtime.services.archive.address({ userId: alice.user_id });
    expect(address).toMatch(/^http:\/\/campaigns\.test\/archive\/[\w-]{16}$/);
    expect(address).not.toContain(alice.public_key);
    expect(await h.runtime.services.archive.address({ userId: alice.user_id })).toBe(address);
    const path = new URL(address).pathname;

    const page = await app().get(path).expect(200);
    expect(page.text).toContain('Acme News: email archive');
    expect(page.text).toContain('Autumn &lt;b&gt;news&lt;/b&gt; &amp; &quot;more&quot; for Alex');
    expect(page.text).toContain(`href="${address}/${archived}"`);
    expect(page.text).toContain(`href="${address}/rss.xml"`);
    for (const absent of ['Not for the archive', 'Still scheduled', 'Bob\'s own news', 'Erinna', 'erin.private', 'SECRET-1', alice.email, '<script']) {
      expect(page.text).not.toContain(absent);
    }

    // The archived message itself: the content, for the sample person instead of the recipient,
    // without tracking or an unsubscribe link, and a way back to the archive.
    const item = await app().get(`${path}/${archived}`).expect(200);
    expect(item.text).toContain('Dear Alex &lt;alex.sample@example.com&gt;, your code is [code].');
    expect(item.text).toContain(`<a href="${address}" style="color:#1d4ed8;text-decoration:underline;display:inline-block;min-height:24px;padding:2px 4px">All emails in this archive</a>`);
    // The paragraph that held only the preference placeholder is gone with it.
    expect(item.text).not.toContain('<p></p>');
    expect(item.text).toContain('href="https://acme.test/offer"');
    expect(item.text).toContain(`<a href="${address}/${archived}">View this email in your browser</a>`);
    expect(item.text).toContain('Acme News');
    for (const absent of ['Erinna', 'erin.private', 'SECRET-1', '/unsubscribe/', '/c/', '/open/', 'Unsubscribe']) expect(item.text).not.toContain(absent);
    expect(String(item.headers['content-security-policy'])).not.toContain('script-src');
    await app().get(`${path}/${notArchived}`).expect(404);
    await app().get(`${path}/${later}`).expect(404);

    // The feed: RSS 2.0 whose one item is the archived send.
    const rss = await app().get(`${path}/rss.xml`).expect(200);
    expect(rss.headers['content-type']).toBe('application/rss+xml; charset=utf-8');
    expect(rss.text.startsWith('<?xml version="1.0" encoding="UTF-8"?>')).toBe(true);
    const doc = parseDocument(rss.text, { xmlMode: true });
    const root = DomUtils.findOne((e) => e.name === 'rss', doc.children)!;
    expect(root.attribs.version).toBe('2.0');
    const items = DomUtils.findAll((e) => e.name === 'item', doc.children);
    expect(items).toHaveLength(1);
    const child = (e: Element, name: string) => DomUtils.textContent(DomUtils.findOne((c) => c.name === name, e.children)!);
    expect(child(items[0], 'title')).toBe('Autumn <b>news</b> & "more" for Alex');
    expect(child(items[0], 'link')).toBe(`${address}/${archived}`);
    expect(child(items[0], 'guid')).toBe(`${address}/${archived}`);
    expect(new Date(child(items[0], 'pubDate')).getTime()).not.toBeNaN();
    expect(child(items[0], 'pubDate')).toMatch(/^[A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT$/);
    expect(child(items[0], 'description')).toContain('your code is [code].');
    for (const absent of ['Erinna', 'erin.private', 'SECRET-1', 'Fayette', 'Hal']) expect(rss.text).not.toContain(absent);

    // Taken down after it went out (the API; the dashboard's button below): gone from the page, the feed and its address.
    await h.api(alice).post('/single/send/archive').send({ utr: archived, archive: 0 }).expect(200, { status: 'success', message: 'Saved Successfully' });
    expect((await details(alice, archived)).archive).toBe(0);
    expect((await app().get(path).expect(200)).text).not.toContain('Autumn');
    expect((await app().get(`${path}/rss.xml`).expect(200)).text).not.toContain('<item>');
    await app().get(`${path}/${archived}`).expect(404);
    // Another account's send is not found; the flag is required.
    await h.api(bob).post('/single/send/archive').send({ utr: archived, archive: 1 }).expect(404);
    expect((await h.api(alice).post('/single/send/archive').send({ utr: archived }).expect(422)).body).toEqual({ status: 'failed', errors: { archive: ['The archive field is required.'] } });

    // An id no account has, and one that is not an id at all.
    await app().get('/archive/AAAAAAAAAAAAAAAA').expect(404);
    await app().get('/archive/..%2F..').expect(404);
  });

  test('when the dashboard composer is saved with and without the archive box ticked then the send follows it, and settings show the archive\'s address', async () => {
    const web = await signIn(h, alice);
    const form = await web.get('/single-sends/new').expect(200);
    expect(form.text).toContain('<input type="checkbox" name="archive" value="1"> Show in the public archive');

    const { sender, group, type } = await f.basics(alice, 'Readers');
    const fields = {
      single_send_name: 'From the dashboard', subject: 'Hello', preheader: 'News', sender_id: String(sender), unsubscribe_group_id: String(group),
      template_id: '1', template_html: '<p>Hi</p>', recipient_id: `contacts_${type}`, schedule_type: '1', schedule_date: '2031-01-15', schedule_time: '09:30',
    };
    const saved = await web.post('/single-sends/new', { ...fields, archive: '1' }).expect(303);
    const utr = /^\/single-sends\/([\w-]+)$/.exec(saved.headers.location)![1];
    expect((await details(alice, utr)).archive).toBe(1);
    const edit = await web.get(`/single-sends/${utr}/edit`).expect(200);
    expect(edit.text).toContain('<input type="checkbox" name="archive" value="1" checked> Show in the public archive');
    expect((await web.get(`/single-sends/${utr}`).expect(200)).text).toContain('Shown in your <a href="/settings#archive">public archive</a> once sent');
    // A box left unticked sends nothing: the form means "not in the archive".
    await web.post(`/single-sends/${utr}/edit`, fields).expect(303);
    expect((await details(alice, utr)).archive).toBe(0);
    // The send's page has a button for it too, whatever the send's state.
    const show = await web.get(`/single-sends/${utr}`).expect(200);
    expect(show.text).toContain('Not shown in your <a href="/settings#archive">public archive</a>');
    expect(show.text).toContain('<button type="submit" class="small">Show in the public archive</button>');
    const shown = await web.post(`/single-sends/${utr}/archive`, { archive: '1' }).expect(303);
    expect(shown.headers.location).toBe(`/single-sends/${utr}`);
    expect((await details(alice, utr)).archive).toBe(1);
    expect((await web.get(`/single-sends/${utr}`).expect(200)).text).toContain('Remove from the public archive</button>');
    await web.post(`/single-sends/${utr}/archive`, { archive: '0' }).expect(303);
    expect((await details(alice, utr)).archive).toBe(0);

    const settings = await web.get('/settings').expect(200);
    const address = await h.runtime.services.archive.address({ userId: alice.user_id });
    expect(settings.text).toContain(`<a href="${address}" hx-boost="false" class="break">${address}</a>`);
    expect(settings.text).toContain(`<a href="${address}/rss.xml" hx-boost="false">`);
  });

  test('when an archived send used a stock template then its footer\'s recipient lines and preference link are left out, and nothing links nowhere', async () => {
    const stock = String((await h.runtime.db('design_templates').where({ id: 2 }).first('html_code')).html_code);
    expect(stock).toContain('View in your browser');
    const utr = await createSend(alice, [{ email: 'lou@example.org', first_name: 'Lou' }], { archive: 1, template_id: 2, template_html: '' });
    await run();
    // The recipient's mail keeps them: who it was sent to, and the preference link.
    const mail = String(mailTo('lou@example.org').parsed.html);
    expect(mail).toContain('You are receiving this email because lou@example.org is subscribed');
    expect(mail).toMatch(/<a href="http:\/\/campaigns\.test\/unsubscribe\/[\w.-]+"[^>]*>Unsubscribe or manage preferences<\/a>/);
    expect(mail).toContain(`<a href="http://campaigns.test${viewPath(mail)}" style="color:#4b5563;text-decoration:underline;">View in your browser</a>`);

    const address = await h.runtime.services.archive.address({ userId: alice.user_id });
    const item = await app().get(`${new URL(address).pathname}/${utr}`).expect(200);
    for (const absent of ['You are receiving', 'Unsubscribe', 'manage preferences', 'lou@example.org', 'Lou']) expect(item.text).not.toContain(absent);
    expect(item.text).toContain(`<a href="${address}/${utr}" style="color:#4b5563;text-decoration:underline;">View in your browser</a>`);
    // Every link leads somewhere.
    const doc = parseDocument(item.text);
    const hrefs = DomUtils.findAll((e) => e.name === 'a', doc.children).map((a) => a.attribs.href ?? '');
    expect(hrefs.length).toBeGreaterThan(0);
    for (const href of hrefs) expect(href).toMatch(/^https?:\/\/\S+$/);
  });

  test('when an archived send had an A/B test then the archive shows the winner\'s subject and content', async () => {
    const utr = await createSend(alice, [1, 2, 3, 4].map((n) => ({ email: `ab${n}@example.org`, first_name: `Ab${n}` })), { archive: 1 });
    await h.api(alice).post('/single/send/ab/save').send({
      utr, test_percent: 50, winner_metric: 'opens', wait_minutes: 60,
      variants: [{ subject: 'Variant A for ((first_name))' }, { subject: 'Variant B for ((first_name))', template_html: '<html><body><p>B body for ((first_name))</p></body></html>' }],
    }).expect(200);
    await run();
    await h.api(alice).get(`/single/send/ab/choose?utr=${utr}&variant=1`).expect(200);
    await run();
    expect(await details(alice, utr)).toMatchObject({ status: 3 });
    const address = await h.runtime.services.archive.address({ userId: alice.user_id });
    const list = await app().get(new URL(address).pathname).expect(200);
    expect(list.text).toContain('Variant B for Alex');
    expect(list.text).not.toContain('Variant A');
    const item = await app().get(`${new URL(address).pathname}/${utr}`).expect(200);
    expect(item.text).toContain('<p>B body for Alex</p>');
    expect(item.text).not.toContain('Dear');
    // The send's page links to the message as sent: the winner too, for its first recipient.
    const web = await signIn(h, alice);
    expect((await web.get(`/single-sends/${utr}`).expect(200)).text).toContain(`<a href="/single-sends/${utr}/preview" target="_blank" rel="noopener" hx-boost="false">View the message as sent`);
    const asSent = await web.get(`/single-sends/${utr}/preview`).expect(200);
    expect(asSent.text).toMatch(/<p>B body for Ab\d<\/p>/);
  });

  test('when a send has not gone out yet then its page offers the preview but no "message as sent"', async () => {
    const utr = await createSend(alice, [{ email: 'zed@example.org', first_name: 'Zed' }], { schedule_type: 1, schedule_date: '2031-01-15', schedule_time: '09:30' });
    const web = await signIn(h, alice);
    const page = (await web.get(`/single-sends/${utr}`).expect(200)).text;
    expect(page).toContain(`src="/single-sends/${utr}/preview"`);
    expect(page).not.toContain('View the message as sent');
  });

  test('when the recipient\'s address has been erased then their web view says the email is no longer available (410)', async () => {
    await createSend(alice, [{ email: 'jo@example.org', first_name: 'Jo', code: 'J-9' }]);
    await run();
    const path = viewPath(String(mailTo('jo@example.org').parsed.html));
    await app().get(path).expect(200);
    await h.api(alice).post('/contacts/erase').send({ email: 'jo@example.org' }).expect(200);
    const gone = await app().get(path).expect(410);
    expect(gone.text).toContain('This email is no longer available');
    for (const absent of ['Jo', 'J-9', 'erased']) expect(gone.text).not.toContain(absent);
  });

  // Last: retention deletes the finished sends' message rows of the whole database.
  test('when retention has deleted a message\'s record then its web view says it is no longer available (410)', async () => {
    await createSend(alice, [{ email: 'ivy@example.org', first_name: 'Ivy' }]);
    await run();
    const path = viewPath(String(mailTo('ivy@example.org').parsed.html));
    await app().get(path).expect(200);
    const counts = await h.runtime.services.retention.prune({ now: new Date(Date.now() + 40 * 24 * 3600_000) });
    expect(counts.messages).toBeGreaterThan(0);
    const gone = await app().get(path).expect(410);
    expect(gone.text).toContain('This email is no longer available');
    expect(gone.text).not.toContain('Ivy');
  });
});
