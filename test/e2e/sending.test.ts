import { createWorkerRuntime } from '../../src/workers/worker-runtime';
import { countryId, newsDesk } from '../support/fixtures';
import { useHarness } from '../support/harness';
import { eventually, useBrowser, fillComposer } from './browser';

describe('dashboard in Chromium: a single send to a segment, delivered by the worker to the Outbox', () => {
  const h = useHarness();
  const b = useBrowser(h);
  /** Runs `work` with the sending worker going; it stops before the harness closes the database. */
  async function withWorker(work: () => Promise<void>): Promise<void> {
    // No SMTP_URL in the harness: the worker's transport writes .eml files to the Outbox.
    const worker = createWorkerRuntime(h.runtime, { pollMs: 100 });
    worker.worker.start();
    try {
      await work();
    } finally {
      await worker.close();
    }
  }

  test('when a send to a segment is saved to go at once then its page follows it to Sent, with its chart, preview and outbox mail', async () => {
    const account = await h.account();
    const { ctx, type } = await newsDesk(h, account, 'Customers');
    const { services } = h.runtime;
    const fr = await countryId(h, 'FR');
    for (const [email, first] of [['ann@friends.example', 'Ann'], ['bob@friends.example', 'Bob'], ['cat@other.example', 'Cat']]) {
      await services.contacts.add(ctx, { contact_type_id: type, email, country: fr, text: { first_name: first } });
    }
    await services.segments.save(ctx, { segment_name: 'Friends', contact_type_id: type, select_field: ['email'], select_operator: ['ends with'], value: ['@friends.example'], query_type: 'and' });
    const page = await b.signedIn(account);

    await page.getByRole('navigation').getByRole('link', { name: 'Single sends' }).click();
    await page.getByRole('link', { name: 'New single send' }).first().click();
    await fillComposer(page, { name: 'Hello friends', subject: 'Hello ((first_name))', preheader: 'A note for friends' });
    await page.getByLabel('Welcome').check();
    await eventually('the editor holds the template', async () => (await page.locator('#field-template_html').inputValue()).includes('Welcome aboard'));
    await page.getByLabel('Segment: Friends').first().check();
    const stats = page.locator('#send-stats');
    await withWorker(async () => {
      await page.getByRole('button', { name: 'Save single send' }).click();
      // A draft: nothing goes out before the confirm step, which counts the recipients.
      await page.getByText('Draft saved.', { exact: false }).waitFor();
      await page.getByRole('link', { name: 'Send now…' }).click();
      await page.getByText('It goes to 2 recipients now.').waitFor();
      await page.getByRole('button', { name: 'Send to 2 recipients' }).click();
      await page.getByText('Sending has started.').waitFor();
      // The counters poll while the worker sends, and stop at Sent.
      await stats.getByText('Sent', { exact: true }).waitFor({ timeout: 20_000 });
      await stats.locator('.stat', { hasText: 'Delivered' }).getByText('2', { exact: true }).waitFor();
    });
    await stats.locator('.bar-chart').first().waitFor();
    await stats.getByText('No opens yet.').waitFor();

    // The preview as the engine renders it for a contact found by name.
    await page.getByLabel('Preview for a contact').fill('ann');
    await page.getByRole('button', { name: 'Preview', exact: true }).click();
    await page.locator('#send-preview').getByText('Hello Ann').waitFor();
    await page.frameLocator('#send-preview iframe.message-frame').getByText('Welcome aboard').first().waitFor();

    await page.getByRole('navigation').getByRole('link', { name: 'Outbox' }).click();
    await page.getByText('Hello Ann').first().waitFor();
    await page.getByText('Hello Bob').first().waitFor();
    expect(await page.getByText('Hello Cat').count()).toBe(0);
    expect(b.problems).toEqual([]);
  });
});
