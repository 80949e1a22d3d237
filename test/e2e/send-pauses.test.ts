import { newsDesk, testWorker } from '../support/fixtures';
import { useHarness } from '../support/harness';
import { useSmtpSink } from '../support/smtp';
import { axeViolations } from './axe';
import { useBrowser } from './browser';

/** Gmail's answer to mail that is not DMARC-aligned: several sentences, longer than a line. */
const GMAIL_REFUSAL = "5.7.26 Unauthenticated email from acme.example is not accepted due to domain's DMARC policy. Please contact the administrator of acme.example domain if this was a legitimate mail. To learn about the DMARC initiative, go to https://support.google.com/mail/?p=DmarcRejection";

/**
 * A send that receivers refuse for its authentication: the service pauses it, and the marketer
 * who opens its page learns what happened, reads the server's answer whole, follows the link to
 * the sending domain's records, finds the pause in the audit log as the service's, and resumes;
 * the new account's owner, its notification recipient by default, was told by email.
 */
describe('dashboard in Chromium: a send paused by the service says why', () => {
  const sink = useSmtpSink({ onRecipient: (address) => (address.endsWith('@gmail.test') ? { code: 550, message: GMAIL_REFUSAL } : undefined) });
  const h = useHarness({ SMTP_URL: () => sink.url });
  const b = useBrowser(h);

  test('when Gmail refuses a send for DMARC then its page says what happened, shows the answer whole, links to the domain\'s missing records and the audit log names the service', async () => {
    const { services } = h.runtime;
    // A new account as the CLI or the first start makes it: its owner is told of what happens.
    const made = await services.accounts.create({ email: `owner.pauses.${process.pid}@example.com`, password: 'correct horse battery staple', starter: true });
    const account = { ...made, headers: { PublicKey: made.public_key, SecretKey: made.secret_key } };
    const { ctx, sender, group, type } = await newsDesk(h, account, 'Readers');
    for (let i = 0; i < 12; i += 1) await services.contacts.add(ctx, { contact_type_id: type, email: `reader${i}@gmail.test`, text: {} });
    for (let i = 0; i < 8; i += 1) await services.contacts.add(ctx, { contact_type_id: type, email: `reader${i}@example.org`, text: {} });
    const domain = await services.sendingDomains.save(ctx, { domain: 'acme.example' });
    const utr = await services.singleSends.create(ctx, {
      template_id: 1, template_json: null, template_html: '<html><body><p>Hello</p></body></html>',
      sender_id: sender, unsubscribe_group_id: group, single_send_name: 'Winter letter', subject: 'Winter news', preheader: '',
      recipient_id: [{ id: String(type), table: 'contacts_' }], exclude_specific_recipient_id: [],
      schedule_type: 0, schedule_date: '0000-00-00', schedule_time: '00:00:00',
    }, { draft: true });
    await services.sendControls.confirm(ctx, utr, 'now');
    const { worker, close } = testWorker(h, sink.url, { batchSize: 20, lanes: 1 });
    await worker.runOnce().finally(close);

    const page = await b.signedIn(account);
    await page.goto(`/single-sends/${utr}`);
    const why = page.locator('.pause-explained');
    await why.getByRole('heading', { name: 'Why this send is paused' }).waitFor();
    await why.getByText('Receiving mail servers refused', { exact: false }).waitFor();
    expect(await why.textContent()).toContain('The service paused the send on');
    // The server's answer as it said it: every sentence, no library code before it.
    expect((await why.locator('blockquote.server-answer').textContent())?.trim()).toBe(`550 ${GMAIL_REFUSAL}`);
    expect(await page.locator('main').textContent()).not.toMatch(/EENVELOPE|EMESSAGE|tried again several times/);
    await page.locator('.failure-reasons').getByText('not tried again', { exact: false }).waitFor();
    await why.getByText('The account’s 1 notification recipient was told by email.').waitFor();
    const told = await h.runtime.db('send_messages').where({ user_id: account.user_id, kind: 3, email: account.email }).select('payload');
    expect(told.map((r) => JSON.parse(String(r.payload)).subject)).toContain('Single send paused: Winter letter is refused as unauthenticated');
    await why.getByText('“Retry failed”', { exact: false }).waitFor();
    expect(await axeViolations(page)).toEqual([]);

    // What to fix: the domain's page, with the records that are missing.
    await why.getByText('DMARC (TXT record at', { exact: false }).waitFor();
    await why.getByRole('link', { name: 'acme.example' }).first().click();
    await page.waitForURL(`${b.baseUrl}/domains/${domain.id}`);
    await page.getByRole('heading', { name: 'acme.example', level: 1 }).waitFor();

    // The audit log has the pause as the service's own, naming the send and why.
    await page.goto('/audit-log');
    const entry = page.locator('tr', { hasText: 'Paused a single send' });
    await entry.getByText('The service').waitFor();
    // The figures as they stood when the service paused it (refusals still in flight came after).
    await entry.getByText(/^Winter letter: \d+ of \d+ messages refused by receiving mail servers for the sender's authentication or reputation$/).waitFor();

    // How to go on: resume, and the explanation is gone with the pause.
    await page.goto(`/single-sends/${utr}`);
    await page.locator('#send-stats').getByRole('button', { name: 'Resume' }).click();
    await page.getByText('Resumed: sending continues where it stopped.').waitFor();
    expect(await page.locator('.pause-explained').count()).toBe(0);
    expect(b.problems).toEqual([]);
  }, 120_000);
});
