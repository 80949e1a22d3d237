import { addContactType, header, sendingFixtures, testWorker } from '../support/fixtures';
import { useHarness } from '../support/harness';
import { useSmtpSink } from '../support/smtp';
import { axeViolations } from './axe';
import { useBrowser } from './browser';

const ORIGIN = 'http://host.example';

/** The recipient's pages in Chromium, served on a plain-http origin that is not localhost. */
describe('preference page in Chromium on a plain-http BASE_URL', () => {
  const h = useHarness({ BASE_URL: ORIGIN });
  const b = useBrowser(h, { origin: ORIGIN });
  const f = sendingFixtures(h);
  const [alice] = h.accounts(1);
  const sink = useSmtpSink();
  let news: number;

  beforeAll(async () => {
    const sender = await f.sender(alice.user_id);
    news = await f.group(alice.user_id, 'News', 1);
    const type = await addContactType(h, alice, 'Readers');
    await f.contact(alice.user_id, type, 'ann@example.org');
    await f.singleSend(alice.user_id, { senderId: sender, groupId: news, to: [{ contactType: type }] });
    const { worker, close } = testWorker(h, sink.url);
    await worker.runOnce().finally(close);
  });

  test('when the recipient follows the link and opts out of everything then the page is styled, the form is sent and they are unsubscribed', async () => {
    const link = /^<([^>]+)>/.exec(header(sink.messages[0].raw, 'List-Unsubscribe')!)![1];
    expect(link.startsWith(`${ORIGIN}/unsubscribe/`)).toBe(true);
    const page = await b.page();
    await page.goto(link);
    await page.getByRole('heading', { name: 'Email preferences' }).waitFor();
    // The stylesheet loaded from the same plain-http origin.
    const background = await page.locator('button[type=submit]').evaluate(
      (el) => (globalThis as unknown as { getComputedStyle(e: unknown): { backgroundColor: string } }).getComputedStyle(el).backgroundColor,
    );
    expect(background).toBe('rgb(15, 118, 110)');

    await page.getByLabel(/Unsubscribe from all emails/).check();
    await page.getByRole('button', { name: 'Save preferences' }).click();
    await page.getByText('Your preferences have been saved.').waitFor();
    expect(page.url()).toBe(link);
    const global = await h.runtime.db('global_unsubscribes').where({ user_id: alice.user_id }).pluck('email_address');
    expect(global).toEqual(['ann@example.org']);
    expect(b.problems).toEqual([]);
  });

  test('when the recipient unsubscribes from all with a group still ticked then the page and its reopening show every group unticked and say no mail will come', async () => {
    const link = /^<([^>]+)>/.exec(header(sink.messages[0].raw, 'List-Unsubscribe')!)![1];
    await h.runtime.db('global_unsubscribes').where({ user_id: alice.user_id }).delete();
    const page = await b.page();
    await page.goto(link);
    const group = page.getByRole('checkbox', { name: /News/ });
    await expect(group.isChecked()).resolves.toBe(true);
    await page.getByLabel(/Unsubscribe from all emails/).check();
    await page.getByRole('button', { name: 'Save preferences' }).click();
    await page.getByText('Your preferences have been saved.').waitFor();
    const said = 'ann@example.org is unsubscribed from all our emails: no mail from us will come.';
    await page.getByText(said, { exact: false }).waitFor();
    await expect(group.isChecked()).resolves.toBe(false);
    await expect(page.getByLabel(/Unsubscribe from all emails/).isChecked()).resolves.toBe(true);
    expect(await axeViolations(page)).toEqual([]);

    // Reopened from the message later: the same state, in the same words.
    await page.goto(link);
    await page.getByText(said, { exact: false }).waitFor();
    await expect(group.isChecked()).resolves.toBe(false);
    await expect(page.getByLabel(/Unsubscribe from all emails/).isChecked()).resolves.toBe(true);
    expect(await axeViolations(page)).toEqual([]);
    expect(b.problems).toEqual([]);
  });
});
