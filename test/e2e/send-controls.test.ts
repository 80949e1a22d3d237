import { MESSAGE_STATE } from '../../src/lib/constants';
import { createWorkerRuntime } from '../../src/workers/worker-runtime';
import { countryId, newsDesk } from '../support/fixtures';
import { useHarness } from '../support/harness';
import { startSmtpSink } from '../support/smtp';
import { eventually, useBrowser, fillComposer } from './browser';

const NAMES = ['Ann', 'Bob', 'Cat', 'Dan', 'Eve', 'Fay', 'Gus', 'Hal'];

/**
 * A send's whole journey in the dashboard: draft → test send → confirm → pause → resume → completed, every recipient
 * once. The campaign's mail goes to an SMTP sink that holds the third message until the test lets it go, and the worker
 * sends one message at a time, so the send is paused half-way whatever the machine's speed.
 */
describe('dashboard in Chromium: a send drafted, tested, confirmed, paused and resumed', () => {
  const h = useHarness();
  const b = useBrowser(h);

  test('when a marketer pauses a running send and resumes it then it completes with every recipient mailed once and the test not counted', async () => {
    const account = await h.account();
    const { ctx, type } = await newsDesk(h, account, 'Readers');
    const { services } = h.runtime;
    const fr = await countryId(h, 'FR');
    for (const first of NAMES) {
      await services.contacts.add(ctx, { contact_type_id: type, email: `${first.toLowerCase()}@readers.example`, country: fr, text: { first_name: first } });
    }
    const page = await b.signedIn(account);
    await page.goto('/single-sends/new');
    await fillComposer(page, { name: 'Autumn letter', subject: 'Autumn, ((first_name))', preheader: 'Leaves and letters' });
    await page.getByLabel('Welcome').check();
    await eventually('the editor holds the template', async () => (await page.locator('#field-template_html').inputValue()).includes('Welcome aboard'));
    await page.getByLabel('Readers').first().check();

    // The test message and the campaign's first two are accepted at once; the campaign's third
    // waits in the sink until `release()`.
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let arrived = 0;
    const sink = await startSmtpSink({ beforeAccept: async () => { arrived += 1; if (arrived > 3) await released; } });
    const mailOf = (subject: string) => sink.messages.filter((m) => m.parsed.subject === subject).map((m) => m.to[0]);
    const campaignMail = () => sink.messages.filter((m) => m.parsed.subject?.startsWith('Autumn, ')).map((m) => m.to[0]);
    // The worker sends one message at a time.
    const worker = createWorkerRuntime({ ...h.runtime, config: { ...h.runtime.config, smtpUrl: sink.url } }, { pollMs: 100, batchSize: 1, lanes: 1 });
    worker.worker.start();
    try {
      await page.getByRole('button', { name: 'Save single send' }).click();
      await page.getByText('Draft saved.', { exact: false }).waitFor();
      // The draft sends nothing by itself; the test goes to the marketer only.
      await page.getByLabel('Send to').fill('me@acme.example');
      await page.getByRole('button', { name: 'Send test' }).click();
      await page.getByText('Test sent to me@acme.example.', { exact: false }).waitFor();
      await eventually('the test arrives', async () => mailOf('[Test] Autumn, Ann').length === 1);
      expect(mailOf('[Test] Autumn, Ann')).toEqual(['me@acme.example']);

      await page.getByRole('link', { name: 'Send now…' }).click();
      await page.getByText(`It goes to ${NAMES.length} recipients now.`).waitFor();
      await page.getByRole('button', { name: `Send to ${NAMES.length} recipients` }).click();
      await page.getByText('Sending has started.').waitFor();
      const stats = page.locator('#send-stats');
      await eventually('two messages went out and the third is in flight', async () => campaignMail().length === 2 && arrived === 4);

      await stats.getByRole('button', { name: 'Pause' }).click();
      await page.getByText('Paused: nothing more is sent until you resume.', { exact: false }).waitFor();
      await stats.getByText('Paused', { exact: true }).waitFor();
      // The page says who paused it and how to go on.
      const why = page.locator('.pause-explained');
      await why.getByText(/ paused it on .*Nothing more is sent until it is resumed/).waitFor();
      await why.getByText('Press “Resume” above: sending continues where it stopped', { exact: false }).waitFor();
      // What was in flight finishes; the rest waits parked in the ledger, none of it queued to go.
      release();
      const send = await h.runtime.db('single_sends').where({ user_id: account.user_id, single_send_name: 'Autumn letter' }).first('id');
      const states = async () => (await h.runtime.db('send_messages').where({ single_send_id: send.id }).select('state')).map((r) => Number(r.state));
      await eventually('the message in flight is recorded', async () => !(await states()).includes(MESSAGE_STATE.sending));
      expect(campaignMail()).toHaveLength(3);
      expect((await states()).filter((state) => state === MESSAGE_STATE.paused)).toHaveLength(NAMES.length - 3);
      expect((await states()).filter((state) => state === MESSAGE_STATE.queued)).toHaveLength(0);

      await stats.getByRole('button', { name: 'Resume' }).click();
      await stats.getByText('Sent', { exact: true }).waitFor({ timeout: 30_000 });
      await stats.locator('.stat', { hasText: 'Delivered' }).getByText(String(NAMES.length), { exact: true }).waitFor();
    } finally {
      release();
      await worker.close();
      await sink.close();
    }
    // Every recipient exactly once; the test message is not among the delivered.
    expect(campaignMail().sort()).toEqual(NAMES.map((first) => `${first.toLowerCase()}@readers.example`).sort());
    for (const first of NAMES) expect(mailOf(`Autumn, ${first}`)).toEqual([`${first.toLowerCase()}@readers.example`]);
    expect(b.problems).toEqual([]);
  }, 120_000);
});
