import { addContact, addContactType, addCustomField, countryId } from '../support/fixtures';
import { useHarness } from '../support/harness';
import { asFragment, signIn, useTwoAccounts } from '../support/web';

describe('dashboard contacts', () => {
  const h = useHarness();
  const t = useTwoAccounts(h);
  let type = 0;
  let france = 0;

  beforeAll(async () => {
    type = await addContactType(h, t.alice, 'Customers');
    await addCustomField(h, t.alice, 'age', 'number');
    await addCustomField(h, t.alice, 'nickname', 'text');
    france = await countryId(h, 'FR');
  });

  const contactOf = (email: string) => h.runtime.db('contacts').where({ user_id: t.alice.user_id, email_key: email }).whereNull('deleted_at').first();

  test('when a contact is added with custom fields then the list shows it with a message, and the edit form holds its values', async () => {
    const res = await t.web
      .post('/contacts/new', {
        contact_type_id: String(type),
        email: 'ada@example.com',
        first_name: 'Ada',
        last_name: 'Lovelace',
        country: String(france),
        city: 'Paris',
        'custom_field[age]': '36',
        'custom_field[nickname]': '<b>Countess</b>',
      })
      .expect(303);
    expect(res.headers.location).toBe('/contacts');
    const list = await t.web.get('/contacts').expect(200);
    expect(list.text).toContain('Contact added.');
    const id = Number((await contactOf('ada@example.com')).id);
    expect(list.text).toContain(`<a href="/contacts/${id}/edit">Ada Lovelace</a>`);
    expect(list.text).toContain('<td>France</td>');

    const form = await t.web.get(`/contacts/${id}/edit`).expect(200);
    expect(form.text).toContain('name="custom_field[age]" type="number" value="36"');
    expect(form.text).toContain('name="custom_field[nickname]" type="text" value="&lt;b&gt;Countess&lt;/b&gt;"');
    expect(form.text).toContain(`<option value="${france}" selected>France</option>`);
    expect(form.text).toContain(`<option value="${type}" selected>Customers</option>`);
  });

  test('when a contact is edited then the service stores the new values, custom fields included', async () => {
    const id = await addContact(h, t.alice, { contact_type_id: type, email: 'grace@example.com', country: france, first_name: 'Grace' });
    await t.web
      .post(`/contacts/${id}/edit`, { contact_type_id: String(type), email: 'grace@example.com', country: String(france), first_name: 'Grace', last_name: 'Hopper', 'custom_field[age]': '85' })
      .expect(303);
    const contact = await h.runtime.services.contacts.get({ userId: t.alice.user_id }, id);
    expect(contact).toMatchObject({ last_name: 'Hopper', custom_field: { age: { field_name: 'age', field_value: '85' }, nickname: { field_name: 'nickname', field_value: null } } });
    expect((await t.web.get('/contacts').expect(200)).text).toContain('Contact saved.');
  });

  test('when the form is wrong then each message of the shared rules is shown next to its field, with the values kept', async () => {
    await addContact(h, t.alice, { contact_type_id: type, email: 'taken@example.com', country: france });
    const res = await t.web.post('/contacts/new', { contact_type_id: String(type), email: 'taken@example.com', country: String(france), 'custom_field[age]': 'old', first_name: 'Kept' }).expect(422);
    expect(res.text).toContain('<p class="field-error" id="email-error">The email has already been taken.</p>');
    expect(res.text).toContain('<p class="field-error" id="field-custom-age-error">The age must be a number.</p>');
    expect(res.text).toContain('value="Kept"');
    const empty = await t.web.post('/contacts/new', {}).expect(422);
    expect(empty.text).toContain('<p class="field-error" id="email-error">The email field is required.</p>');
    expect(empty.text).toContain('<p class="field-error" id="contact_type_id-error">Choose a contact type.</p>');
  });

  test('when the list is searched then only matching contacts come back, as the list fragment for htmx', async () => {
    await addContact(h, t.alice, { contact_type_id: type, email: 'searchme@example.com', country: france, first_name: 'Findable' });
    const page = await t.web.get('/contacts?search=findable').expect(200);
    expect(page.text).toContain('value="findable"');
    expect(page.text).toContain('searchme@example.com');
    expect(page.text).not.toContain('ada@example.com');
    const fragment = await asFragment(t.web.get('/contacts?search=nobody-here'), 'contact-list').expect(200);
    expect(fragment.text.trimStart()).toMatch(/^<div id="contact-list">/);
    expect(fragment.text).toContain('No contact matches “nobody-here”.');
  });

  test('when there are more contacts than a page then the list is paged, keeping the search', async () => {
    const carol = await h.account();
    const client = await signIn(h, carol);
    const carolType = await addContactType(h, carol, 'Many');
    const csv = ['email', ...Array.from({ length: 55 }, (_, i) => `p${i}@example.com`)].join('\n');
    await h.api(carol).post('/contacts/upload-csv').field('contact_type_id', String(carolType)).attach('file', Buffer.from(csv), 'p.csv').expect(200);
    const first = await client.get('/contacts?search=example').expect(200);
    expect(first.text).toContain('1–50 of 55');
    const next = /href="(\/contacts\?search=example&amp;after=\d+&amp;page=2)" rel="next"/.exec(first.text)?.[1];
    expect(next).toBeDefined();
    const second = await client.get(next!.replace(/&amp;/g, '&')).expect(200);
    expect(second.text).toContain('51–55 of 55');
  });

  test('when contacts are deleted in bulk through htmx then the list comes back without them, with a message', async () => {
    const one = await addContact(h, t.alice, { contact_type_id: type, email: 'bulk1@example.com', country: france });
    const two = await addContact(h, t.alice, { contact_type_id: type, email: 'bulk2@example.com', country: france });
    const form = `_csrf=${t.web.csrf}&ids=${one}&ids=${two}`;
    const res = await asFragment(t.web.agent.post('/contacts/delete').type('form').send(form), 'contact-list').expect(200);
    expect(res.text.trimStart()).toMatch(/^<div id="contact-list">/);
    expect(res.text).not.toContain('bulk1@example.com');
    expect(res.text).toContain('2 contacts deleted.');
    expect(await contactOf('bulk1@example.com')).toBeUndefined();
  });

  test('when another account’s contact is addressed then its pages and deletes answer 404 and it stays', async () => {
    const bobType = await addContactType(h, t.bob, 'Bob type');
    const id = await addContact(h, t.bob, { contact_type_id: bobType, email: 'bob-contact@example.com', country: france });
    await t.web.get(`/contacts/${id}/edit`).expect(404);
    await t.web.post(`/contacts/${id}/edit`, { contact_type_id: String(type), email: 'stolen@example.com', country: String(france) }).expect(404);
    await t.web.post('/contacts/delete', { ids: String(id) }).expect(404);
    await t.web.post('/contacts/new', { contact_type_id: String(bobType), email: 'into-bob@example.com', country: String(france) }).expect(422);
    expect(await h.runtime.services.contacts.get({ userId: t.bob.user_id }, id)).toMatchObject({ email: 'bob-contact@example.com' });
  });
});
