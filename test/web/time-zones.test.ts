import { utcToZoned } from '../../src/lib/zoned-time';
import { addContactType, countryId, manualClock, sendingFixtures, singleSendBody, testWorker } from '../support/fixtures';
import { useHarness } from '../support/harness';
import { useSmtpSink } from '../support/smtp';
import { useTwoAccounts } from '../support/web';

const MINUTE = 60_000;
const HOUR = 3_600_000;

describe('dashboard: each recipient\'s own time zone', () => {
  const sink = useSmtpSink({ emptyBeforeEach: true });
  const h = useHarness({ SMTP_URL: () => sink.url });
  const t = useTwoAccounts(h);
  const f = sendingFixtures(h);
  let type = 0;

  beforeAll(async () => {
    type = await addContactType(h, t.alice, 'Readers');
  });

  const contactOf = (email: string) => h.runtime.db('contacts').where({ user_id: t.alice.user_id, email_key: email }).whereNull('deleted_at').first();

  test('when a contact is added with a time zone from the form then it is stored, the edit form selects it, and an unknown zone is refused beside the field', async () => {
    const form = await t.web.get('/contacts/new').expect(200);
    expect(form.text).toContain('<label for="field-time_zone">Time zone</label>');
    expect(form.text).toContain('<option value="" selected>From the country and state</option>');
    expect(form.text).toMatch(/<option value="Pacific\/Honolulu">Pacific\/Honolulu \(UTC-10:00\)<\/option>/);

    const us = await countryId(h, 'US');
    await t.web.post('/contacts/new', { contact_type_id: String(type), email: 'lani@example.org', country: String(us), time_zone: 'Pacific/Honolulu' }).expect(303);
    const lani = await contactOf('lani@example.org');
    expect(lani.time_zone).toBe('Pacific/Honolulu');
    const edit = await t.web.get(`/contacts/${lani.id}/edit`).expect(200);
    expect(edit.text).toContain('<option value="Pacific/Honolulu" selected>');
    expect(edit.text).toContain('For this contact now: <strong>Pacific/Honolulu</strong>.');

    const wrong = await t.web.post('/contacts/new', { contact_type_id: String(type), email: 'moon@example.org', country: String(us), time_zone: 'Moon/Base' }).expect(422);
    expect(wrong.text).toContain('<p class="field-error" id="time_zone-error">The selected time zone is invalid.</p>');
  });

  test('when a contact has no zone of its own then its edit form says which one a send uses (its state\'s)', async () => {
    const us = await countryId(h, 'US');
    await t.web.post('/contacts/new', { contact_type_id: String(type), email: 'la@example.org', country: String(us), state: 'California' }).expect(303);
    const edit = await t.web.get(`/contacts/${(await contactOf('la@example.org')).id}/edit`).expect(200);
    expect(edit.text).toContain('<option value="" selected>From the country and state</option>');
    expect(edit.text).toContain('For this contact now: <strong>America/Los_Angeles</strong>.');
  });

  test('when a send on each recipient\'s clock has started then its page offers the choice and counts who still waits for their local time', async () => {
    expect((await t.web.get('/single-sends/new').expect(200)).text).toContain('<input type="radio" name="schedule_type" value="2"> Send at a date and time in each recipient\'s own time zone');

    const readers = await addContactType(h, t.alice, 'Pacific');
    await f.contact(t.alice.user_id, readers, 'kiri@example.org', { time_zone: 'Pacific/Kiritimati' });
    await f.contact(t.alice.user_id, readers, 'hono@example.org', { time_zone: 'Pacific/Honolulu' });
    const clock = manualClock(new Date(Math.floor(Date.now() / MINUTE) * MINUTE));
    const local = utcToZoned(new Date(clock.now().getTime() + 10 * HOUR), 'Pacific/Honolulu');
    const body = singleSendBody({ senderId: await f.sender(t.alice.user_id), groupId: await f.group(t.alice.user_id), contactTypeId: readers, segmentId: 0 }, {
      recipient_id: [`contacts_${readers}`], schedule_type: 2, schedule_date: local.date, schedule_time: local.time.slice(0, 5),
    });
    const utr = (await h.api(t.alice).post('/single/send/create').send(body).expect(200)).body.message.utr as string;
    const { worker, close } = testWorker(h, sink.url, { now: clock.now });
    await worker.runOnce().finally(close);
    expect(sink.messages.map((m) => m.to[0])).toEqual(['kiri@example.org']);

    const page = await t.web.get(`/single-sends/${utr}`).expect(200);
    expect(page.text).toContain(`<strong>1</strong> recipient is still waiting for ${local.time.slice(0, 5)} on their own clock.`);
    expect(page.text).toContain(`${local.date} ${local.time.slice(0, 5)} <span class="muted">(in each recipient's time zone)</span>`);
  });
});
