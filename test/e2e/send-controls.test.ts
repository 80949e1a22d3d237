import { createWorkerRuntime } from '../../src/workers/worker-runtime';
import { addVerifiedSender, berlin, countryId } from '../support/fixtures';
import { useHarness } from '../support/harness';
import { eventually, useBrowser } from './browser';

const NAMES = ['Ann', 'Bob', 'Cat', 'Dan', 'Eve', 'Fay', 'Gus', 'Hal'];

/**
 * A send's whole journey in the dashboard: draft → test send → confirm → pause → resume → completed, every recipient
 * once. MAIL_RATE=2 keeps the send running long enough to pause it half-way.
 */
describe('dashboard in Chromium: a send drafted, tested, confirmed, paused and resumed', () => {
  const h = useHarness({ MAIL_RATE: '2' });
  const b = useBrowser(h);

  test('when a marketer pauses a running send and resumes it then it completes with every recipient mailed once and the test not counted', async () => {
    const account = await h.account();
    const ctx = { userId: account.user_id };
    const { services } = h.runtime;
    await addVerifiedSender(h, account, await berlin(h), { nickname: 'News', from_email: 'news@acme.example' });
    await services.unsubscribeGroups.add(ctx, { group_name: 'Newsletter', description: 'News', is_display: 1 });
    const type = await services.contactTypes.add(ctx, { name: 'Readers' });
    const fr = await countryId(h, 'FR');
    for (const first of NAMES) {
      await services.contacts.add(ctx, { contact_type_id: type, email: `${first.toLowerCase()}@readers.example`, country: fr, text: { first_name: first } });
    }
    /** The Outbox's messages whose subject is `subject`, by recipient. */
    const outbox = async (subject: string) => {
      const list = await services.outbox.list(ctx, { page: 1, perPage: 100 });
      return list.rows.filter((m) => m.subject === subject).map((m) => m.to);
    };

    const page = await b.page();
    await b.signIn(page, account);
    await page.goto('/single-sends/new');
    await page.getByLabel('Name', { exact: true }).fill('Autumn letter');
    await page.getByLabel('Subject').fill('Autumn, ((first_name))');
    await page.getByLabel('Preheader').fill('Leaves and letters');
    await page.getByLabel('Sender').selectOption({ label: 'News — news@acme.example' });
    await page.getByLabel('Unsubscribe group').selectOption({ label: 'Newsletter' });
    await page.getByLabel('Welcome').check();
    await eventually('the editor holds the template', async () => (await page.locator('#field-template_html').inputValue()).includes('Welcome aboard'));
    await page.getByLabel('Readers').first().check();

    const worker = createWorkerRuntime(h.runtime, { pollMs: 100 });
    worker.worker.start();
    try {
      await page.getByRole('button', { name: 'Save single send' }).click();
      await page.getByText('Draft saved.', { exact: false }).waitFor();
      // The draft sends nothing by itself; the test goes to the marketer only.
      await page.getByLabel('Send to').fill('me@acme.example');
      await page.getByRole('button', { name: 'Send test' }).click();
      await page.getByText('Test sent to me@acme.example.', { exact: false }).waitFor();
      await eventually('the test arrives', async () => (await outbox('[Test] Autumn, Ann')).length === 1);
      expect(await outbox('[Test] Autumn, Ann')).toEqual(['me@acme.example']);

      await page.getByRole('link', { name: 'Send now…' }).click();
      await page.getByText(`It goes to ${NAMES.length} recipients now.`).waitFor();
      await page.getByRole('button', { name: `Send to ${NAMES.length} recipients` }).click();
      await page.getByText('Sending has started.').waitFor();
      const stats = page.locator('#send-stats');
      await eventually('the first messages go out', async () => (await Promise.all(NAMES.map((n) => outbox(`Autumn, ${n}`)))).flat().length >= 1);

      await stats.getByRole('button', { name: 'Pause' }).click();
      await page.getByText('Paused: nothing more is sent until you resume.', { exact: false }).waitFor();
      await stats.getByText('Paused', { exact: true }).waitFor();
      // What was in flight finishes; then nothing more goes out while it is paused.
      await new Promise((resolve) => setTimeout(resolve, 1500));
      const mailed = async () => (await Promise.all(NAMES.map((n) => outbox(`Autumn, ${n}`)))).flat().length;
      const atPause = await mailed();
      await new Promise((resolve) => setTimeout(resolve, 2000));
      const stillPaused = await mailed();
      expect(stillPaused).toBe(atPause);
      expect(atPause).toBeLessThan(NAMES.length);

      await stats.getByRole('button', { name: 'Resume' }).click();
      await stats.getByText('Sent', { exact: true }).waitFor({ timeout: 30_000 });
      await stats.locator('.stat', { hasText: 'Delivered' }).getByText(String(NAMES.length), { exact: true }).waitFor();
    } finally {
      await worker.close();
    }
    // Every recipient exactly once; the test message is not among the delivered.
    for (const first of NAMES) expect(await outbox(`Autumn, ${first}`)).toEqual([`${first.toLowerCase()}@readers.example`]);
    expect(b.problems).toEqual([]);
  }, 120_000);
});
