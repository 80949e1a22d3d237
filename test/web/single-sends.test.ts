import { MESSAGE_STATE, SINGLE_SEND_STATUS } from '../../src/lib/constants';
import { addContact, addSender, addVerifiedSender, berlin, countryId } from '../support/fixtures';
import { useHarness } from '../support/harness';
import { asFragment, signIn, useTwoAccounts } from '../support/web';

describe('dashboard single sends', () => {
  const h = useHarness();
  const t = useTwoAccounts(h);
  const refs = { sender: 0, unverified: 0, group: 0, type: 0, otherType: 0, template: 0 };

  beforeAll(async () => {
    const ctx = { userId: t.alice.user_id };
    const { services } = h.runtime;
    const place = await berlin(h);
    refs.sender = await addVerifiedSender(h, t.alice, place, { nickname: 'News', from_email: 'news@acme.example' });
    refs.unverified = await addSender(h, t.alice, place, { nickname: 'Pending', from_email: 'pending@acme.example' });
    refs.group = await services.unsubscribeGroups.add(ctx, { group_name: 'Newsletter', description: 'News', is_display: 1 });
    refs.type = await services.contactTypes.add(ctx, { name: 'Customers' });
    refs.otherType = await services.contactTypes.add(ctx, { name: 'Staff' });
    refs.template = (await services.designTemplates.list()).rows.find((r) => r.is_blank === 0)!.id;
  });

  const form = (overrides: Record<string, string | string[]> = {}) => ({
    single_send_name: 'November news',
    subject: 'Hello ((first_name))',
    preheader: 'What is new',
    sender_id: String(refs.sender),
    unsubscribe_group_id: String(refs.group),
    template_id: String(refs.template),
    template_html: '<p>Hi ((first_name))</p>',
    recipient_id: `contacts_${refs.type}`,
    schedule_type: '1',
    schedule_date: '2031-01-15',
    schedule_time: '09:30',
    ...overrides,
  });
  const utrOf = (location: string) => /^\/single-sends\/([\w-]+)$/.exec(location)?.[1] ?? '';

  test('when the composer is opened then it offers the account’s senders, groups, templates and contact types', async () => {
    const res = await t.web.get('/single-sends/new').expect(200);
    expect(res.text).toContain(`<option value="${refs.sender}">News — news@acme.example</option>`);
    expect(res.text).toContain(`<option value="${refs.unverified}">Pending — pending@acme.example (not verified)</option>`);
    expect(res.text).toContain(`<option value="${refs.group}">Newsletter</option>`);
    expect(res.text).toContain(`value="contacts_${refs.type}"> Customers`);
    expect(res.text).toContain('hx-get="/single-sends/template-body"');
    // The placeholder picker: the send's own placeholders always; contact fields once contacts use them.
    expect(res.text).toContain('<button type="button" class="chip" data-insert="((sender_name))">((sender_name))</button>');
  });

  test('when a send is saved then it is a draft; its confirm step counts the recipients after unsubscribes and suppressions, then schedules it', async () => {
    const res = await t.web.post('/single-sends/new', form()).expect(303);
    const utr = utrOf(res.headers.location);
    const ctx = { userId: t.alice.user_id };
    const draft = await h.runtime.services.singleSends.get(ctx, utr);
    expect(draft).toMatchObject({ status: SINGLE_SEND_STATUS.initiate, schedule_type: 1, schedule_date: '2031-01-15', schedule_time: '09:30:00', template_html: '<p>Hi ((first_name))</p>' });
    expect(draft.recipient_id).toEqual([{ id: String(refs.type), table: 'contacts_' }]);
    expect((await h.runtime.db('single_sends').where({ utr }).first('due_at')).due_at).toBeNull();

    const page = await t.web.get(res.headers.location).expect(200);
    expect(page.text).toContain('Draft saved. Send yourself a test, then send it or schedule it: nothing goes out before you confirm.');
    expect(page.text).toContain('<dt>To</dt><dd>Customers');
    expect(page.text).toContain('<span class="badge">Draft</span>');
    expect(page.text).toContain(`href="/single-sends/${utr}/confirm?when=now"`);
    expect(page.text).toContain(`href="/single-sends/${utr}/confirm?when=schedule"`);
    expect(page.text).toContain('<div id="send-stats">');
    const preview = await t.web.get(`/single-sends/${utr}/preview`).expect(200);
    // Rendered by the sending engine, with nobody in the audience yet for a made-up sample contact (never empty placeholders), the preheader hidden first.
    expect(preview.text).toContain('What is new</div><p>Hi Alex</p>');
    expect(preview.headers['content-security-policy']).toContain('sandbox');

    // Three customers, one of them unsubscribed and one suppressed: one recipient.
    const france = await countryId(h, 'FR');
    for (const email of ['ann@example.org', 'bob@example.org', 'cat@example.org']) await addContact(h, t.alice, { contact_type_id: refs.type, email, country: france });
    await h.api(t.alice).post('/global-unsubscribes/save').send({ email_address: 'cat@example.org' }).expect(200);
    await h.api(t.alice).post('/suppressions/save').send({ email_address: 'Bob@Example.org' }).expect(200);
    const confirm = await t.web.get(`/single-sends/${utr}/confirm?when=schedule`).expect(200);
    expect(confirm.text).toContain('It goes to <strong>1 recipient</strong> on 2031-01-15 09:30');
    expect(confirm.text).toContain('Schedule for 1 recipient</button>');
    await t.web.post(`/single-sends/${utr}/confirm`, { when: 'schedule' }).expect(303);
    const scheduled = await t.web.get(`/single-sends/${utr}`).expect(200);
    expect(scheduled.text).toContain('Scheduled. You can pause or cancel it until it starts.');
    expect(scheduled.text).toContain('<span class="badge warn">Scheduled</span>');
    expect(new Date((await h.runtime.db('single_sends').where({ utr }).first('due_at')).due_at).toISOString()).toBe('2031-01-15T09:30:00.000Z'); // the account's zone is UTC
    // Confirmed once: a second confirm is refused, and the confirm page sends back to the send.
    const again = await t.web.post(`/single-sends/${utr}/confirm`, { when: 'now' }).expect(409);
    expect(again.text).toContain('Only a draft can be sent or scheduled; this one already is.');
    expect((await t.web.get(`/single-sends/${utr}/confirm?when=now`).expect(303)).headers.location).toBe(`/single-sends/${utr}`);
  });

  test('when the sender is not verified or fields are missing then the composer comes back with each message and the ticks kept', async () => {
    const unverified = await t.web.post('/single-sends/new', form({ sender_id: String(refs.unverified) })).expect(422);
    expect(unverified.text).toMatch(/<p class="field-error" id="sender_id-error">[^<]+<\/p>/);
    const res = await t.web.post('/single-sends/new', form({ subject: '', exclude_specific_recipient_id: `contacts_${refs.otherType}` })).expect(422);
    expect(res.text).toContain('<p class="field-error" id="subject-error">The subject field is required.</p>');
    expect(res.text).toMatch(new RegExp(`name="recipient_id" value="contacts_${refs.type}" checked`));
    expect(res.text).toMatch(new RegExp(`name="exclude_specific_recipient_id" value="contacts_${refs.otherType}" checked`));
    expect(res.text).not.toMatch(new RegExp(`name="recipient_id" value="contacts_${refs.otherType}" checked`));
    const date = await t.web.post('/single-sends/new', form({ schedule_date: '' })).expect(422);
    expect(date.text).toContain('Choose the day to send it on.');
  });

  test('when a draft is sent now then its counters poll; the template body comes as a fragment', async () => {
    const res = await t.web.post('/single-sends/new', form({ schedule_type: '0', schedule_date: '', schedule_time: '' })).expect(303);
    const utr = utrOf(res.headers.location);
    expect((await t.web.get(res.headers.location).expect(200)).text).not.toContain('hx-trigger="every 2s"');
    await t.web.post(`/single-sends/${utr}/confirm`, { when: 'now' }).expect(303);
    const page = await t.web.get(res.headers.location).expect(200);
    expect(page.text).toContain('Sending has started.');
    expect(page.text).toContain(`<div id="send-stats" hx-get="/single-sends/${utr}" hx-trigger="every 2s" hx-swap="outerHTML">`);
    const fragment = await asFragment(t.web.get(`/single-sends/${utr}`), 'send-stats').expect(200);
    expect(fragment.text.trimStart()).toMatch(/^<div id="send-stats"/);

    await h.runtime.db('single_sends').where({ utr }).update({ status: SINGLE_SEND_STATUS.completed, triggered: 4, delivered: 3, bounces: 1, unique_opens: 2, total_opens: 5, sent_at: new Date().toISOString() });
    const done = await asFragment(t.web.get(`/single-sends/${utr}`), 'send-stats').expect(200);
    expect(done.text).toContain('<div id="send-stats">');
    expect(done.text).toContain('<span class="badge ok">Sent</span>');
    expect(done.text).toContain('<progress class="send-progress" max="4" value="4">');
    expect(done.text).toMatch(/<dt>Delivered<\/dt>[\s\S]*?<span class="bar-value">3 <span class="muted">100%<\/span>/);
    expect(done.text).toMatch(/<dt>Unique opens<\/dt>[\s\S]*?<rect width="66.7" height="10"/);
    // The bounced address is listed with the mail system's reason, escaped.
    const sendId = (await h.runtime.db('single_sends').where({ utr }).first('id')).id;
    const now = new Date().toISOString();
    await h.runtime.db('send_messages').insert({
      kind: 1, user_id: t.alice.user_id, single_send_id: sendId, email: 'gone@example.org', email_key: 'gone@example.org', state: MESSAGE_STATE.bounced, attempts: 1,
      last_error: '550 5.1.1 <gone@example.org>: user unknown', bounce_class: 'hard', created_at: now, updated_at: now,
    });
    const bounced = await asFragment(t.web.get(`/single-sends/${utr}`), 'send-stats').expect(200);
    expect(bounced.text).toContain('<h2>1 address bounced</h2>');
    expect(bounced.text).toContain('<tr><td>gone@example.org</td><td>No such address</td><td class="diagnostic">550 5.1.1 &lt;gone@example.org&gt;: user unknown</td></tr>');
    expect(bounced.text).toContain(`href="/single-sends/${utr}/recipients.csv?status=bounced"`);
    // The whole page, as opened from the list, lists it too (not only the polled fragment).
    const whole = await t.web.get(`/single-sends/${utr}`).expect(200);
    expect(whole.text).toContain('<h2>1 address bounced</h2>');
    expect(whole.text).toContain('<tr><td>gone@example.org</td><td>No such address</td><td class="diagnostic">550 5.1.1 &lt;gone@example.org&gt;: user unknown</td></tr>');

    const body = await t.web.get(`/single-sends/template-body?template_id=${refs.template}`).expect(200);
    expect(body.text.trimStart()).toMatch(/^<div id="body-editor"/);
  });

  test('when a send is edited, duplicated and deleted then the list follows; a sent one cannot be changed', async () => {
    const res = await t.web.post('/single-sends/new', form({ single_send_name: 'Edit me' })).expect(303);
    const utr = utrOf(res.headers.location);
    const edit = await t.web.get(`/single-sends/${utr}/edit`).expect(200);
    expect(edit.text).toContain('value="Edit me"');
    expect(edit.text).toContain('<input id="field-schedule_time" name="schedule_time" type="time" value="09:30">');
    await t.web.post(`/single-sends/${utr}/edit`, form({ single_send_name: 'Edited' })).expect(303);
    expect((await h.runtime.services.singleSends.get({ userId: t.alice.user_id }, utr)).single_send_name).toBe('Edited');

    const copy = await asFragment(t.web.post(`/single-sends/${utr}/duplicate`), 'single-send-list').expect(200);
    expect(copy.text).toContain('Copy of Edited');
    expect(copy.text).toContain('<span class="badge">Draft</span>');
    const del = await asFragment(t.web.post(`/single-sends/${utr}/delete`), 'single-send-list').expect(200);
    expect(del.text).not.toContain(`/single-sends/${utr}"`);

    const sent = utrOf((await t.web.post('/single-sends/new', form({ single_send_name: 'Gone out' }))).headers.location);
    await h.runtime.db('single_sends').where({ utr: sent }).update({ status: SINGLE_SEND_STATUS.completed });
    const refused = await t.web.post(`/single-sends/${sent}/edit`, form()).expect(409);
    expect(refused.text).toContain('<h1>Not possible right now</h1>');
    await t.web.post(`/single-sends/${sent}/delete`).expect(409);
  });

  test('when the home page is shown then it lists the latest sends, newest first', async () => {
    await t.web.post('/single-sends/new', form({ single_send_name: 'Older <one>' })).expect(303);
    await t.web.post('/single-sends/new', form({ single_send_name: 'Newest' })).expect(303);
    const home = await t.web.get('/').expect(200);
    expect(home.text).toMatch(/Recent single sends[\s\S]*>Newest<\/a>[\s\S]*>Older &lt;one&gt;<\/a>/);
    expect(home.text).toContain('<span class="badge">Draft</span>');
  });

  test('when another account’s send is addressed then every page and form answers 404', async () => {
    const utr = await h.runtime.services.singleSends.duplicate(
      { userId: t.alice.user_id },
      utrOf((await t.web.post('/single-sends/new', form({ single_send_name: 'Alice only' }))).headers.location),
    );
    const bob = await signIn(h, t.bob);
    await bob.get(`/single-sends/${utr}`).expect(404);
    await bob.get(`/single-sends/${utr}/edit`).expect(404);
    await bob.get(`/single-sends/${utr}/preview`).expect(404);
    await bob.post(`/single-sends/${utr}/edit`, form()).expect(404);
    await bob.post(`/single-sends/${utr}/duplicate`).expect(404);
    await bob.post(`/single-sends/${utr}/delete`).expect(404);
    expect((await bob.get('/single-sends').expect(200)).text).not.toContain('Alice only');
  });
});

