import { utcToZoned } from '../../src/lib/zoned-time';
import { addContactType, countryId, manualClock, newsDesk, sendingFixtures, singleSendBody, testWorker } from '../support/fixtures';
import { formatDateTime } from '../../src/web/views';
import { useHarness } from '../support/harness';
import { startSmtpSink } from '../support/smtp';
import { axeViolations } from './axe';
import { useBrowser, widths } from './browser';

const MINUTE = 60_000;
const HOUR = 3_600_000;

/**
 * Each recipient's own time zone in the dashboard: a contact's zone chosen from the keyboard on
 * a phone-sized screen, and a send on each recipient's clock whose page counts who still waits.
 */
describe('dashboard in Chromium: time zones', () => {
  const h = useHarness();
  const b = useBrowser(h);

  test('when a contact\'s time zone is chosen with the keyboard at 390 px then it is saved, and a local-time send\'s page counts who waits', async () => {
    const account = await h.account();
    const type = await addContactType(h, account, 'Pacific readers');
    const page = await b.page();
    await page.setViewportSize({ width: 390, height: 844 });
    await b.signIn(page, account);

    await page.goto('/contacts/new');
    await page.getByLabel('Contact type').selectOption(String(type));
    await page.getByLabel('Email', { exact: true }).fill('lani@example.org');
    await page.getByLabel('Country').selectOption({ label: 'United States' });
    const zone = page.getByLabel('Time zone');
    await zone.focus();
    await page.keyboard.type('Pacific/Honolulu');
    expect(await zone.inputValue()).toBe('Pacific/Honolulu');
    expect(await axeViolations(page)).toEqual([]);
    const wide = await widths(page).then(({ scroll, inner }) => scroll > inner);
    expect(wide).toBe(false);
    await page.getByRole('button', { name: 'Save contact' }).focus();
    await page.keyboard.press('Enter');
    await page.waitForURL(`${b.baseUrl}/contacts`);
    const lani = await h.runtime.db('contacts').where({ user_id: account.user_id, email_key: 'lani@example.org' }).first('time_zone');
    expect(lani.time_zone).toBe('Pacific/Honolulu');

    // A send at a local time ten hours from now in Honolulu: Kiritimati's reader has it at once.
    const f = sendingFixtures(h);
    await f.contact(account.user_id, type, 'kiri@example.org', { time_zone: 'Pacific/Kiritimati' });
    const clock = manualClock(new Date(Math.floor(Date.now() / MINUTE) * MINUTE));
    const local = utcToZoned(new Date(clock.now().getTime() + 10 * HOUR), 'Pacific/Honolulu');
    const body = singleSendBody({ senderId: await f.sender(account.user_id), groupId: await f.group(account.user_id), contactTypeId: type, segmentId: 0 }, {
      recipient_id: [`contacts_${type}`], schedule_type: 2, schedule_date: local.date, schedule_time: local.time.slice(0, 5),
    });
    const utr = (await h.api(account).post('/single/send/create').send(body).expect(200)).body.message.utr as string;
    const sink = await startSmtpSink();
    try {
      const { worker, close } = testWorker(h, sink.url, { now: clock.now });
      await worker.runOnce().finally(close);
      expect(sink.messages.map((m) => m.to[0])).toEqual(['kiri@example.org']);
    } finally {
      await sink.close();
    }
    await page.goto(`/single-sends/${utr}`);
    await page.locator('#local-time-waiting').getByText(`1 recipient is still waiting for ${local.time.slice(0, 5)} on their own clock.`).waitFor();
    expect(await axeViolations(page)).toEqual([]);
    expect(b.problems).toEqual([]);
  });

  test('when a send on each recipient\'s clock is confirmed then the page says how many have no zone and get the account\'s, and when the first and last messages go', async () => {
    const account = await h.account();
    const { ctx, sender, group, type } = await newsDesk(h, account, 'Everywhere');
    const f = sendingFixtures(h);
    await f.contact(account.user_id, type, 'kiri@example.org', { time_zone: 'Pacific/Kiritimati' });
    await f.contact(account.user_id, type, 'paris@example.org', { country: await countryId(h, 'FR') });
    await f.contact(account.user_id, type, 'nowhere@example.org', {});
    await f.contact(account.user_id, type, 'nobody@example.org', {});
    // The day after tomorrow at 09:00: still ahead everywhere, Kiritimati's (UTC+14) first.
    const date = new Date(Date.now() + 2 * 24 * HOUR).toISOString().slice(0, 10);
    const utr = await h.runtime.services.singleSends.create(ctx, {
      template_id: 1, template_json: null, template_html: '<html><body><p>Good morning</p></body></html>',
      sender_id: sender, unsubscribe_group_id: group, single_send_name: 'Morning letter', subject: 'Good morning', preheader: '',
      recipient_id: [{ id: String(type), table: 'contacts_' }], exclude_specific_recipient_id: [],
      schedule_type: 2, schedule_date: date, schedule_time: '09:00:00',
    }, { draft: true });

    const page = await b.signedIn(account);
    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto(`/single-sends/${utr}`);
    await page.getByRole('link', { name: /^Schedule for / }).click();
    const plan = page.locator('.local-time-plan');
    const zone = (await h.runtime.db('accounts').where({ id: account.user_id }).first('time_zone')).time_zone as string;
    const first = formatDateTime(new Date(`${date}T09:00:00+14:00`).toISOString(), zone);
    const last = formatDateTime(new Date(`${date}T09:00:00Z`).toISOString(), zone);
    await plan.getByText(`Each recipient gets it at 09:00 on their own clock: the first ${first}, the last ${last} (${zone}).`).waitFor();
    await plan.getByText(`2 recipients have no time zone (none of their own, nor one from their state or country): they get the account’s, ${zone}, so they receive it at 09:00 there.`).waitFor();
    expect(await axeViolations(page)).toEqual([]);
    const { scroll, inner } = await widths(page);
    expect(scroll).toBeLessThanOrEqual(inner);

    await page.getByRole('button', { name: 'Schedule for 4 recipients' }).click();
    await page.getByText('Scheduled.', { exact: false }).waitFor();
    expect(b.problems).toEqual([]);
  });
});
