import { addCustomField, sendingFixtures } from '../support/fixtures';
import { useHarness } from '../support/harness';
import { asFragment, useTwoAccounts } from '../support/web';

/** The dashboard's Signup forms pages: the same service as the public form. */
describe('dashboard: signup forms', () => {
  const h = useHarness();
  const t = useTwoAccounts(h);
  const f = sendingFixtures(h);
  let type = 0;
  let news = 0;
  let hidden = 0;

  beforeAll(async () => {
    type = await h.runtime.services.contactTypes.add({ userId: t.alice.user_id }, { name: 'Readers' });
    news = await f.group(t.alice.user_id, 'News', 1);
    hidden = await f.group(t.alice.user_id, 'Internal', 0);
    await addCustomField(h, t.alice, 'company', 'text');
  });

  const formsOf = (userId: number) => h.runtime.db('signup_forms').where({ user_id: userId }).whereNull('deleted_at').orderBy('id');

  test('when a form is created then its page shows the public URL and an HTML snippet that posts there, escaped as text', async () => {
    const page = await t.web.get('/signup-forms/new').expect(200);
    expect(page.text).toContain('value="first_name" checked');
    expect(page.text).toContain('value="company"');
    expect(page.text).toContain(`value="${news}" checked`);
    expect(page.text).not.toContain('Internal');

    const res = await t.web.post('/signup-forms/new', { name: 'Weekly <letter>', contact_type_id: String(type), fields: ['first_name', 'company'] as unknown as string, group_ids: String(news), thank_you: 'Welcome!' }).expect(303);
    const [form] = await formsOf(t.alice.user_id);
    expect(res.headers.location).toBe(`/signup-forms/${form.id}`);
    const show = await t.web.get(`/signup-forms/${form.id}`).expect(200);
    const url = `http://campaigns.test/subscribe/${form.public_id}`;
    expect(form.public_id).toMatch(/^[0-9a-f]{16}$/);
    expect(show.text).toContain(`<a href="${url}"`);
    // The snippet is shown as text to copy (escaped), never as markup of the page.
    expect(show.text).toContain(`&lt;form action=&quot;${url}&quot; method=&quot;post&quot;`);
    expect(show.text).toContain('name=&quot;custom_field[company]&quot;');
    expect(show.text).toContain(`name=&quot;groups&quot; value=&quot;${news}&quot; checked&gt; News`);
    expect(show.text).toContain('name=&quot;website&quot; tabindex=&quot;-1&quot;');
    expect(show.text).toContain('<h1>Weekly &lt;letter&gt;</h1>');

    const list = await t.web.get('/signup-forms').expect(200);
    expect(list.text).toContain(`/subscribe/${form.public_id}`);
    expect(list.text).toContain('Readers');
    expect(list.text).toContain('href="/signup-forms"');
  });

  test('when a form is saved without a name or with a group that is not offered then the page says so in plain words and keeps the ticks', async () => {
    const res = await t.web.post('/signup-forms/new', { name: '', contact_type_id: '', fields: 'last_name', group_ids: String(hidden) }).expect(422);
    expect(res.text).toContain('The name field is required.');
    expect(res.text).toContain('Choose a contact type.');
    expect(res.text).toContain('value="last_name" checked');
    expect(res.text).not.toContain('value="first_name" checked');
    const refused = await t.web.post('/signup-forms/new', { name: 'Sneaky', contact_type_id: String(type), group_ids: String(hidden) }).expect(422);
    expect(refused.text).toContain('Choose groups that are shown on preference pages.');
  });

  test('when a form is edited and then deleted from the list then the list updates in place and its public page is gone', async () => {
    const id = await h.runtime.services.signupForms.add({ userId: t.alice.user_id }, { name: 'Old name', contact_type_id: type, fields: [], group_ids: [], thank_you: '' });
    const edit = await t.web.get(`/signup-forms/${id}/edit`).expect(200);
    expect(edit.text).toContain('value="Old name"');
    await t.web.post(`/signup-forms/${id}/edit`, { name: 'New name', contact_type_id: String(type), fields: 'last_name' }).expect(303);
    const saved = await h.runtime.services.signupForms.get({ userId: t.alice.user_id }, id);
    expect(saved).toMatchObject({ name: 'New name', fields: ['last_name'], group_ids: [] });

    const res = await asFragment(t.web.post(`/signup-forms/${id}/delete`), 'signup-form-list').expect(200);
    expect(res.text).toContain('id="signup-form-list"');
    expect(res.text).not.toContain('New name');
    await t.web.get(`/subscribe/${saved.public_id}`).expect(404);
  });

  test('when another account’s form id is used then every page and action answers 404', async () => {
    const bobType = await h.runtime.services.contactTypes.add({ userId: t.bob.user_id }, { name: 'Bob readers' });
    const id = await h.runtime.services.signupForms.add({ userId: t.bob.user_id }, { name: 'Bob form', contact_type_id: bobType, fields: [], group_ids: [], thank_you: '' });
    await t.web.get(`/signup-forms/${id}`).expect(404);
    await t.web.get(`/signup-forms/${id}/edit`).expect(404);
    await t.web.post(`/signup-forms/${id}/edit`, { name: 'Mine now', contact_type_id: String(type) }).expect(404);
    await t.web.post(`/signup-forms/${id}/delete`).expect(404);
    expect(await formsOf(t.bob.user_id)).toEqual([expect.objectContaining({ name: 'Bob form' })]);
    // Alice cannot point her own form at Bob's contact type either.
    const res = await t.web.post('/signup-forms/new', { name: 'Stolen', contact_type_id: String(bobType) }).expect(422);
    expect(res.text).toContain('Choose a contact type from the list.');
  });
});