describe('dashboard single sends: pause, resume, cancel, test send', () => {
  const h = useHarness();
  const t = useTwoAccounts(h);
  const refs = { sender: 0, group: 0, type: 0, template: 0 };

  beforeAll(async () => {
    const ctx = { userId: t.alice.user_id };
    const { services } = h.runtime;
    refs.sender = await addVerifiedSender(h, t.alice, await berlin(h), { nickname: 'News', from_email: 'news@acme.example' });
    refs.group = await services.unsubscribeGroups.add(ctx, { group_name: 'Newsletter', description: 'News', is_display: 1 });
    refs.type = await services.contactTypes.add(ctx, { name: 'Customers' });
    refs.template = (await services.designTemplates.list()).rows.find((r) => r.is_blank === 0)!.id;
  });

  /** A send scheduled for 2031 through the composer; answers its utr. */
  const scheduledSend = async (name: string) => {
    const created = await t.web.post('/single-sends/new', {
      single_send_name: name, subject: 'Hi', preheader: 'Soon', sender_id: String(refs.sender), unsubscribe_group_id: String(refs.group), template_id: String(refs.template),
      template_html: '<p>Hi</p>', recipient_id: `contacts_${refs.type}`, schedule_type: '1', schedule_date: '2031-01-15', schedule_time: '09:30',
    }).expect(303);
    const utr = /^\/single-sends\/([\w-]+)$/.exec(created.headers.location)![1];
    await t.web.post(`/single-sends/${utr}/confirm`, { when: 'schedule' }).expect(303);
    return utr;
  };

  test('when a scheduled send is paused, resumed and cancelled from its page then the buttons follow its status; another account gets 404', async () => {
    const ctx = { userId: t.alice.user_id };
    const utr = await scheduledSend('Later');
    const buttons = (html: string) => [...html.matchAll(/action="\/single-sends\/[\w-]+\/(pause|resume|cancel)"/g)].map((m) => m[1]);

    expect(buttons((await t.web.get(`/single-sends/${utr}`).expect(200)).text)).toEqual(['pause', 'cancel']);
    await t.web.post(`/single-sends/${utr}/pause`).expect(303);
    const paused = await t.web.get(`/single-sends/${utr}`).expect(200);
    expect(paused.text).toContain('Paused: nothing more is sent until you resume.');
    expect(paused.text).toContain('>Paused</span>');
    expect(buttons(paused.text)).toEqual(['resume', 'cancel']);
    await t.web.post(`/single-sends/${utr}/resume`).expect(303);
    expect((await h.runtime.services.singleSends.get(ctx, utr)).status).toBe(SINGLE_SEND_STATUS.ready);

    const bob = await signIn(h, t.bob);
    await bob.post(`/single-sends/${utr}/cancel`).expect(404);
    await t.web.post(`/single-sends/${utr}/cancel`).expect(303);
    const cancelled = await t.web.get(`/single-sends/${utr}`).expect(200);
    expect(cancelled.text).toContain('Cancelled: messages not sent yet will never be sent.');
    expect(buttons(cancelled.text)).toEqual([]);
    const again = await t.web.post(`/single-sends/${utr}/pause`).expect(409);
    expect(again.text).toContain('Only a scheduled or sending single send can be paused.');
  });

  test('when a test is sent from the page then it is queued as system mail and the page says so; a bad address stays in the form with a plain message', async () => {
    const utr = await scheduledSend('Tested');
    const bad = await t.web.post(`/single-sends/${utr}/test`, { email_address: 'me@example.net, not an address' }).expect(422);
    expect(bad.text).toContain('value="me@example.net, not an address"');
    expect(bad.text).toMatch(/<p class="field-error" id="email_address-error">[^<]*not an address/);
    await t.web.post(`/single-sends/${utr}/test`, { email_address: 'me@example.net' }).expect(303);
    const page = await t.web.get(`/single-sends/${utr}`).expect(200);
    expect(page.text).toContain('Test sent to me@example.net. It is not counted in the statistics.');
    const queued = await h.runtime.db('send_messages').where({ user_id: t.alice.user_id, email: 'me@example.net' }).first('payload');
    const payload = typeof queued.payload === 'string' ? JSON.parse(queued.payload) : queued.payload;
    expect(payload.subject).toBe('[Test] Hi');
    const bob = await signIn(h, t.bob);
    await bob.post(`/single-sends/${utr}/test`, { email_address: 'me@example.net' }).expect(404);
  });
});
