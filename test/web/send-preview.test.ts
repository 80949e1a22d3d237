import { createSigner, TOKEN_PURPOSE } from '../../src/lib/signed-token';
import { fillBuckets } from '../../src/services/campaigns/send-insights';
import { addContact, addVerifiedSender, berlin, countryId } from '../support/fixtures';
import { useHarness } from '../support/harness';
import { asFragment, useTwoAccounts } from '../support/web';

describe('dashboard single send: preview for a contact and opens over time', () => {
  const h = useHarness();
  const t = useTwoAccounts(h);
  let utr = '';
  let sendId = 0;
  let ada = 0;

  beforeAll(async () => {
    const ctx = { userId: t.alice.user_id };
    const { services } = h.runtime;
    const sender = await addVerifiedSender(h, t.alice, await berlin(h), { nickname: 'News', from_email: 'news@acme.example' });
    const group = await services.unsubscribeGroups.add(ctx, { group_name: 'Newsletter', description: 'News', is_display: 1 });
    const type = await services.contactTypes.add(ctx, { name: 'Customers' });
    await services.fields.addCustom(ctx, { field_name: 'plan', field_type: 'text' });
    const fr = await countryId(h, 'FR');
    ada = await addContact(h, t.alice, { contact_type_id: type, email: 'ada@example.com', first_name: 'Ada', country: fr, custom_field: { plan: '<b>Gold</b>' } });
    await addContact(h, t.alice, { contact_type_id: type, email: 'adam@example.com', first_name: 'Adam', country: fr });
    const template = (await services.designTemplates.list()).rows.find((r) => r.is_blank === 0)!.id;
    utr = await services.singleSends.create(ctx, {
      single_send_name: 'Plans',
      subject: 'Hello ((first_name))',
      preheader: 'For ((email))',
      sender_id: sender,
      unsubscribe_group_id: group,
      template_id: template,
      template_json: null,
      template_html: '<html><body><p>Hi ((first_name)) from ((country)), plan ((plan)). <a href="https://acme.example/plans?x=1&amp;y=2">Plans</a> ((unsubscribe_preferences))</p></body></html>',
      recipient_id: [{ id: String(type), table: 'contacts_' }],
      exclude_specific_recipient_id: [],
      schedule_type: 1,
      schedule_date: '2031-01-15',
      schedule_time: '09:30:00',
    });
    sendId = (await services.singleSends.get(ctx, utr)).id;
  });

  test('when a contact is chosen then the frame shows the message the engine renders for that contact, its links going nowhere', async () => {
    const res = await t.web.get(`/single-sends/${utr}/preview?contact_id=${ada}`).expect(200);
    expect(res.headers['content-security-policy']).toContain('sandbox');
    expect(res.text).toContain('For ada@example.com</div>');
    expect(res.text).toContain('<p>Hi Ada from France, plan &lt;b&gt;Gold&lt;/b&gt;.');
    // The links are those of a message that does not exist: a forged-looking id 0 that records nothing.
    const token = createSigner(h.runtime.secret).sign(TOKEN_PURPOSE.message, 0);
    expect(res.text).toContain(`<a href="http://campaigns.test/unsubscribe/${token}">`);
    // Looking at it is no open: no open pixel.
    expect(res.text).not.toContain('/open/');
    // Links go where the reader's will end up, not through click tracking (whose preview token is no message's).
    expect(res.text).toContain('<a href="https://acme.example/plans?x=1&amp;y=2">Plans</a>');
    expect(res.text).not.toContain('/c/');
  });

  test('when a contact is searched then the preview fragment picks the first match, offers the others, and shows the rendered subject', async () => {
    const res = await asFragment(t.web.get(`/single-sends/${utr}/recipient-preview?search=ada`), 'send-preview').expect(200);
    expect(res.text.trimStart()).toMatch(/^<div id="send-preview"/);
    expect(res.text).toContain('<strong>Subject:</strong> Hello Ada');
    expect(res.text).toContain(`src="/single-sends/${utr}/preview?contact_id=`);
    expect(res.text).toContain('>adam@example.com</a>');
    const none = await t.web.get(`/single-sends/${utr}/recipient-preview?search=nobody`).expect(200);
    expect(none.text).toContain('No contact matches “nobody”: shown for the first recipient.');
    expect(none.text).toContain('<strong>Subject:</strong> Hello Ada <span class="muted">— to ada@example.com</span>');
  });

  test('when the draft’s audience has nobody yet then its preview is filled for a made-up sample contact, never left empty', async () => {
    const ctx = { userId: t.alice.user_id };
    const { services } = h.runtime;
    const empty = await services.contactTypes.add(ctx, { name: 'Nobody yet' });
    const send = await services.singleSends.get(ctx, utr);
    const lonely = await services.singleSends.create(ctx, {
      single_send_name: 'November news', subject: '((first_name)), your November news', preheader: 'For ((email))', sender_id: send.sender_id,
      unsubscribe_group_id: send.unsubscribe_group_id, template_id: send.template_id, template_json: null,
      template_html: '<html><body><p>Hi ((full_name)) in ((city)), plan ((plan)).</p></body></html>',
      recipient_id: [{ id: String(empty), table: 'contacts_' }], exclude_specific_recipient_id: [], schedule_type: 1, schedule_date: '2031-01-15', schedule_time: '09:30:00',
    });
    const res = await t.web.get(`/single-sends/${lonely}/recipient-preview`).expect(200);
    expect(res.text).toContain('Nobody in the audience yet: shown for a made-up sample contact.');
    expect(res.text).toContain('<strong>Subject:</strong> Alex, your November news</p>');
    const frame = await t.web.get(`/single-sends/${lonely}/preview`).expect(200);
    expect(frame.text).toContain('<p>Hi Alex Sample in Berlin, plan [plan].</p>');
  });

  test('when another account’s contact or send is asked for then the preview answers 404', async () => {
    const bobType = await h.runtime.services.contactTypes.add({ userId: t.bob.user_id }, { name: 'Bob' });
    const bobContact = await addContact(h, t.bob, { contact_type_id: bobType, email: 'secret@bob.example', country: await countryId(h, 'FR') });
    await t.web.get(`/single-sends/${utr}/preview?contact_id=${bobContact}`).expect(404);
    await t.web.get(`/single-sends/${utr}/recipient-preview?contact_id=${bobContact}`).expect(404);
  });

  test('when messages were opened then the page draws unique opens per hour, empty hours included', async () => {
    const db = h.runtime.db;
    const row = (email: string, openedAt: string | null) => ({
      kind: 1, user_id: t.alice.user_id, single_send_id: sendId, email, email_key: email, state: 3, attempts: 1,
      opened_at: openedAt, created_at: '2031-01-15T09:30:00.000Z', updated_at: '2031-01-15T09:30:00.000Z',
    });
    await db('send_messages').insert([
      row('o1@example.com', '2031-01-15T09:40:00.000Z'),
      row('o2@example.com', '2031-01-15T09:55:00.000Z'),
      row('o3@example.com', '2031-01-15T12:05:00.000Z'),
      row('o4@example.com', null),
    ]);
    expect(await h.runtime.services.sendInsights.opensOverTime({ userId: t.alice.user_id }, sendId)).toEqual({
      unit: 'hour',
      buckets: [
        { start: '2031-01-15T09', opens: 2 },
        { start: '2031-01-15T10', opens: 0 },
        { start: '2031-01-15T11', opens: 0 },
        { start: '2031-01-15T12', opens: 1 },
      ],
    });
    expect(await h.runtime.services.sendInsights.opensOverTime({ userId: t.bob.user_id }, sendId)).toEqual({ unit: 'hour', buckets: [] });
    const page = await t.web.get(`/single-sends/${utr}`).expect(200);
    expect(page.text).toContain('<h2>Opens over time</h2>');
    expect(page.text).toContain('<svg class="chart chart-columns" viewBox="0 0 640 200" role="img" aria-label="Unique opens per hour">');
    expect(page.text).toContain('<title>2031-01-15 09:00: 2</title>');
    expect((page.text.match(/class="chart-bar chart-accent"/g) ?? []).length).toBe(2);
  });

  test('when opens span more than two days then they are counted per day', () => {
    const result = fillBuckets([
      { start: '2031-01-15T09', opens: 2 },
      { start: '2031-01-15T20', opens: 1 },
      { start: '2031-01-18T01', opens: 4 },
    ]);
    expect(result).toEqual({
      unit: 'day',
      buckets: [
        { start: '2031-01-15T00', opens: 3 },
        { start: '2031-01-16T00', opens: 0 },
        { start: '2031-01-17T00', opens: 0 },
        { start: '2031-01-18T00', opens: 4 },
      ],
    });
  });
});
