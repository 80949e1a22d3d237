import request from 'supertest';
import { addContactType, sendingFixtures, testWorker } from '../support/fixtures';
import { useHarness } from '../support/harness';
import { useSmtpSink } from '../support/smtp';
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
  const [alice] = h.accounts(1);
  let address: string;

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
    const { worker, close } = testWorker(h, sink.url);
    await worker.runOnce().finally(close);
    address = await h.runtime.services.archive.address({ userId: alice.user_id });
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
    await page.getByText('Dear ,').waitFor();
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
});
