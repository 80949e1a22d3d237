import { createWorkerRuntime } from '../../src/workers/worker-runtime';
import { newsDesk } from '../support/fixtures';
import { useHarness } from '../support/harness';
import { startSmtpSink } from '../support/smtp';
import { createSigner, TOKEN_PURPOSE } from '../../src/lib/signed-token';
import { axeViolations } from './axe';
import { eventually, useBrowser, widths } from './browser';

const READERS = Array.from({ length: 10 }, (_, i) => `reader${i}@readers.example`);

/**
 * An A/B test from the dashboard: two variants composed side by side on a draft (on a phone,
 * from the keyboard), the send started, one reader of variant B opens it, and the marketer
 * sends B to everyone else from the report, where each variant's rates are shown.
 */
describe('dashboard in Chromium: an A/B test composed, followed and decided', () => {
  const h = useHarness();
  const b = useBrowser(h);

  test('when a marketer composes two variants and picks B on the report then B goes to everyone else and nobody gets two', async () => {
    const account = await h.account();
    const { ctx, sender, group, type } = await newsDesk(h, account, 'Readers');
    const { services, db } = h.runtime;
    for (const email of READERS) await services.contacts.add(ctx, { contact_type_id: type, email, text: { first_name: email.split('@')[0] } });
    const utr = await services.singleSends.create(ctx, {
      template_id: 1, template_json: null, template_html: '<html><body><p>Hello ((first_name))</p></body></html>',
      sender_id: sender, unsubscribe_group_id: group, single_send_name: 'Spring letter', subject: 'Spring news', preheader: 'Flowers',
      recipient_id: [{ id: String(type), table: 'contacts_' }], exclude_specific_recipient_id: [],
      schedule_type: 0, schedule_date: '0000-00-00', schedule_time: '00:00:00',
    }, { draft: true });

    const sink = await startSmtpSink();
    const worker = createWorkerRuntime({ ...h.runtime, config: { ...h.runtime.config, smtpUrl: sink.url } }, { pollMs: 100 });
    worker.worker.start();
    try {
      const page = await b.signedIn(account);
      await page.setViewportSize({ width: 390, height: 844 });
      await page.goto(`/single-sends/${utr}`);
      await page.getByRole('link', { name: 'Set up an A/B test' }).click();
      await page.getByRole('heading', { name: 'A/B test of “Spring letter”' }).waitFor();
      expect(await axeViolations(page)).toEqual([]);
      const { scroll, inner } = await widths(page);
      expect(scroll).toBeLessThanOrEqual(inner);

      // From the keyboard: each field is reached with Tab, and Enter in the last one saves.
      await page.locator('#ab-0-subject').focus();
      await page.keyboard.type('Spring is here');
      await page.keyboard.press('Tab');
      await page.keyboard.press('Tab');
      await page.keyboard.press('Tab');
      await page.keyboard.press('Tab');
      await page.keyboard.type('Flowers for you');
      expect(await page.locator('#ab-1-subject').inputValue()).toBe('Flowers for you');
      await page.getByLabel('Sender name').nth(1).fill('The Garden Team');
      await page.getByLabel('Share of the recipients who get the test (%)').fill('20');
      await page.getByLabel('Wait before sending the winner (minutes)').fill('90');
      await page.getByLabel('Wait before sending the winner (minutes)').press('Enter');
      await page.getByText('A/B test saved', { exact: false }).waitFor();
      await page.getByText('When the send starts, 20% of its recipients', { exact: false }).waitFor();

      // Sent from a wider screen, where the report's table fits.
      await page.setViewportSize({ width: 1280, height: 900 });
      await page.getByRole('link', { name: 'Send now…' }).click();
      await page.getByRole('button', { name: 'Send to 10 recipients' }).click();
      await eventually('the test share arrives', async () => sink.messages.length === 2);
      const bMessage = await db('send_messages').where({ ab_variant: 1 }).whereIn('email', READERS).first('id');
      await services.tracking.recordOpen(createSigner(h.runtime.secret).sign(TOKEN_PURPOSE.message, Number(bMessage.id)), { userAgent: 'Mozilla/5.0 (X11; Linux x86_64) Thunderbird/128.0', at: new Date(Date.now() + 60_000) });

      await page.goto(`/single-sends/${utr}`);
      const report = page.locator('.ab-report');
      await report.getByText('Testing').waitFor();
      const rowB = report.locator('tr', { hasText: 'Flowers for you' });
      await rowB.getByText('The Garden Team').waitFor();
      await rowB.getByText('100%').first().waitFor();
      expect(await axeViolations(page)).toEqual([]);
      // The button asks first, saying how many get B: the 8 who were not in the test.
      const asked: string[] = [];
      page.once('dialog', (dialog) => void asked.push(dialog.message()));
      await rowB.getByRole('button', { name: 'Send B to the rest now' }).click();
      await page.getByText('Variant B is being sent to everyone else.').waitFor();
      expect(asked).toEqual(['Send variant B to the 8 recipients who have not had the test? This ends the test and cannot be undone.']);
      await eventually('everyone got the message', async () => sink.messages.length === READERS.length);
      await page.goto(`/single-sends/${utr}`);
      await report.getByText('Winner sent').waitFor();
      await report.getByText('Variant B was picked by hand and went to everyone else.').waitFor();
      // The test's figures stay as they were when B was chosen (1 sent, opened by its reader);
      // the 8 of the rest are counted apart.
      const winnerRow = report.locator('tr.ab-winner', { hasText: 'Flowers for you' });
      expect((await winnerRow.locator('td.num').allTextContents()).map((t) => t.trim())).toEqual(['1', '1', '100%', '0%']);
      const restRow = report.locator('table.ab-rest tr', { hasText: 'The rest, variant B' });
      await eventually('the rest is delivered', async () => {
        await page.goto(`/single-sends/${utr}`);
        return (await restRow.locator('td.num').allTextContents()).map((t) => t.trim()).join(' ') === '8 8 0% 0%';
      });
      expect(await axeViolations(page)).toEqual([]);
      // A resend proposes the subject most recipients got: B's, not the send's own.
      await eventually('the send completes', async () => (await db('single_sends').where({ utr }).first('status')).status === 3);
      await page.goto(`/single-sends/${utr}/resend`);
      expect(await page.getByLabel('Subject').inputValue()).toBe('Flowers for you');
      await page.goto(`/single-sends/${utr}`);
      // The report on a phone: its table scrolls inside itself, the page does not.
      await page.setViewportSize({ width: 390, height: 844 });
      const phone = await widths(page);
      expect(phone.scroll).toBeLessThanOrEqual(phone.inner);
    } finally {
      await worker.close();
      await sink.close();
    }
    const to = sink.messages.map((m) => m.to[0]).sort();
    expect(to).toEqual([...READERS].sort());
    expect(sink.messages.filter((m) => m.parsed.subject === 'Flowers for you')).toHaveLength(9);
    expect(sink.messages.filter((m) => m.parsed.subject === 'Spring is here')).toHaveLength(1);
    expect(b.problems).toEqual([]);
  }, 120_000);
});
