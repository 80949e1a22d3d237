import { addContact, addVerifiedSender, berlin, countryId } from '../support/fixtures';
import { useHarness } from '../support/harness';
import { asBoosted, asFragment, signIn, useTwoAccounts } from '../support/web';

/** The srcdoc of the live preview's frame, unescaped as the browser reads it. */
function srcdocOf(html: string): string {
  const match = /srcdoc="([^"]*)"/.exec(html);
  if (!match) throw new Error('no preview frame in the answer');
  return match[1].replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
}

describe('dashboard visual editor: live preview, placeholders, empty-placeholder warning, own templates', () => {
  const h = useHarness();
  const t = useTwoAccounts(h);
  let type = 0;
  let sender = 0;
  let group = 0;
  let ada = 0;
  let bobContact = 0;

  beforeAll(async () => {
    const ctx = { userId: t.alice.user_id };
    const { services } = h.runtime;
    sender = await addVerifiedSender(h, t.alice, await berlin(h), { nickname: 'News', from_email: 'news@acme.example', from_name: 'Acme News' });
    group = await services.unsubscribeGroups.add(ctx, { group_name: 'Newsletter', description: 'News', is_display: 1 });
    type = await services.contactTypes.add(ctx, { name: 'Customers' });
    await services.fields.addCustom(ctx, { field_name: 'plan', field_type: 'text' });
    await services.fields.addCustom(ctx, { field_name: 'company_name', field_type: 'text' });
    const fr = await countryId(h, 'FR');
    // Four recipients: one plan, three first names, no company at all; alt_email nobody has.
    ada = await addContact(h, t.alice, { contact_type_id: type, email: 'ada@example.com', first_name: 'Ada <b>', country: fr, custom_field: { plan: 'Gold & Co' } });
    await addContact(h, t.alice, { contact_type_id: type, email: 'ben@example.com', first_name: 'Ben', country: fr });
    await addContact(h, t.alice, { contact_type_id: type, email: 'cy@example.com', first_name: 'Cy', country: fr });
    await addContact(h, t.alice, { contact_type_id: type, email: 'dee@example.com', country: fr });
    const bobType = await services.contactTypes.add({ userId: t.bob.user_id }, { name: 'Theirs' });
    bobContact = await addContact(h, t.bob, { contact_type_id: bobType, email: 'secret@bob.example', first_name: 'Secret', country: fr });
  });

  const previewForm = (over: Record<string, string> = {}) => ({
    subject: 'Hello ((first_name))',
    preheader: 'Plan ((plan))',
    sender_id: String(sender),
    recipient_id: `contacts_${type}`,
    template_html: '<html><body><p>Hi ((first_name)), plan ((plan)), from ((sender_name)). <a href="https://shop.example/sale">Sale</a></p></body></html>',
    ...over,
  });

  test('when the editor asks for a preview then the first recipient’s values are shown escaped, untracked, in a sandboxed frame', async () => {
    const res = await t.web.post('/editor/preview', previewForm()).expect(200);
    expect(res.text).toContain('As ada@example.com gets it.');
    expect(res.text).toContain('Hello Ada &lt;b&gt;');
    expect(res.text).toMatch(/<iframe class="message-frame live-frame" sandbox /);
    const html = srcdocOf(res.text);
    expect(html).toContain('Hi Ada &lt;b&gt;, plan Gold &amp; Co, from Acme News.');
    // Links as written, no open pixel.
    expect(html).toContain('href="https://shop.example/sale"');
    expect(html).not.toMatch(/\/open\/|\/c\//);
  });

  test('when a contact is searched or chosen then the preview is theirs; another account’s contact is a 404', async () => {
    const found = await t.web.post('/editor/preview', previewForm({ preview_search: 'ben@' })).expect(200);
    expect(found.text).toContain('As ben@example.com gets it.');
    expect(srcdocOf(found.text)).toContain('Hi Ben, plan , from Acme News.');
    const none = await t.web.post('/editor/preview', previewForm({ preview_search: 'nobody-like-this' })).expect(200);
    expect(none.text).toContain('No contact matches “nobody-like-this”: shown for a made-up sample contact.');
    expect(srcdocOf(none.text)).toContain('Hi Alex, plan [plan], from Acme News.');
    const chosen = await t.web.post('/editor/preview', previewForm({ preview_contact_id: String(ada) })).expect(200);
    expect(chosen.text).toContain('As ada@example.com gets it.');
    const theirs = await t.web.post('/editor/preview', previewForm({ preview_contact_id: String(bobContact) })).expect(404);
    expect(theirs.text).not.toContain('Secret');
    const unknownSender = await t.web.post('/editor/preview', previewForm({ sender_id: '999999' })).expect(200);
    expect(srcdocOf(unknownSender.text)).toContain('from .');
  });

  test('when the preview has no HTML then the chosen design template is shown', async () => {
    const welcome = (await h.runtime.services.designTemplates.list()).rows.find((r) => r.template_name === 'Welcome')!;
    const res = await t.web.post('/editor/preview', previewForm({ template_html: '', template_id: String(welcome.id) })).expect(200);
    expect(srcdocOf(res.text)).toContain('Welcome aboard, Ada &lt;b&gt;!');
  });

  test('when the placeholder picker is listed then it has the reserved fields contacts use and every custom field, not the unused ones', async () => {
    const choices = await h.runtime.services.designEditor.placeholders({ userId: t.alice.user_id });
    expect(choices.contact).toEqual(['first_name', 'email', 'country', 'full_name']);
    expect(choices.custom).toEqual(['plan', 'company_name']);
    expect(choices.send).toEqual(['sender_name', 'sender_address', 'unsubscribe_preferences', 'webview_url']);
    const page = await t.web.get('/single-sends/new').expect(200);
    expect(page.text).toContain('data-insert="((plan))"');
    expect(page.text).toContain('data-insert="((first_name))"');
    expect(page.text).not.toContain('data-insert="((alt_email))"');
    expect(page.text).not.toContain('data-insert="((father_name))"');
    // The editor is served from node_modules and allowed inline styles on this page only.
    expect(page.text).toMatch(/<script src="\/vendor\/grapesjs-[\d.]+\/grapes\.min\.js" defer><\/script>/);
    expect(page.headers['content-security-policy']).toContain("style-src 'self' 'unsafe-inline'");
    expect(page.headers['content-security-policy']).toContain("script-src 'self';");
    const list = await t.web.get('/single-sends').expect(200);
    expect(list.headers['content-security-policy']).toContain("style-src 'self';");
    expect(list.text).not.toContain('grapes.min.js');
    const script = await t.web.agent.get(/\/vendor\/grapesjs-[\d.]+\/grapes\.min\.js/.exec(page.text)![0]).expect(200);
    expect(script.headers['content-type']).toMatch(/javascript/);
  });

  test('when the composer is reached by a boosted link then htmx is told to load it whole (its policy differs)', async () => {
    const res = await asBoosted(t.web.get('/single-sends/new')).expect(200);
    expect(res.headers['hx-redirect']).toBe('/single-sends/new');
    expect(res.text).toBe('');
  });

  test('when a draft is confirmed then the warning gives the share of recipients each placeholder is empty for', async () => {
    const ctx = { userId: t.alice.user_id };
    const utr = await h.runtime.services.singleSends.create(ctx, {
      single_send_name: 'Plans', subject: 'Hi ((first_name))', preheader: 'From ((company_name))', sender_id: sender, unsubscribe_group_id: group,
      template_id: 1, template_json: null, template_html: '<p>((full_name)) ((plan)) ((email)) ((father_name)) ((sender_name)) ((unsubscribe_preferences))</p>',
      recipient_id: [{ id: String(type), table: 'contacts_' }], exclude_specific_recipient_id: [], schedule_type: 0, schedule_date: '0000-00-00', schedule_time: '00:00:00',
    }, { draft: true });
    const empty = await h.runtime.services.designEditor.emptyPlaceholders(ctx, utr);
    expect(empty).toEqual([
      { name: 'company_name', empty: 4, recipients: 4, percent: 100, unknown: false },
      { name: 'father_name', empty: 4, recipients: 4, percent: 100, unknown: true },
      { name: 'plan', empty: 3, recipients: 4, percent: 75, unknown: false },
      { name: 'first_name', empty: 1, recipients: 4, percent: 25, unknown: false },
      { name: 'full_name', empty: 1, recipients: 4, percent: 25, unknown: false },
    ]);
    const page = await t.web.get(`/single-sends/${utr}/confirm`).expect(200);
    expect(page.text).toContain('<code>((company_name))</code> is empty for 100% of recipients (4 of 4).');
    expect(page.text).toContain('<code>((plan))</code> is empty for 75% of recipients (3 of 4).');
    expect(page.text).toContain('<code>((father_name))</code> is not a field of your contacts: it is empty for every recipient.');
    expect(page.text).not.toContain('((email))</code> is empty');
    await t.web.get(`/single-sends/${utr}/confirm`).expect(200);
    const bob = await signIn(h, t.bob);
    await bob.get(`/single-sends/${utr}/confirm`).expect(404);
  });

  test('when a stock template is sent then no sentence is left broken by an empty company name', async () => {
    const { rows } = await h.runtime.services.designTemplates.list();
    for (const template of rows) expect(template.html_code).not.toContain('((company_name))');
    expect(rows.find((r) => r.template_name === 'Welcome')!.html_code).toContain('Thanks for joining us.');
  });

  test('when a design is saved as a template then it is listed, loads back into the editor, renames and deletes; another account sees none of it', async () => {
    const design = { template_name: ' Spring promo ', template_html: '<html><body><p style="color:#123456">Spring</p></body></html>', template_json: '{"pages":[{"component":"Spring"}]}' };
    const saved = await asFragment(t.web.post('/my-templates', design), 'own-template-status').expect(200);
    expect(saved.text).toContain('Saved as your template “Spring promo”.');
    const [mine] = await h.runtime.services.ownTemplates.list({ userId: t.alice.user_id });
    expect(mine.template_name).toBe('Spring promo');
    const loaded = await t.web.get(`/my-templates/${mine.id}/design`).expect(200);
    expect(loaded.body).toEqual({ template_name: 'Spring promo', template_html: design.template_html, template_json: design.template_json });
    const composer = await t.web.get('/single-sends/new').expect(200);
    expect(composer.text).toContain(`<option value="${mine.id}">Spring promo</option>`);

    const bob = await signIn(h, t.bob);
    await bob.get(`/my-templates/${mine.id}/design`).expect(404);
    await bob.post(`/my-templates/${mine.id}/rename`, { template_name: 'Taken' }).expect(404);
    await bob.post(`/my-templates/${mine.id}/delete`).expect(404);
    expect((await bob.get('/my-templates').expect(200)).text).not.toContain('Spring promo');

    const refused = await asFragment(t.web.post('/my-templates', { template_name: '', template_html: '' }), 'own-template-status').expect(422);
    expect(refused.text).toContain('The template name field is required.');
    expect(refused.text).toContain('The design is empty: add some content first.');

    await t.web.post(`/my-templates/${mine.id}/rename`, { template_name: 'Summer <promo>' }).expect(303);
    const list = await t.web.get('/my-templates').expect(200);
    expect(list.text).toContain('value="Summer &lt;promo&gt;"');
    await t.web.post(`/my-templates/${mine.id}/delete`).expect(303);
    await t.web.get(`/my-templates/${mine.id}/design`).expect(404);
  });

  test('when the composer saves the editor’s pair then both are stored; the API still refuses both at once', async () => {
    const res = await t.web.post('/single-sends/new', {
      single_send_name: 'Designed', subject: 'Hi', preheader: 'P', sender_id: String(sender), unsubscribe_group_id: String(group), template_id: '1',
      template_html: '<p style="color:red">Designed</p>', template_json: '{"pages":[]}', recipient_id: `contacts_${type}`, schedule_type: '0',
    }).expect(303);
    const utr = /\/single-sends\/([0-9a-f-]+)/.exec(res.headers.location)![1];
    const send = await h.runtime.services.singleSends.get({ userId: t.alice.user_id }, utr);
    expect(send).toMatchObject({ template_html: '<p style="color:red">Designed</p>', template_json: '{"pages":[]}' });
    const api = await h.api(t.alice).post('/single/send/update').send({ utr, single_send_name: 'Designed', subject: 'Hi', preheader: 'P', sender_id: sender, unsubscribe_group_id: group, template_id: 1, template_html: '<p>x</p>', template_json: '{"pages":[]}', recipient_id: [`contacts_${type}`], schedule_type: 0 }).expect(422);
    expect(api.body).toEqual({ status: 'failed', errors: { template_json: ['The template json field prohibits template html from being present.'] } });
  });
});
