import request from 'supertest';
import { addContactType, sendingFixtures, testWorker } from '../support/fixtures';
import { useHarness } from '../support/harness';
import { useSmtpSink } from '../support/smtp';
import { axeViolations } from './axe';
import { useBrowser } from './browser';

const ORIGIN = 'http://host.example';

/** The little of the browser's DOM these tests use (the suite compiles without the DOM types). */
interface XmlNode {
  textContent: string | null;
  querySelector(selector: string): XmlNode | null;
  querySelectorAll(selector: string): Iterable<XmlNode>;
  getElementsByTagName(name: string): { length: number };
  getAttribute(name: string): string | null;
}
interface Browser {
  document: { documentElement: { scrollWidth: number }; activeElement: XmlNode | null };
  DOMParser: new () => { parseFromString(text: string, type: string): XmlNode & { documentElement: XmlNode } };
}

/** A recipient's web view, the public archive and its feed in Chromium, on a phone-sized screen. */
describe('web view and public archive in Chromium', () => {
  const h = useHarness({ BASE_URL: ORIGIN });
  const b = useBrowser(h, { origin: ORIGIN });
  const f = sendingFixtures(h);
  const sink = useSmtpSink();
  const [alice, bob, carol] = h.accounts(3);
  let address: string;
  /** Bob's send in a stock design (the Newsletter), archived. */
  let stockUtr: string;
  /** One pass of a worker over what is due. */
  const deliverDue = async () => {
    const { worker, close } = testWorker(h, sink.url);
    await worker.runOnce().finally(close);
  };

  beforeAll(async () => {
    const sender = await f.sender(alice.user_id, { from_name: 'Acme <News>' });
    const group = await f.group(alice.user_id);
    const type = await addContactType(h, alice, 'Readers');
    await f.contact(alice.user_id, type, 'ann@example.org', { first_name: 'Ann' });
    const send = await f.singleSend(alice.user_id, {
      senderId: sender,
      groupId: group,
      to: [{ contactType: type }],
      subject: 'Spring & <autumn> news',
      html: '<html><head><style>p { color: #333 }</style></head><body><p>Dear ((first_name)),</p><p>((webview_url))</p><script>document.title = "ran"</script></body></html>',
    });
    await h.runtime.db('single_sends').where({ id: send }).update({ archive: 1 });
    await deliverDue();
    address = await h.runtime.services.archive.address({ userId: alice.user_id });

    const stock = String((await h.runtime.db('design_templates').where({ template_name: 'Newsletter' }).first('html_code')).html_code);
    const bobs = await f.basics(bob, 'Members');
    await f.contact(bob.user_id, bobs.type, 'cleo@example.org', { first_name: 'Cleo' });
    const stockSend = await f.singleSend(bob.user_id, { senderId: bobs.sender, groupId: bobs.group, to: [{ contactType: bobs.type }], subject: 'The digest', html: stock });
    await h.runtime.db('single_sends').where({ id: stockSend }).update({ archive: 1 });
    stockUtr = String((await h.runtime.db('single_sends').where({ id: stockSend }).first('utr')).utr);
    await deliverDue();
  });

  test('when the recipient opens the web view on a phone then it shows their message, runs no script and the browser reports no problem', async () => {
    const link = /href="([^"]+\/view\/[^"]+)"/.exec(String(sink.messages[0].parsed.html))![1];
    expect(link.startsWith(`${ORIGIN}/view/`)).toBe(true);
    const page = await b.page();
    await page.setViewportSize({ width: 390, height: 844 });
    // The browser's own findings, with where each came from.
    const errors: string[] = [];
    page.on('console', (m) => {
      if (m.type() === 'error') errors.push(`${m.text()} (${m.location().url})`);
    });
    await page.goto(link);
    await page.getByText('Dear Ann,').waitFor();
    // The author's script stays text on the page: the sandbox without allow-scripts blocks it.
    expect(await page.title()).not.toBe('ran');
    // The author's script is refused, and the sandboxed page's automatic favicon request
    // (the service has none: a 404) is not same-origin; nothing else.
    expect(errors.filter((e) => !/^Blocked script execution .* sandboxed/.test(e) && !e.endsWith('/favicon.ico)'))).toEqual([]);
    expect(errors.some((e) => /^Blocked script execution/.test(e))).toBe(true);
  });

  test('when a visitor reads the archive on a phone with the keyboard then the list fits, the link opens the email, and the feed is well-formed XML', async () => {
    const page = await b.page();
    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto(address);
    await page.getByRole('heading', { name: 'Acme <News>: email archive' }).waitFor();
    expect(b.problems).toEqual([]);
    expect(await page.evaluate(() => (globalThis as unknown as Browser).document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    // Keyboard: the feed link first, then the email.
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => (globalThis as unknown as Browser).document.activeElement?.textContent)).toBe('Follow with RSS');
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => (globalThis as unknown as Browser).document.activeElement?.textContent)).toBe('Spring & <autumn> news');
    await page.keyboard.press('Enter');
    // The archive shows the sample person, not a blank where the name stood.
    await page.getByText('Dear Alex,').waitFor();
    expect(page.url()).toMatch(new RegExp(`^${address}/[0-9a-f-]{36}$`));

    // The browser's own XML parser, which refuses anything not well-formed.
    const feed = (await request(h.runtime.app).get(`${new URL(address).pathname}/rss.xml`).expect(200)).text;
    await page.goto(address);
    const parsed = await page.evaluate((xml) => {
      const doc = new (globalThis as unknown as Browser).DOMParser().parseFromString(xml, 'application/xml');
      const text = (item: XmlNode, name: string) => item.querySelector(name)?.textContent;
      const items = [...doc.querySelectorAll('channel > item')].map((item) => ({
        title: text(item, 'title'),
        link: text(item, 'link'),
        guid: text(item, 'guid'),
        pubDate: text(item, 'pubDate'),
      }));
      return { errors: doc.getElementsByTagName('parsererror').length, version: doc.documentElement.getAttribute('version'), items };
    }, feed);
    expect(parsed.errors).toBe(0);
    expect(parsed.version).toBe('2.0');
    expect(parsed.items).toHaveLength(1);
    expect(parsed.items[0]).toMatchObject({ title: 'Spring & <autumn> news', link: expect.stringMatching(`^${address}/`) });
    expect(parsed.items[0].guid).toBe(parsed.items[0].link);
    expect(Number.isNaN(Date.parse(String(parsed.items[0].pubDate)))).toBe(false);
  });

  test('when a recipient of a stock design clicks "View in your browser" then their message opens on a page of its own', async () => {
    const mail = sink.messages.find((m) => m.to.includes('cleo@example.org'))!;
    const page = await b.page();
    await page.setViewportSize({ width: 390, height: 844 });
    // The mail as a mail program shows it; its first link is the way to the web view.
    await page.setContent(String(mail.parsed.html));
    const link = page.getByRole('link', { name: 'View in your browser' });
    expect(await link.getAttribute('href')).toMatch(/^http:\/\/host\.example\/view\//);
    await link.click();
    await page.waitForURL(/\/view\//);
    await page.getByText('You are receiving this email because cleo@example.org is subscribed').waitFor();
    expect(await page.getByRole('link', { name: 'Unsubscribe or manage preferences' }).count()).toBe(1);
  });

  test('when a visitor reads a stock design in the archive then no line is left blank, every link leads somewhere, and a link leads back to the archive', async () => {
    const archive = await h.runtime.services.archive.address({ userId: bob.user_id });
    const page = await b.page();
    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto(archive);
    await page.getByRole('link', { name: 'The digest' }).click();
    await page.waitForURL(`${archive}/${stockUtr}`);
    // "Hi ," was the blank: the sample person's name stands there.
    await page.getByText('Hi Alex,').waitFor();
    const text = String(await page.locator('body').textContent());
    for (const absent of ['You are receiving', 'Unsubscribe', 'manage preferences', 'Cleo', 'cleo@']) expect(text).not.toContain(absent);
    const hrefs = await page.locator('a').evaluateAll((links) => links.map((a) => (a as unknown as { href: string }).href));
    expect(hrefs.length).toBeGreaterThan(1);
    for (const href of hrefs) expect(href).toMatch(/^https?:\/\/\S+$/);
    // Back to the list, by the keyboard: the link comes first.
    await page.keyboard.press('Tab');
    await page.keyboard.press('Enter');
    await page.waitForURL(archive);
    await page.getByRole('link', { name: 'The digest' }).waitFor();
    // (The message page itself runs no script at all, axe's neither: the list is checked.)
    expect(await axeViolations(page)).toEqual([]);
  });

  test('when the marketer opens a sent send\'s page then "View the message as sent" opens the message in a new tab', async () => {
    const page = await b.signedIn(bob);
    await page.goto(`/single-sends/${stockUtr}`);
    const [tab] = await Promise.all([page.context().waitForEvent('page'), page.getByRole('link', { name: /View the message as sent/ }).click()]);
    await tab.waitForLoadState();
    expect(tab.url()).toBe(`${b.baseUrl}/single-sends/${stockUtr}/preview`);
    expect(String(await tab.locator('body').textContent())).toContain('Cleo');
    expect(b.problems).toEqual([]);
  });

  test('when a send with an A/B test is read in the archive then it shows the variant that won', async () => {
    const carols = await f.basics(carol, 'Friends');
    for (const n of [1, 2, 3, 4]) await f.contact(carol.user_id, carols.type, `friend${n}@example.org`, { first_name: `Friend${n}` });
    const id = await f.singleSend(carol.user_id, { senderId: carols.sender, groupId: carols.group, to: [{ contactType: carols.type }], subject: 'Base subject' });
    await h.runtime.db('single_sends').where({ id }).update({ archive: 1, status: 0, due_at: null });
    const utr = String((await h.runtime.db('single_sends').where({ id }).first('utr')).utr);
    await h.api(carol).post('/single/send/ab/save').send({
      utr, test_percent: 50, winner_metric: 'opens', wait_minutes: 60,
      variants: [{ subject: 'Subject A' }, { subject: 'Subject B wins', template_html: '<html><body><p>The winning words, ((first_name)).</p></body></html>' }],
    }).expect(200);
    await h.runtime.db('single_sends').where({ id }).update({ status: 1, due_at: new Date().toISOString() });
    await deliverDue();
    await h.api(carol).get(`/single/send/ab/choose?utr=${utr}&variant=1`).expect(200);
    await deliverDue();
    const archive = await h.runtime.services.archive.address({ userId: carol.user_id });
    const page = await b.page();
    await page.goto(archive);
    await page.getByRole('link', { name: 'Subject B wins' }).click();
    await page.getByText('The winning words, Alex.').waitFor();
    expect(await page.getByText('Subject A').count()).toBe(0);
  });
});
