import { AUTOMATION_STATUS } from '../../src/lib/constants';
import { NO_GROUP_TO_GO_LIVE } from '../../src/services/campaigns/automations';
import { addVerifiedSender, berlin } from '../support/fixtures';
import { useHarness } from '../support/harness';
import { asFragment, signIn, useTwoAccounts } from '../support/web';

describe('dashboard automations', () => {
  const h = useHarness();
  const t = useTwoAccounts(h);
  const refs = { sender: 0, group: 0, type: 0, template: 0 };

  beforeAll(async () => {
    const ctx = { userId: t.alice.user_id };
    const { services } = h.runtime;
    refs.sender = await addVerifiedSender(h, t.alice, await berlin(h));
    refs.group = await services.unsubscribeGroups.add(ctx, { group_name: 'Onboarding', description: 'Tips', is_display: 1 });
    refs.type = await services.contactTypes.add(ctx, { name: 'Trials' });
    refs.template = (await services.designTemplates.list()).rows.find((r) => r.template_name === 'Welcome')!.id;
  });

  const utrOf = (location: string) => /^\/automations\/([\w-]+)$/.exec(location)?.[1] ?? '';
  const create = async (overrides: Record<string, string> = {}) => {
    const res = await t.web.post('/automations/new', { type: 'welcome', automation_name: 'Onboarding', automation_for: `contacts_${refs.type}`, unsubscribe_group_id: '', ...overrides }).expect(303);
    return utrOf(res.headers.location);
  };

  test('when an automation is created then its page shows it as a draft with its target', async () => {
    const utr = await create();
    const page = await t.web.get(`/automations/${utr}`).expect(200);
    expect(page.text).toContain('Automation created as a draft: add its steps, then set it live.');
    expect(page.text).toContain('<span class="badge">Draft</span>');
    expect(page.text).toContain(`<option value="contacts_${refs.type}" selected>Contact type: Trials</option>`);
    const list = await t.web.get('/automations').expect(200);
    expect(list.text).toMatch(/<td>Welcome<\/td>\s*<td>Trials<\/td>/);
  });

  test('when a new automation has no step then its first step waits “At once”; once it has one, the next waits a day', async () => {
    const utr = await create({ automation_name: 'First test' });
    const empty = await t.web.get(`/automations/${utr}`).expect(200);
    expect(empty.text).toContain('<option value="instantly" selected>At once</option>');
    await t.web.post(`/automations/${utr}/steps`, { utr, subject: 'Hello', sender_id: String(refs.sender), template_id: String(refs.template), waiting_type: 'instantly', waiting_period: '1' }).expect(303);
    const next = await t.web.get(`/automations/${utr}`).expect(200);
    expect(next.text).toContain('<option value="days" selected>After some days</option>');
    expect(next.text).not.toContain('<option value="instantly" selected>');
  });

  test('when the name is missing or the type unknown then the form says so next to each field', async () => {
    const res = await t.web.post('/automations/new', { type: 'weekly', automation_name: '' }).expect(422);
    expect(res.text).toContain('<p class="field-error" id="type-error">The selected type is invalid.</p>');
    expect(res.text).toContain('<p class="field-error" id="automation_name-error">The automation name field is required.</p>');
  });

  test('when set live without a group then the reference’s sentence shows; with a group it goes live and pauses', async () => {
    const utr = await create({ automation_name: 'Needs a group' });
    const refused = await asFragment(t.web.post(`/automations/${utr}/live`), 'automation-state').expect(409);
    expect(refused.headers['hx-retarget']).toBe('#flash');
    expect(refused.text).toContain(NO_GROUP_TO_GO_LIVE);

    await t.web.post(`/automations/${utr}/settings`, { utr, automation_name: 'Has a group', automation_for: `contacts_${refs.type}`, unsubscribe_group_id: String(refs.group) }).expect(303);
    const live = await asFragment(t.web.post(`/automations/${utr}/live`), 'automation-state').expect(200);
    expect(live.text.trimStart()).toMatch(/^<div id="automation-state"/);
    expect(live.text).toContain('<span class="badge ok">Live</span>');
    expect(live.text).toContain('The automation is live.');
    expect((await h.runtime.services.automations.get({ userId: t.alice.user_id }, utr)).status).toBe(AUTOMATION_STATUS.live);

    const paused = await asFragment(t.web.post(`/automations/${utr}/pause`), 'automation-state').expect(200);
    expect(paused.text).toContain('<span class="badge warn">Paused</span>');
    const again = await asFragment(t.web.post(`/automations/${utr}/pause`), 'automation-state').expect(409);
    expect(again.text).toContain('Only a live automation can be paused; set it live first.');
  });

  test('when steps are added and one deleted then the page lists the rest in order', async () => {
    const utr = await create({ automation_name: 'Steps' });
    const step = (subject: string, waiting_type: string, waiting_period: string) =>
      t.web.post(`/automations/${utr}/steps`, { utr, subject, sender_id: String(refs.sender), template_id: String(refs.template), waiting_type, waiting_period });
    await step('Welcome!', 'instantly', '0').expect(303);
    await step('Day two tips', 'days', '2').expect(303);
    const page = await t.web.get(`/automations/${utr}`).expect(200);
    expect(page.text).toContain('Step added.');
    expect(page.text).toMatch(/<strong>Welcome!<\/strong>[\s\S]*<strong>Day two tips<\/strong>/);
    expect(page.text).toContain('2 days after the previous step');
    const [first] = await h.runtime.services.automationSchedules.list({ userId: t.alice.user_id }, utr);
    expect(first.preview_img).toBe('welcome.png');

    const bad = await step('', 'weeks', 'x').expect(422);
    expect(bad.text).toContain('<p class="field-error" id="subject-error">The subject field is required.</p>');
    expect(bad.text).toContain('<p class="field-error" id="waiting_type-error">The selected waiting type is invalid.</p>');

    await t.web.post(`/automations/${utr}/steps/${first.utr}/delete`).expect(303);
    const after = await h.runtime.services.automationSchedules.list({ userId: t.alice.user_id }, utr);
    expect(after.map((s) => s.subject)).toEqual(['Day two tips']);
  });

  test('when a step is edited then its page shows the saved values and the list says "1 day"; invalid input stays in the form; other accounts get 404', async () => {
    const utr = await create({ automation_name: 'Editable' });
    await t.web.post(`/automations/${utr}/steps`, { utr, subject: 'First <news>', sender_id: String(refs.sender), template_id: String(refs.template), waiting_type: 'days', waiting_period: '2' }).expect(303);
    const [step] = await h.runtime.services.automationSchedules.list({ userId: t.alice.user_id }, utr);
    const show = await t.web.get(`/automations/${utr}`).expect(200);
    expect(show.text).toContain(`href="/automations/${utr}/steps/${step.utr}"`);

    const form = await t.web.get(`/automations/${utr}/steps/${step.utr}`).expect(200);
    expect(form.text).toContain('value="First &lt;news&gt;"');
    const save = (fields: Record<string, string>) =>
      t.web.post(`/automations/${utr}/steps/${step.utr}`, { subject: 'Edited', sender_id: String(refs.sender), template_id: String(refs.template), waiting_type: 'days', waiting_period: '1', template_html: '<p>Hi ((first_name))</p>', ...fields });
    const bad = await save({ subject: '', waiting_period: '-1' }).expect(422);
    expect(bad.text).toContain('<p class="field-error" id="subject-error">The subject field is required.</p>');
    expect(bad.text).toContain('&lt;p&gt;Hi ((first_name))&lt;/p&gt;');
    await save({}).expect(303);
    const [saved] = await h.runtime.services.automationSchedules.list({ userId: t.alice.user_id }, utr);
    expect(saved).toMatchObject({ utr: step.utr, subject: 'Edited', waiting_period: 1, template_html: '<p>Hi ((first_name))</p>', preview_img: 'welcome.png' });
    const page = await t.web.get(`/automations/${utr}`).expect(200);
    expect(page.text).toContain('Step saved. Messages not sent yet go out as edited.');
    expect(page.text).toContain('1 day after the contact joins');
    expect(page.text).not.toContain('1 days');

    await t.web.post(`/automations/${utr}/steps/${step.utr}/test`, { email_address: 'me@example.net' }).expect(303);
    const tested = await t.web.get(`/automations/${utr}/steps/${step.utr}`).expect(200);
    expect(tested.text).toContain('Test sent to me@example.net. It is not counted in the statistics.');
    expect(Number((await h.runtime.db('send_messages').where({ user_id: t.alice.user_id, email: 'me@example.net' }).count({ n: '*' }).first())?.n)).toBe(1);
    const noAddress = await t.web.post(`/automations/${utr}/steps/${step.utr}/test`, { email_address: '' }).expect(422);
    expect(noAddress.text).toContain('<p class="field-error" id="email_address-error">The email address field is required.</p>');

    const bob = await signIn(h, t.bob);
    await bob.post(`/automations/${utr}/steps/${step.utr}/test`, { email_address: 'me@example.net' }).expect(404);
    await bob.get(`/automations/${utr}/steps/${step.utr}`).expect(404);
    await bob.post(`/automations/${utr}/steps/${step.utr}`, { subject: 'Taken', sender_id: '1', template_id: '1', waiting_type: 'days', waiting_period: '1' }).expect(404);
    const other = await create({ automation_name: 'Other' });
    await t.web.get(`/automations/${other}/steps/${step.utr}`).expect(404);
  });

  test('when an automation is duplicated and deleted then the list follows; another account’s is a 404', async () => {
    const utr = await create({ automation_name: 'Twin' });
    const copy = await asFragment(t.web.post(`/automations/${utr}/duplicate`), 'automation-list').expect(200);
    expect(copy.text).toContain('Copy saved as a draft, with its steps.');
    const del = await asFragment(t.web.post(`/automations/${utr}/delete`), 'automation-list').expect(200);
    expect(del.text).not.toContain(`/automations/${utr}"`);

    const mine = await create({ automation_name: 'Alice only' });
    const bob = await signIn(h, t.bob);
    await bob.get(`/automations/${mine}`).expect(404);
    await bob.post(`/automations/${mine}/settings`, { utr: mine, automation_name: 'Taken' }).expect(404);
    await bob.post(`/automations/${mine}/live`).expect(404);
    await bob.post(`/automations/${mine}/pause`).expect(404);
    await bob.post(`/automations/${mine}/steps`, { utr: mine, subject: 'x', sender_id: '1', template_id: '1', waiting_type: 'days', waiting_period: '1' }).expect(404);
    await bob.post(`/automations/${mine}/duplicate`).expect(404);
    await bob.post(`/automations/${mine}/delete`).expect(404);
    expect((await h.runtime.services.automations.get({ userId: t.alice.user_id }, mine)).automation_name).toBe('Alice only');
  });

  test('when the account has segments then the forms offer them as targets and the pages name the chosen one', async () => {
    const ctx = { userId: t.alice.user_id };
    const segment = await h.runtime.services.segments.save(ctx, { segment_name: 'Trials in <Paris>', contact_type_id: refs.type, select_field: ['city'], select_operator: ['is'], value: ['Paris'], query_type: 'and' });
    const form = await t.web.get('/automations/new').expect(200);
    expect(form.text).toContain(`<option value="contacts_${refs.type}">Contact type: Trials</option>`);
    expect(form.text).toContain(`<option value="segments_${segment}">Segment: Trials in &lt;Paris&gt;</option>`);

    const utr = await create({ automation_name: 'Parisian trials', automation_for: `segments_${segment}` });
    expect(await h.runtime.services.automations.get(ctx, utr)).toMatchObject({ automation_for: segment, automation_for_table: 'segments_' });
    const page = await t.web.get(`/automations/${utr}`).expect(200);
    expect(page.text).toContain(`<option value="segments_${segment}" selected>Segment: Trials in &lt;Paris&gt;</option>`);
    const list = await t.web.get('/automations').expect(200);
    expect(list.text).toMatch(/<td>Welcome<\/td>\s*<td>Segment: Trials in &lt;Paris&gt;<\/td>/);

    // Another account's segment is refused like any reference outside the account.
    const bobSegment = await h.runtime.services.segments.save({ userId: t.bob.user_id }, { segment_name: 'Bob’s', contact_type_id: await h.runtime.services.contactTypes.add({ userId: t.bob.user_id }, { name: 'B' }), select_field: [], select_operator: [], value: [], query_type: 'and' });
    const refused = await t.web.post(`/automations/${utr}/settings`, { utr, automation_name: 'Parisian trials', automation_for: `segments_${bobSegment}`, unsubscribe_group_id: '' }).expect(422);
    expect(refused.text).toContain('<p class="field-error" id="automation_for-error">The selected automation for is invalid.</p>');
  });
});
