import { utcToZoned, zonedToUtc } from '../../src/lib/zoned-time';
import { useHarness, TestAccount } from '../support/harness';
import { addContact, addContactType, countryId, manualClock, sendingFixtures, singleSendBody, testWorker } from '../support/fixtures';
import { useSmtpSink } from '../support/smtp';

const MINUTE = 60_000;
const HOUR = 3_600_000;

describe('each recipient\'s own time zone: the contact\'s zone and sends at a local time', () => {
  const sink = useSmtpSink({ emptyBeforeEach: true });
  const h = useHarness({ SMTP_URL: () => sink.url });
  const f = sendingFixtures(h);
  let alice: TestAccount;
  let type: number;

  beforeEach(async () => {
    alice = await h.account();
    type = await addContactType(h, alice, 'Everyone');
  });

  const details = async (id: number) => (await h.api(alice).get(`/contacts/details?contact_id=${id}`).expect(200)).body.message.contact;
  const sendDetails = async (utr: string) => (await h.api(alice).get(`/single-send/details?utr=${utr}`).expect(200)).body.message.singleSend[0];

  /** A single send to the account's contact type, created through the API; answers its utr and id. */
  async function createSend(overrides: Record<string, unknown>): Promise<{ utr: string; id: number }> {
    const { sender: senderId, group: groupId } = await f.basics(alice);
    const body = singleSendBody({ senderId, groupId, contactTypeId: type, segmentId: 0 }, { recipient_id: [`contacts_${type}`], template_html: '<p>Good morning ((first_name))</p>', ...overrides });
    const res = await h.api(alice).post('/single/send/create').send(body);
    if (res.status !== 200) throw new Error(`${res.status} ${res.text}`);
    const utr = res.body.message.utr as string;
    const row = await h.runtime.db('single_sends').where({ utr }).first('id');
    return { utr, id: Number(row.id) };
  }

  test('when a contact is added or updated with a time zone then its details and the list show it by its current name; an unknown zone is a 422', async () => {
    const us = await countryId(h, 'US');
    const id = await addContact(h, alice, { contact_type_id: type, email: 'kolkata@example.org', country: us, time_zone: 'Asia/Calcutta' });
    expect(await details(id)).toMatchObject({ email: 'kolkata@example.org', time_zone: 'Asia/Kolkata' });
    const listed = (await h.api(alice).get('/contacts/list').expect(200)).body.message.contacts;
    expect(listed.find((c: { id: number }) => c.id === id)).toMatchObject({ time_zone: 'Asia/Kolkata' });

    const update = { contact_id: id, contact_type_id: type, email: 'kolkata@example.org', country: us };
    const wrong = await h.api(alice).post('/contacts/update').send({ ...update, time_zone: 'Mars/Olympus_Mons' }).expect(422);
    expect(wrong.body).toEqual({ status: 'failed', errors: { time_zone: ['The selected time zone is invalid.'] } });
    // Absent keeps it; empty clears it.
    await h.api(alice).post('/contacts/update').send(update).expect(200);
    expect((await details(id)).time_zone).toBe('Asia/Kolkata');
    await h.api(alice).post('/contacts/update').send({ ...update, time_zone: '' }).expect(200);
    expect((await details(id)).time_zone).toBeNull();
    const added = await h.api(alice).post('/contacts/add').send({ contact_type_id: type, email: 'nowhere@example.org', country: us, time_zone: 'Nowhere/Town' }).expect(422);
    expect(added.body.errors).toEqual({ time_zone: ['The selected time zone is invalid.'] });
    // A contact's own key now: no custom field may take the name.
    const field = await h.api(alice).post('/custom-fields/save').field('field_name', 'time_zone').field('field_type', 'text').expect(422);
    expect(Object.keys(field.body.errors)).toEqual(['field_name']);
  });

  test('when a CSV has a TIMEZONE column (as Mailchimp exports it) then each contact gets its zone; an unknown zone skips its row', async () => {
    const csv = ['Email Address,First Name,TIMEZONE', 'ny@example.org,Nia,America/New_York', 'none@example.org,Noor,', 'moon@example.org,Mo,Moon/Base'].join('\n');
    const res = await h.api(alice).post('/contacts/upload-csv').field('contact_type_id', String(type)).attach('file', Buffer.from(csv), 'members.csv').expect(200);
    expect(res.body.summary).toMatchObject({ rows: 3, created: 2, skipped: 1, errors: [{ row: 4, reason: 'The selected time zone is invalid.' }] });
    const contacts = (await h.api(alice).get('/contacts/list').expect(200)).body.message.contacts as Array<{ email: string; time_zone: string | null }>;
    expect(Object.fromEntries(contacts.map((c) => [c.email, c.time_zone]))).toEqual({ 'ny@example.org': 'America/New_York', 'none@example.org': null });
  });

  test('when a send goes at a local time then a recipient at UTC+14 gets it at once and one at UTC−10 ten hours later, and the send runs until the last', async () => {
    // The worker's clock is moved by the test; the API's checks use the real one.
    const clock = manualClock(new Date(Math.floor(Date.now() / MINUTE) * MINUTE));
    // The local time that comes to Honolulu ten hours from now came to Kiritimati 14 hours ago.
    const local = utcToZoned(new Date(clock.now().getTime() + 10 * HOUR), 'Pacific/Honolulu');
    await f.contact(alice.user_id, type, 'kiritimati@example.org', { first_name: 'Kiri', time_zone: 'Pacific/Kiritimati' });
    await f.contact(alice.user_id, type, 'honolulu@example.org', { first_name: 'Lani', time_zone: 'Pacific/Honolulu' });
    const send = await createSend({ schedule_type: 2, schedule_date: local.date, schedule_time: local.time.slice(0, 5) });
    expect(await sendDetails(send.utr)).toMatchObject({ status: 1, schedule_type: 2, schedule_date: local.date, schedule_time: local.time });

    const run = async () => {
      const { worker, close } = testWorker(h, sink.url, { now: clock.now });
      await worker.runOnce().finally(close);
    };
    await run();
    expect(sink.messages.map((m) => m.to[0])).toEqual(['kiritimati@example.org']);
    expect(await sendDetails(send.utr)).toMatchObject({ status: 2, triggered: 2, delivered: 1 });
    const queued = (await h.api(alice).get(`/single-send/recipients?utr=${send.utr}&status=queued`).expect(200)).body.message.recipients;
    expect(queued.map((r: { email: string }) => r.email)).toEqual(['honolulu@example.org']);

    // A minute before its local time: still waiting.
    clock.advance(10 * HOUR - MINUTE);
    await run();
    expect(sink.messages).toHaveLength(1);
    expect((await sendDetails(send.utr)).status).toBe(2);

    clock.advance(MINUTE);
    await run();
    expect(sink.messages.map((m) => m.to[0])).toEqual(['kiritimati@example.org', 'honolulu@example.org']);
    expect(sink.messages[1].raw).toContain('Subject: News for Lani');
    expect(await sendDetails(send.utr)).toMatchObject({ status: 3, triggered: 2, delivered: 2 });
  });

  test('when a contact has no zone of its own then it is its state\'s in a country of several zones, else its country\'s, else the account\'s', async () => {
    await h.runtime.db('accounts').where({ id: alice.user_id }).update({ time_zone: 'Asia/Tokyo' });
    const [us, de] = [await countryId(h, 'US'), await countryId(h, 'DE')];
    await f.contact(alice.user_id, type, 'la@example.org', { country: us, state: 'California' });
    await f.contact(alice.user_id, type, 'texas@example.org', { country: us, state: 'TX' });
    await f.contact(alice.user_id, type, 'berlin@example.org', { country: de });
    await f.contact(alice.user_id, type, 'own@example.org', { country: us, state: 'California', time_zone: 'Europe/Lisbon' });
    await f.contact(alice.user_id, type, 'unknown@example.org');
    const date = utcToZoned(new Date(Date.now() + 3 * 24 * HOUR), 'UTC').date;
    const send = await createSend({ schedule_type: 2, schedule_date: date, schedule_time: '09:00' });

    // The send starts when 09:00 first comes anywhere (UTC+14); each message waits for its own.
    const start = zonedToUtc(date, '09:00:00', 'Pacific/Kiritimati');
    const { worker, close } = testWorker(h, sink.url, { now: () => start });
    await worker.runOnce().finally(close);
    expect(sink.messages).toHaveLength(0);
    expect((await sendDetails(send.utr)).status).toBe(2);
    const due = Object.fromEntries((await f.ledger(send.id)).map((r) => [r.email, new Date(r.available_at as string).toISOString()]));
    const at = (zone: string) => zonedToUtc(date, '09:00:00', zone).toISOString();
    expect(due).toEqual({
      'la@example.org': at('America/Los_Angeles'),
      'texas@example.org': at('America/Chicago'),
      'berlin@example.org': at('Europe/Berlin'),
      'own@example.org': at('Europe/Lisbon'),
      'unknown@example.org': at('Asia/Tokyo'),
    });
  });

  test('when the local time has passed in every zone then the send is refused with a 422 on schedule_date; passed only in some, it is accepted', async () => {
    await f.contact(alice.user_id, type, 'someone@example.org');
    const twoDaysAgo = utcToZoned(new Date(Date.now() - 2 * 24 * HOUR), 'UTC');
    const res = await h.api(alice)
      .post('/single/send/create')
      .send(singleSendBody({ senderId: await f.sender(alice.user_id), groupId: await f.group(alice.user_id), contactTypeId: type, segmentId: 0 }, {
        recipient_id: [`contacts_${type}`], schedule_type: 2, schedule_date: twoDaysAgo.date, schedule_time: twoDaysAgo.time,
      }))
      .expect(422);
    expect(res.body).toEqual({ status: 'failed', errors: { schedule_date: ['The schedule date and time have already passed in every time zone.'] } });

    // Six hours ago on a UTC clock is still ahead at UTC−12: on the account's (UTC) clock it is refused.
    const sixHoursAgo = utcToZoned(new Date(Date.now() - 6 * HOUR), 'UTC');
    const local = await createSend({ schedule_type: 2, schedule_date: sixHoursAgo.date, schedule_time: sixHoursAgo.time });
    expect((await sendDetails(local.utr)).status).toBe(1);
    const body = singleSendBody({ senderId: await f.sender(alice.user_id), groupId: await f.group(alice.user_id), contactTypeId: type, segmentId: 0 }, {
      recipient_id: [`contacts_${type}`], schedule_type: 1, schedule_date: sixHoursAgo.date, schedule_time: sixHoursAgo.time,
    });
    expect((await h.api(alice).post('/single/send/create').send(body).expect(422)).body.errors).toEqual({ schedule_date: ['The schedule date must be a date after now.'] });
    // Anything but 0, 1 and 2 is outside the list.
    expect((await h.api(alice).post('/single/send/create').send({ ...body, schedule_type: 3 }).expect(422)).body.errors).toEqual({ schedule_type: ['The selected schedule type is invalid.'] });
  });

  test('when a draft goes on each recipient\'s clock then its plan counts who has no zone (the account\'s for them) and when the first and last messages go; another draft has none', async () => {
    await f.contact(alice.user_id, type, 'kiri@example.org', { time_zone: 'Pacific/Kiritimati' });
    await f.contact(alice.user_id, type, 'paris@example.org', { country: await countryId(h, 'FR') });
    await f.contact(alice.user_id, type, 'none1@example.org', {});
    await f.contact(alice.user_id, type, 'none2@example.org', {});
    const now = new Date('2031-03-01T12:00:00Z');
    const { services, db } = h.runtime;
    const ctx = { userId: alice.user_id };
    const local = await createSend({ schedule_type: 2, schedule_date: '2031-03-02', schedule_time: '09:00' });
    await db('single_sends').where({ id: local.id }).update({ status: 0, due_at: null });
    await db('accounts').where({ id: alice.user_id }).update({ time_zone: 'America/New_York' });
    expect(await services.sendControls.localTimePlan(ctx, local.utr, now)).toEqual({
      withoutZone: 2,
      accountZone: 'America/New_York',
      // Kiritimati (UTC+14) first; the two without a zone, on New York's clock (UTC−5), last.
      first: '2031-03-01T19:00:00.000Z',
      last: '2031-03-02T14:00:00.000Z',
    });
    // Where 09:00 has passed already it goes at once: the first is now.
    expect(await services.sendControls.localTimePlan(ctx, local.utr, new Date('2031-03-01T20:00:00Z'))).toMatchObject({ first: '2031-03-01T20:00:00.000Z', last: '2031-03-02T14:00:00.000Z' });
    const plain = await createSend({ schedule_type: 1, schedule_date: '2031-03-02', schedule_time: '09:00' });
    await db('single_sends').where({ id: plain.id }).update({ status: 0, due_at: null });
    expect(await services.sendControls.localTimePlan(ctx, plain.utr, now)).toBeUndefined();
  });
});
