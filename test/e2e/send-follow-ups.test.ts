import { createWorkerRuntime } from '../../src/workers/worker-runtime';
import { newsDesk, countryId } from '../support/fixtures';
import { useHarness } from '../support/harness';
import { startSmtpSink } from '../support/smtp';
import { createSigner, TOKEN_PURPOSE } from '../../src/lib/signed-token';
import { axeViolations } from './axe';
import { eventually, useBrowser, widths } from './browser';

const READERS = ['ann', 'bob', 'cat', 'dan'];

/**
 * A sent send's follow-ups in the dashboard: one mailbox refused (451) until its single attempt
 * ran out, so the send's page shows the failure with its reason and "Retry failed" delivers it;
 * then one reader opens it, and "Resend to non-openers" shows how many it goes to before it
 * sends to exactly them.
 */
describe('dashboard in Chromium: retry the failed, then resend to non-openers', () => {
  const h = useHarness();
  const b = useBrowser(h);

  test('when a marketer retries the failed and resends to non-openers then each goes to the right people, with the count shown first', async () => {
    const account = await h.account();
    const { ctx, sender, group, type } = await newsDesk(h, account, 'Readers');
    const { services, db } = h.runtime;
    const fr = await countryId(h, 'FR');
    for (const first of READERS) {
      await services.contacts.add(ctx, { contact_type_id: type, email: `${first}@readers.example`, country: fr, text: { first_name: first } });
    }

    let mailboxFull = true;
    const sink = await startSmtpSink({ onRecipient: (address) => (address.startsWith('dan@') && mailboxFull ? { code: 451, message: '4.2.2 Mailbox full' } : undefined) });
    const mailTo = (subject: string) => sink.messages.filter((m) => m.parsed.subject === subject).map((m) => m.to[0]).sort();
    // One attempt per message, so the refusal is final at once (SEND_MAX_ATTEMPTS=1).
    const worker = createWorkerRuntime({ ...h.runtime, config: { ...h.runtime.config, smtpUrl: sink.url, sendMaxAttempts: 1 } }, { pollMs: 100 });
    worker.worker.start();
    try {
      const utr = await services.singleSends.create(ctx, {
        template_id: 1, template_json: null, template_html: '<html><body><p>Hello ((first_name))</p></body></html>',
        sender_id: sender, unsubscribe_group_id: group, single_send_name: 'Winter letter', subject: 'Winter news', preheader: 'Snow',
        recipient_id: [{ id: String(type), table: 'contacts_' }], exclude_specific_recipient_id: [],
        schedule_type: 0, schedule_date: '0000-00-00', schedule_time: '00:00:00',
      });
      const send = () => db('single_sends').where({ utr }).first('id', 'status', 'failed', 'delivered');
      await eventually('the send completed with one failure', async () => Number((await send()).status) === 3);
      expect(await send()).toMatchObject({ failed: 1, delivered: 3 });

      const page = await b.signedIn(account);
      await page.goto(`/single-sends/${utr}`);
      const stats = page.locator('#send-stats');
      await stats.getByText('Why 1 message could not be delivered').waitFor();
      await stats.getByText('Mailbox full', { exact: false }).waitFor();
      expect(await axeViolations(page)).toEqual([]);

      mailboxFull = false;
      await stats.getByRole('button', { name: 'Retry failed' }).click();
      await page.getByText('1 failed message is being sent again.').waitFor();
      await eventually('the retried message arrives', async () => mailTo('Winter news').includes('dan@readers.example'));
      await stats.getByText('Sent', { exact: true }).waitFor();
      await stats.locator('.stat', { hasText: 'Delivered' }).getByText('4', { exact: true }).waitFor();
      expect(await stats.getByRole('button', { name: 'Retry failed' }).count()).toBe(0);

      // Ann reads it; the others do not.
      const ann = await db('send_messages').where({ single_send_id: (await send()).id, email: 'ann@readers.example' }).first('id');
      const token = createSigner(h.runtime.secret).sign(TOKEN_PURPOSE.message, Number(ann.id));
      await services.tracking.recordOpen(token, { userAgent: 'Mozilla/5.0 (X11; Linux x86_64) Thunderbird/128.0', at: new Date(Date.now() + 60_000) });

      await page.goto(`/single-sends/${utr}`);
      await page.getByRole('link', { name: 'Resend to non-openers…' }).click();
      await page.getByText('It goes to 3 recipients who received it and have not opened it.').waitFor();
      expect(await axeViolations(page)).toEqual([]);
      // On a phone, without sideways scrolling, and reachable from the keyboard.
      await page.setViewportSize({ width: 390, height: 844 });
      const { scroll, inner } = await widths(page);
      expect(scroll).toBeLessThanOrEqual(inner);
      await page.getByLabel('Subject').fill('Winter news, in case you missed it');
      // Tab from the subject to the first button and press it.
      await page.getByLabel('Subject').press('Tab');
      await page.keyboard.press('Enter');
      await page.getByText('Resend started', { exact: false }).waitFor();
      await page.getByText('Those who did not open', { exact: false }).waitFor();
      await eventually('the resend arrives', async () => mailTo('Winter news, in case you missed it').length === 3);
      await page.locator('#send-stats').getByText('Sent', { exact: true }).waitFor();
    } finally {
      await worker.close();
      await sink.close();
    }
    expect(mailTo('Winter news, in case you missed it')).toEqual(['bob@readers.example', 'cat@readers.example', 'dan@readers.example']);
    expect(mailTo('Winter news')).toEqual(READERS.map((r) => `${r}@readers.example`).sort());
    expect(b.problems).toEqual([]);
  }, 120_000);
});
