import request from 'supertest';
import { addContact, addContactType, addGroup, addSegment, addSender, berlin, countryId, header, manualClock, Place, PLAIN_TIME, scheduleBody, sendingFixtures, singleSendBody, testWorker, verificationToken } from '../support/fixtures';
import { useHarness } from '../support/harness';
import { useSmtpSink } from '../support/smtp';

describe('single sends and automations created through the API go out', () => {
  // The sink starts first: the service's own transport (sender verification) points at it.
  const sink = useSmtpSink({ emptyBeforeEach: true });
  const h = useHarness({ SMTP_URL: () => sink.url });
  const f = sendingFixtures(h);
  const web = () => request(h.runtime.app);
  const [alice] = h.accounts(1);
  let place: Place;
  let senderId: number;
  let groupId: number;
  let customers: number;
  let segmentId: number;

  beforeAll(async () => {
    place = await berlin(h);
    await h.api(alice).post('/notification-recipient/save').type('form').send({ email_address: 'boss@example.org', email_owner: 'Boss' }).expect(200);

    // The sender is verified the way a person does it: through the link in its mail.
    senderId = await addSender(h, alice, place, { from_email: 'desk@shop.example', from_name: 'Shop Desk' });
    const verification = sink.messages.find((m) => m.to[0] === 'desk@shop.example')!;
    await web().get(`/verify-sender/${verificationToken(verification.parsed.text)}`).expect(200);

    groupId = await addGroup(h, alice, 'Shop news');
    customers = await addContactType(h, alice, 'Customers');
    await f.contact(alice.user_id, customers, 'ann@example.org', { first_name: 'Ann' });
    const ben = await f.contact(alice.user_id, customers, 'ben@example.org', { first_name: 'Ben' });
    segmentId = await addSegment(h, alice, customers, 'Friends', [
      { email: 'ben@example.org', contact_id: ben, first_name: 'Ben' },
      { email: 'cleo@example.org', first_name: 'Cleo' },
    ]);
  });

  const campaignMail = () => sink.messages.filter((m) => m.from === 'desk@shop.example');
  const notices = () => sink.messages.filter((m) => m.to[0] === 'boss@example.org').map((m) => m.parsed.subject).sort();

  test('when an immediate send targets a contact type and a segment then each address gets one message and the details show the statistics', async () => {
    const created = await h.api(alice)
      .post('/single/send/create')
      .send(singleSendBody({ senderId, groupId, contactTypeId: customers, segmentId }, {
        template_id: 1,
        template_html: '<html><body><p>Hi ((first_name)), from ((sender_name)) at ((sender_address)).</p></body></html>',
      }))
      .expect(200);
    const utr = created.body.message.utr;
    const { worker, close } = testWorker(h, sink.url);
    await worker.runOnce().finally(close);

    expect(campaignMail().map((m) => `${m.to[0]}: ${m.parsed.subject}`).sort()).toEqual([
      'ann@example.org: News for Ann',
      'ben@example.org: News for Ben',
      'cleo@example.org: News for Cleo',
    ]);
    const ann = campaignMail().find((m) => m.to[0] === 'ann@example.org')!;
    expect(ann.parsed.html).toContain('<p>Hi Ann, from Shop Desk at Unter den Linden 1, Floor 2, 10115');
    expect(notices()).toEqual(['Sender verified: desk@shop.example', 'Single send completed: November news', 'Single send started: November news']);
    // The verification mail went through the ledger as system mail.
    expect(await h.runtime.db('send_messages').where({ kind: 3, email: 'desk@shop.example' }).pluck('state')).toEqual([2]);

    // An open and a one-click unsubscribe show in the details.
    await web().get(new URL(/<img src="([^"]+\.gif)"/.exec(String(ann.parsed.html))![1]).pathname).expect(200);
    const unsubscribeUrl = /^<([^>]+)>/.exec(header(ann.raw, 'List-Unsubscribe')!)![1];
    await web().post(new URL(unsubscribeUrl).pathname).type('form').send('List-Unsubscribe=One-Click').expect(200);
    const details = (await h.api(alice).get(`/single-send/details?utr=${utr}`).expect(200)).body.message.singleSend;
    const send = Array.isArray(details) ? details[0] : details;
    expect(send).toMatchObject({ status: 3, triggered: 3, delivered: 3, bounces: 0, unique_opens: 1, total_opens: 1, unsubscribes: 1 });
    expect(send.sent_at).toMatch(PLAIN_TIME);
    expect(send.unique_open_token).toEqual({ '1': unsubscribeUrl.split('/').pop() });
    const listed = (await h.api(alice).get('/single-send/list').expect(200)).body.message.singleSends.find((s: { utr: string }) => s.utr === utr);
    expect(listed.unique_open_token).toEqual(send.unique_open_token);
    expect(await h.runtime.db('unsubscribe_group_recipients').where({ unsubscribe_groups_id: groupId }).pluck('email_key')).toEqual(['ann@example.org']);
  });

  test('when a send is scheduled through the API then it waits for its date and time in the account time zone', async () => {
    const at = new Date(Date.now() + 2 * 24 * 3_600_000);
    const date = at.toISOString().slice(0, 10);
    await h.runtime.db('accounts').where({ id: alice.user_id }).update({ time_zone: 'Asia/Tokyo' });
    await h.api(alice)
      .post('/single/send/create')
      .send(singleSendBody({ senderId, groupId, contactTypeId: customers, segmentId }, {
        single_send_name: 'Later',
        recipient_id: [`contacts_${customers}`],
        schedule_type: 1,
        schedule_date: date,
        schedule_time: '08:30:00',
      }))
      .expect(200);
    // 08:30 in Tokyo (UTC+9) is 23:30 UTC the day before.
    const clock = manualClock(new Date(Date.parse(`${date}T08:29:00.000Z`) - 9 * 3_600_000));
    const { worker, close } = testWorker(h, sink.url, { now: clock.now });
    try {
      await worker.runOnce();
      expect(campaignMail()).toEqual([]);
      clock.advance(60_000);
      await worker.runOnce();
    } finally {
      await close();
    }
    // ann@ left the group through one-click in the test above.
    expect(campaignMail().map((m) => m.to[0])).toEqual(['ben@example.org']);
  });

  test('when an automation is set live and paused through the API then it sends its schedule to new contacts and the events are mailed', async () => {
    const created = await h.api(alice)
      .post('/automations/create')
      .send({ type: 'welcome', automation_name: 'Onboarding', automation_for: `contacts_${customers}`, unsubscribe_group_id: groupId })
      .expect(200);
    const utr = created.body.message.utr;
    await h.api(alice).post('/automations/schedule/create').send(scheduleBody(utr, senderId)).expect(200);
    await h.api(alice).get(`/automations/set-live?utr=${utr}`).expect(200);
    const { worker, close } = testWorker(h, sink.url);
    try {
      await worker.runOnce();
      await f.contact(alice.user_id, customers, 'dina@example.org', { first_name: 'Dina' });
      await worker.runOnce();
      await h.api(alice).get(`/automations/pause?utr=${utr}`).expect(200);
      await f.contact(alice.user_id, customers, 'eli@example.org', { first_name: 'Eli' });
      await worker.runOnce();
    } finally {
      await close();
    }
    expect(campaignMail().map((m) => `${m.to[0]}: ${m.parsed.subject}`)).toEqual(['dina@example.org: Welcome, Dina']);
    expect(notices()).toEqual(['Automation live: Onboarding', 'Automation paused: Onboarding']);
    const automation = (await h.api(alice).get(`/automations/details?utr=${utr}`).expect(200)).body.message.automation;
    expect(automation).toMatchObject({ status: 2, total_triggered: 1, total_delivered: 1 });
  });

  test('when a contact matching a segment rule is added after the segment was saved then the send still reaches it', async () => {
    const vipType = await addContactType(h, alice, 'Members');
    const country = await countryId(h, 'DE');
    await addContact(h, alice, { contact_type_id: vipType, email: 'early@example.org', first_name: 'Gold Early', country });
    const saved = await h.api(alice)
      .post('/segment/save')
      .send({ segment_name: 'Gold', contact_type_id: vipType, select_field: ['first_name'], select_operator: ['starts with'], value: ['Gold'] })
      .expect(200);
    expect(saved.body).toEqual({ status: 'success', message: 'Saved Successfully' });
    const segment = await h.runtime.db('segments').where({ user_id: alice.user_id, segment_name: 'Gold' }).first('id');
    // Joins after the save: only a refresh before the send makes it a member.
    await addContact(h, alice, { contact_type_id: vipType, email: 'late@example.org', first_name: 'Gold Late', country });
    await addContact(h, alice, { contact_type_id: vipType, email: 'plain@example.org', first_name: 'Plain', country });
    await h.api(alice)
      .post('/single/send/create')
      .send(singleSendBody({ senderId, groupId, contactTypeId: vipType, segmentId: Number(segment.id) }, {
        single_send_name: 'Gold only',
        recipient_id: [`segments_${segment.id}`],
      }))
      .expect(200);
    const { worker, close } = testWorker(h, sink.url);
    await worker.runOnce().finally(close);
    expect(campaignMail().map((m) => m.to[0]).sort()).toEqual(['early@example.org', 'late@example.org']);
  });
});
