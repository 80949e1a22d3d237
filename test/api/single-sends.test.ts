import { parseRecipientRef } from '../../src/services/campaigns/single-sends';
import { transitionSingleSends } from '../../src/services/shared/single-send-state';
import { addContactType, addGroup, addSegment, addSender, Audience, audienceOf, berlin, Place, PLAIN_TIME, singleSendBody, UUID } from '../support/fixtures';
import { expectBulkIdRules, NOT_FOUND } from '../support/expectations';
import { TestAccount, TIMESTAMP, useHarness } from '../support/harness';

describe('single sends', () => {
  const h = useHarness();
  let alice: TestAccount;
  let bob: TestAccount;
  let place: Place;
  let a: Audience;
  let b: Audience;

  beforeAll(async () => {
    alice = await h.account();
    bob = await h.account();
    place = await berlin(h);
    a = await audienceOf(h, alice, place);
    b = await audienceOf(h, bob, place);
  });

  async function create(body: Record<string, unknown> = {}, account = alice, audience = a): Promise<string> {
    const res = await h.api(account).post('/single/send/create').send(singleSendBody(audience, body)).expect(200);
    return res.body.message.utr;
  }

  async function details(utr: string, account = alice) {
    const res = await h.api(account).get(`/single-send/details?utr=${utr}`).expect(200);
    expect(res.body.message.singleSend).toHaveLength(1);
    return res.body.message.singleSend[0];
  }

  const row = (utr: string) => h.runtime.db('single_sends').where({ utr }).first();
  const setStatus = (utr: string, status: number) => h.runtime.db('single_sends').where({ utr }).update({ status });

  test('when a send is created then it is ready, due now, and its details are an array of one', async () => {
    const before = Date.now();
    const res = await h.api(alice).post('/single/send/create').send(singleSendBody(a)).expect(200);
    expect(res.body).toEqual({ status: 'success', message: { utr: expect.stringMatching(UUID) } });
    const utr = res.body.message.utr;

    const sender = (await h.api(alice).get(`/sender/details?sender_id=${a.senderId}`)).body.message.sender;
    expect(await details(utr)).toEqual({
      id: expect.any(Number),
      user_id: alice.user_id,
      template_id: 2,
      recipient_id: [
        { id: String(a.contactTypeId), table: 'contacts_' },
        { id: String(a.segmentId), table: 'segments_' },
      ],
      exclude_specific_recipient_id: [],
      sender_id: a.senderId,
      unsubscribe_group_id: a.groupId,
      single_send_name: 'November news',
      from_sender: sender.from_email,
      reply_to: 'replies@example.com',
      archive: 0,
      resend_of: null,
      relay_id: null,
      sender_name: 'News Desk',
      sender_address: expect.stringMatching(/^Unter den Linden 1, Floor 2, 10115 .+, Berlin, Germany$/),
      subject: 'News for ((first_name))',
      preheader: 'What happened this month',
      schedule_type: 0,
      schedule_date: '0000-00-00',
      schedule_time: '00:00:00',
      status: 1,
      utr,
      template_json: null,
      template_html: null,
      triggered: 0,
      delivered: 0,
      unique_opens: 0,
      total_opens: 0,
      bounces: 0,
      unsubscribes: 0,
      failed: 0,
      unique_clicks: 0,
      total_clicks: 0,
      template_errors: 0,
      track_opens: 1,
      track_clicks: 1,
      unique_open_token: {},
      ab: null,
      sent_at: null,
      created_at: expect.stringMatching(TIMESTAMP),
      updated_at: expect.stringMatching(TIMESTAMP),
    });
    const due = new Date((await row(utr)).due_at).getTime();
    expect(due).toBeGreaterThanOrEqual(before - 1000);
    expect(due).toBeLessThanOrEqual(Date.now() + 1000);
  });

  test('when the body is multipart with indexed fields then it is read like JSON', async () => {
    const res = await h.api(alice).post('/single/send/create')
      .field('template_id', '1')
      .field('template_html', '<p>Hello ((first_name))</p>')
      .field('sender_id', String(a.senderId))
      .field('unsubscribe_group_id', String(a.groupId))
      .field('single_send_name', 'Multipart')
      .field('subject', 'S')
      .field('preheader', 'P')
      .field('recipient_id[0]', `contacts_${a.contactTypeId}`)
      .field('exclude_specific_recipient_id[0]', `segments_${a.segmentId}`)
      .field('schedule_type', '0')
      .expect(200);
    expect(await details(res.body.message.utr)).toMatchObject({
      template_id: 1,
      template_html: '<p>Hello ((first_name))</p>',
      template_json: null,
      recipient_id: [{ id: String(a.contactTypeId), table: 'contacts_' }],
      exclude_specific_recipient_id: [{ id: String(a.segmentId), table: 'segments_' }],
    });
  });

  test('when required fields are missing then the seven of the reference and template_id are reported together', async () => {
    const res = await h.api(alice).post('/single/send/create').send({}).expect(422);
    expect(res.body).toEqual({
      status: 'failed',
      errors: {
        template_id: ['The template id field is required.'],
        single_send_name: ['The single send name field is required.'],
        sender_id: ['The sender id field is required.'],
        subject: ['The subject field is required.'],
        preheader: ['The preheader field is required.'],
        unsubscribe_group_id: ['The unsubscribe group id field is required.'],
        schedule_type: ['The schedule type field is required.'],
        recipient_id: ['The recipient id field is required.'],
      },
    });
  });

  test('when the sender is not verified then 422 on sender_id and nothing is saved', async () => {
    const unverified = await addSender(h, alice, place);
    const before = (await h.api(alice).get('/single-send/list')).body.message.singleSends.length;
    const res = await h.api(alice).post('/single/send/create').send(singleSendBody(a, { sender_id: unverified })).expect(422);
    expect(res.body).toEqual({
      status: 'failed',
      errors: { sender_id: ['The selected sender id is not verified yet; open the link in its verification mail first.'] },
    });
    expect((await h.api(alice).get('/single-send/list')).body.message.singleSends).toHaveLength(before);
  });

  test("when the template is unknown or references belong to another account then each field says so", async () => {
    const res = await h.api(alice).post('/single/send/create').send(singleSendBody(a, {
      template_id: 99,
      sender_id: b.senderId,
      unsubscribe_group_id: b.groupId,
      recipient_id: [`contacts_${a.contactTypeId}`, `segments_${b.segmentId}`],
      exclude_specific_recipient_id: [`contacts_${b.contactTypeId}`],
    })).expect(422);
    expect(res.body).toEqual({
      status: 'failed',
      errors: {
        template_id: ['The selected template id is invalid.'],
        sender_id: ['The selected sender id is invalid.'],
        unsubscribe_group_id: ['The selected unsubscribe group id is invalid.'],
        recipient_id: ['The selected recipient id is invalid.'],
        exclude_specific_recipient_id: ['The selected exclude specific recipient id is invalid.'],
      },
    });
    const otherType = await h.api(alice).post('/single/send/create').send(singleSendBody(a, { recipient_id: [`contacts_${b.contactTypeId}`] })).expect(422);
    expect(otherType.body.errors).toEqual({ recipient_id: ['The selected recipient id is invalid.'] });
  });

  test('when a referenced contact type, segment or sender is deleted then it can no longer be used', async () => {
    const typeId = await addContactType(h, alice, 'Short lived');
    const segmentId = await addSegment(h, alice, typeId, 'Short lived');
    await h.runtime.db('segments').where({ id: segmentId }).update({ deleted_at: new Date().toISOString() });
    await h.api(alice).delete(`/contacts-type/delete?contact_type_id=${typeId}`).expect(200);
    const res = await h.api(alice).post('/single/send/create').send(singleSendBody(a, { recipient_id: [`contacts_${typeId}`] })).expect(422);
    expect(res.body.errors).toEqual({ recipient_id: ['The selected recipient id is invalid.'] });
    const seg = await h.api(alice).post('/single/send/create').send(singleSendBody(a, { recipient_id: [`segments_${segmentId}`] })).expect(422);
    expect(seg.body.errors).toEqual({ recipient_id: ['The selected recipient id is invalid.'] });
    const senderId = await addSender(h, alice, place);
    await h.runtime.db('senders').where({ id: senderId }).update({ is_verified: 1 });
    await h.api(alice).delete(`/sender/delete?sender_id=${senderId}`).expect(200);
    const sender = await h.api(alice).post('/single/send/create').send(singleSendBody(a, { sender_id: senderId })).expect(422);
    expect(sender.body.errors).toEqual({ sender_id: ['The selected sender id is invalid.'] });
  });

  test('when recipient entries are malformed then 422 says the format is invalid', async () => {
    for (const bad of [['lists_1'], ['contacts_'], ['contacts_0'], ['contacts_1x'], [{ id: 1 }]]) {
      const res = await h.api(alice).post('/single/send/create').send(singleSendBody(a, { recipient_id: bad })).expect(422);
      expect(res.body.errors).toEqual({ recipient_id: ['The recipient id format is invalid.'] });
    }
    const comma = await h.api(alice).post('/single/send/create')
      .send(singleSendBody(a, { recipient_id: `contacts_${a.contactTypeId}, segments_${a.segmentId}, contacts_${a.contactTypeId}` }))
      .expect(200);
    expect((await details(comma.body.message.utr)).recipient_id).toEqual([
      { id: String(a.contactTypeId), table: 'contacts_' },
      { id: String(a.segmentId), table: 'segments_' },
    ]);
  });

  test('when both template_json and template_html are given then 422: only one may be', async () => {
    const res = await h.api(alice).post('/single/send/create')
      .send(singleSendBody(a, { template_id: 1, template_json: '{"blocks":[]}', template_html: '<p>x</p>' }))
      .expect(422);
    expect(res.body.errors).toEqual({ template_json: ['The template json field prohibits template html from being present.'] });
    const json = await create({ template_id: 1, template_json: '{"blocks":[]}' });
    expect(await details(json)).toMatchObject({ template_json: '{"blocks":[]}', template_html: null });
    const object = await create({ template_id: 1, template_json: { version: 1, blocks: [{ type: 'text' }] } });
    expect(JSON.parse((await details(object)).template_json)).toEqual({ version: 1, blocks: [{ type: 'text' }] });
  });

  test('when the schedule is more than a minute in the past then 422 on schedule_date and nothing is saved or sent', async () => {
    const before = Number((await h.runtime.db('single_sends').where({ user_id: alice.user_id }).count({ n: '*' }).first())?.n);
    const past = new Date(Date.now() - 5 * 60_000);
    const [date, time] = past.toISOString().slice(0, 16).split('T');
    const res = await h.api(alice).post('/single/send/create').send(singleSendBody(a, { schedule_type: 1, schedule_date: date, schedule_time: time })).expect(422);
    expect(res.body).toEqual({ status: 'failed', errors: { schedule_date: ['The schedule date must be a date after now.'] } });
    expect(Number((await h.runtime.db('single_sends').where({ user_id: alice.user_id }).count({ n: '*' }).first())?.n)).toBe(before);
    // Within the minute's grace (a form that took a while) it is still accepted, and due at once.
    const [nowDate, nowTime] = new Date().toISOString().slice(0, 16).split('T');
    await create({ schedule_type: 1, schedule_date: nowDate, schedule_time: nowTime });
  });

  test('when scheduled then date and time are required and valid, and due_at is read in the account time zone', async () => {
    const missing = await h.api(alice).post('/single/send/create').send(singleSendBody(a, { schedule_type: 1 })).expect(422);
    expect(missing.body.errors).toEqual({
      schedule_date: ['The schedule date field is required when schedule type is 1.'],
      schedule_time: ['The schedule time field is required when schedule type is 1.'],
    });
    const bad = await h.api(alice).post('/single/send/create')
      .send(singleSendBody(a, { schedule_type: 1, schedule_date: '2026-02-30', schedule_time: '25:00' }))
      .expect(422);
    expect(bad.body.errors).toEqual({
      schedule_date: ['The schedule date does not match the format Y-m-d.'],
      schedule_time: ['The schedule time must be a time such as 09:30 or 09:30:00.'],
    });
    const type = await h.api(alice).post('/single/send/create').send(singleSendBody(a, { schedule_type: 'soon' })).expect(422);
    expect(type.body.errors).toEqual({ schedule_type: ['The selected schedule type is invalid.'] });

    const utc = await create({ schedule_type: 1, schedule_date: '2027-07-01', schedule_time: '09:30' });
    expect(await details(utc)).toMatchObject({ schedule_type: 1, schedule_date: '2027-07-01', schedule_time: '09:30:00', status: 1 });
    expect(new Date((await row(utc)).due_at).toISOString()).toBe('2027-07-01T09:30:00.000Z');

    const carol = await h.account();
    await h.runtime.db('accounts').where({ id: carol.user_id }).update({ time_zone: 'Europe/Berlin' });
    const c = await audienceOf(h, carol, place);
    const berlinSummer = await create({ schedule_type: '1', schedule_date: '2027-07-01', schedule_time: '09:30:00' }, carol, c);
    expect(new Date((await row(berlinSummer)).due_at).toISOString()).toBe('2027-07-01T07:30:00.000Z');
    const berlinWinter = await create({ schedule_type: 1, schedule_date: '2027-01-15', schedule_time: '18:00:00' }, carol, c);
    expect(new Date((await row(berlinWinter)).due_at).toISOString()).toBe('2027-01-15T17:00:00.000Z');

    const immediate = await create({ schedule_type: 0, schedule_date: '2027-01-15', schedule_time: '18:00:00' });
    expect(await details(immediate)).toMatchObject({ schedule_type: 0, schedule_date: '0000-00-00', schedule_time: '00:00:00' });
  });

  test('when the account time zone changes then a scheduled send keeps its instant and shows it on the new clock', async () => {
    const erin = await h.account();
    await h.runtime.db('accounts').where({ id: erin.user_id }).update({ time_zone: 'Europe/Berlin' });
    const e = await audienceOf(h, erin, place);
    const utr = await create({ schedule_type: 1, schedule_date: '2027-07-01', schedule_time: '23:30' }, erin, e);
    expect(await details(utr, erin)).toMatchObject({ schedule_date: '2027-07-01', schedule_time: '23:30:00' });

    await h.runtime.services.accounts.updateSettings(erin.user_id, { name: 'Erin', time_zone: 'Asia/Tokyo' });
    // 23:30 in Berlin (UTC+2 in summer) is 21:30 UTC, 06:30 the next day in Tokyo.
    expect(new Date((await row(utr)).due_at).toISOString()).toBe('2027-07-01T21:30:00.000Z');
    expect(await details(utr, erin)).toMatchObject({ schedule_type: 1, schedule_date: '2027-07-02', schedule_time: '06:30:00' });
    const listed = (await h.api(erin).get('/single-send/list').expect(200)).body.message.singleSends;
    expect(listed.find((s: { utr: string }) => s.utr === utr)).toMatchObject({ schedule_date: '2027-07-02', schedule_time: '06:30:00' });

    // A copy keeps the schedule as the account's clock shows it now.
    await h.api(erin).get(`/single/send/duplicate?utr=${utr}`).expect(200);
    const [copy] = (await h.api(erin).get('/single-send/list')).body.message.singleSends;
    expect(copy).toMatchObject({ status: 0, schedule_date: '2027-07-02', schedule_time: '06:30:00' });
  });

  test('when listed then every live send of the account comes newest first', async () => {
    const dave = await h.account();
    const d = await audienceOf(h, dave, place);
    const first = await create({ single_send_name: 'First' }, dave, d);
    const second = await create({ single_send_name: 'Second' }, dave, d);
    const res = await h.api(dave).get('/single-send/list').expect(200);
    expect(res.body.status).toBe('success');
    expect(res.body.message.singleSends.map((s: { utr: string }) => s.utr)).toEqual([second, first]);
    expect(res.body.message.singleSends[0]).toEqual(await details(second, dave));
  });

  test('when updated then the fields change, it is ready again and keeps its utr', async () => {
    const utr = await create({ single_send_name: 'Draft' });
    const res = await h.api(alice).post('/single/send/update')
      .send({ ...singleSendBody(a, { single_send_name: 'Final', subject: 'New subject', recipient_id: [`segments_${a.segmentId}`] }), utr })
      .expect(200);
    expect(res.body).toEqual({ status: 'success', message: { utr } });
    expect(await details(utr)).toMatchObject({ single_send_name: 'Final', subject: 'New subject', status: 1, recipient_id: [{ id: String(a.segmentId), table: 'segments_' }] });

    const missing = await h.api(alice).post('/single/send/update').send({ single_send_name: 'x' }).expect(422);
    expect(Object.keys(missing.body.errors).sort()).toEqual(
      ['preheader', 'recipient_id', 'schedule_type', 'sender_id', 'subject', 'template_id', 'unsubscribe_group_id', 'utr'],
    );
    expect(missing.body.errors.utr).toEqual(['The utr field is required.']);
  });

  test('when a send is sending or sent then update and delete are refused with 409 and it is unchanged', async () => {
    const utr = await create({ single_send_name: 'Started' });
    const update = () => h.api(alice).post('/single/send/update').send({ ...singleSendBody(a, { single_send_name: 'Changed' }), utr });
    await setStatus(utr, 2);
    expect((await update().expect(409)).body).toEqual({
      status: 'failed',
      errors: 'This single send is sending and can no longer be changed; duplicate it to send a changed copy.',
    });
    expect((await h.api(alice).delete(`/single/send/delete?utr=${utr}`).expect(409)).body).toEqual({
      status: 'failed',
      errors: 'This single send is sending and cannot be deleted; wait until it has completed.',
    });
    await setStatus(utr, 3);
    expect((await update().expect(409)).body.errors).toBe('This single send has been sent and can no longer be changed; duplicate it to send a changed copy.');
    expect((await h.api(alice).delete(`/single/send/delete?utr=${utr}`).expect(409)).body.errors).toBe(
      'This single send has been sent and is kept for its statistics; it cannot be deleted.',
    );
    expect(await details(utr)).toMatchObject({ single_send_name: 'Started', status: 3 });
  });

  test('when a ready send is deleted then it is cancelled: gone from lists, never due, and 404 afterwards', async () => {
    const utr = await create({ schedule_type: 1, schedule_date: '2027-03-01', schedule_time: '08:00' });
    const res = await h.api(alice).delete(`/single/send/delete?utr=${utr}`).expect(200);
    expect(res.body).toEqual({ status: 'success', message: 'Deleted Successfully' });
    await h.api(alice).get(`/single-send/details?utr=${utr}`).expect(404, NOT_FOUND);
    const list = (await h.api(alice).get('/single-send/list')).body.message.singleSends;
    expect(list.map((s: { utr: string }) => s.utr)).not.toContain(utr);
    expect(await row(utr)).toMatchObject({ status: 1, due_at: null, deleted_at: expect.anything() });
    await h.api(alice).delete(`/single/send/delete?utr=${utr}`).expect(404);
    await h.api(alice).post('/single/send/update').send({ ...singleSendBody(a), utr }).expect(404);
  });

  test('when duplicated (GET or POST) then a copy at status 0 with no due time and zero statistics appears', async () => {
    const utr = await create({ single_send_name: 'Original' });
    await h.runtime.db('single_sends').where({ utr }).update({ status: 3, triggered: 5, delivered: 4, sent_at: new Date().toISOString() });
    const res = await h.api(alice).get(`/single/send/duplicate?utr=${utr}`).expect(200);
    expect(res.body).toEqual({ status: 'success', message: 'Duplicated Successfully' });
    const [copy] = (await h.api(alice).get('/single-send/list')).body.message.singleSends;
    const original = await details(utr);
    expect(copy).toEqual({
      ...original,
      id: expect.any(Number),
      utr: expect.stringMatching(UUID),
      single_send_name: 'Copy of Original',
      status: 0,
      triggered: 0,
      delivered: 0,
      sent_at: null,
      created_at: expect.stringMatching(TIMESTAMP),
      updated_at: expect.stringMatching(TIMESTAMP),
    });
    expect(copy.utr).not.toBe(utr);
    expect((await row(copy.utr)).due_at).toBeNull();

    const post = await h.api(alice).post('/single/send/duplicate').type('form').send({ utr: copy.utr }).expect(200);
    expect(post.body.message).toBe('Duplicated Successfully');
    const [copyOfCopy] = (await h.api(alice).get('/single-send/list')).body.message.singleSends;
    expect(copyOfCopy.single_send_name).toBe('Copy of Copy of Original');

    // The copy sends nothing until it is saved; saving makes it ready and due.
    await h.api(alice).post('/single/send/update').send({ ...singleSendBody(a), utr: copy.utr }).expect(200);
    expect(await row(copy.utr)).toMatchObject({ status: 1, due_at: expect.anything() });
  });

  test('when bulk-deleted then the account’s ready sends go, others are ignored, and a started one refuses all', async () => {
    const one = await create();
    const two = await create();
    const started = await create();
    const ids = async (...utrs: string[]) => Promise.all(utrs.map(async (u) => (await row(u)).id));
    const [id1, id2, id3] = await ids(one, two, started);
    const bobs = await create({}, bob, b);
    const [bobId] = await ids(bobs);

    await setStatus(started, 2);
    const refused = await h.api(alice).post('/single/send/bulk-delete').type('form').send({ 'strIds[0]': id1, 'strIds[1]': id3 }).expect(409);
    expect(refused.body).toEqual({ status: 'failed', errors: `Single sends ${id3} are sending or sent and cannot be deleted; leave them out and try again.` });
    await details(one);

    const res = await h.api(alice).post('/single/send/bulk-delete').type('form').send({ 'strIds[0]': id1, 'strIds[1]': id2, 'strIds[2]': bobId }).expect(200);
    expect(res.body).toEqual({ status: 'success', message: 'Deleted Successfully' });
    await h.api(alice).get(`/single-send/details?utr=${one}`).expect(404);
    await h.api(alice).get(`/single-send/details?utr=${two}`).expect(404);
    await details(bobs, bob);

    await h.api(alice).post('/single/send/bulk-delete').type('form').send({ 'strIds[0]': bobId }).expect(404, NOT_FOUND);
    await expectBulkIdRules(h.api(alice), '/single/send/bulk-delete');
  });

  test('when another account uses a utr then it is not found and unchanged', async () => {
    const utr = await create({ single_send_name: 'Private' });
    await h.api(bob).get(`/single-send/details?utr=${utr}`).expect(404, NOT_FOUND);
    await h.api(bob).post('/single/send/update').send({ ...singleSendBody(b), utr }).expect(404, NOT_FOUND);
    await h.api(bob).get(`/single/send/duplicate?utr=${utr}`).expect(404, NOT_FOUND);
    await h.api(bob).delete(`/single/send/delete?utr=${utr}`).expect(404, NOT_FOUND);
    expect((await h.api(bob).get('/single-send/list')).body.message.singleSends.map((s: { utr: string }) => s.utr)).not.toContain(utr);
    expect(await details(utr)).toMatchObject({ single_send_name: 'Private', status: 1 });
  });

  test('when the utr is missing or not a UUID then 422 or 404', async () => {
    const missing = await h.api(alice).get('/single-send/details').expect(422);
    expect(missing.body).toEqual({ status: 'failed', errors: { utr: ['The utr field is required.'] } });
    await h.api(alice).get('/single-send/details?utr=not-a-uuid').expect(404, NOT_FOUND);
    await h.api(alice).delete("/single/send/delete?utr=1'%20or%201=1").expect(404);
  });

  test('when the worker moves a send then only the allowed transitions happen', async () => {
    const utr = await create();
    const db = h.runtime.db;
    const q = () => db('single_sends').where({ utr });
    expect(await transitionSingleSends(q(), 'complete')).toBe(0);
    expect(await transitionSingleSends(q(), 'start', { sent_at: new Date().toISOString() })).toBe(1);
    expect(await transitionSingleSends(q(), 'start')).toBe(0);
    expect(await transitionSingleSends(q(), 'save')).toBe(0);
    expect(await transitionSingleSends(q(), 'cancel', { deleted_at: new Date().toISOString() })).toBe(0);
    expect(await transitionSingleSends(q(), 'complete')).toBe(1);
    expect(await details(utr)).toMatchObject({ status: 3, sent_at: expect.stringMatching(PLAIN_TIME) });
    const cancelled = await create();
    await h.api(alice).delete(`/single/send/delete?utr=${cancelled}`).expect(200);
    expect(await transitionSingleSends(db('single_sends').where({ utr: cancelled }), 'start')).toBe(0);
  });

  test('when recipient references are parsed then contacts_ and segments_ ids come out as {id, table}', () => {
    expect(parseRecipientRef('contacts_12')).toEqual({ id: '12', table: 'contacts_' });
    expect(parseRecipientRef(' segments_007 ')).toEqual({ id: '7', table: 'segments_' });
    expect(parseRecipientRef('segments_0')).toBeUndefined();
    expect(parseRecipientRef('groups_1')).toBeUndefined();
    expect(parseRecipientRef(12)).toBeUndefined();
  });

  test('when a group is given by another account or missing then create refuses; with the account’s own it works', async () => {
    const groupId = await addGroup(h, alice, 'Second group');
    const utr = await create({ unsubscribe_group_id: groupId });
    expect((await details(utr)).unsubscribe_group_id).toBe(groupId);
    const res = await h.api(alice).post('/single/send/create').send(singleSendBody(a, { unsubscribe_group_id: 999999 })).expect(422);
    expect(res.body.errors).toEqual({ unsubscribe_group_id: ['The selected unsubscribe group id is invalid.'] });
  });
});
