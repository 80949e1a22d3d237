import request from 'supertest';
import { emailKey } from '../../src/lib/email-key';
import { addCustomField } from '../support/fixtures';
import { useHarness } from '../support/harness';
import { useSmtpSink } from '../support/smtp';
import { useTwoAccounts } from '../support/web';

/** The confirmation link of a mail's text part. */
function confirmLink(text: string | undefined): string {
  const match = /http:\/\/campaigns\.test(\/subscribe\/confirm\/[\w-]+)/.exec(text ?? '');
  if (!match) throw new Error(`no confirmation link in: ${text}`);
  return match[1];
}

/** A signup form that asks the country and the account's custom fields, some of them required. */
describe('signup forms: country and custom fields the account chooses', () => {
  const sink = useSmtpSink({ emptyBeforeEach: true });
  const h = useHarness({ SMTP_URL: () => sink.url });
  const t = useTwoAccounts(h);
  let type = 0;
  let country: { id: number; name: string };

  beforeAll(async () => {
    type = await h.runtime.services.contactTypes.add({ userId: t.alice.user_id }, { name: 'Readers' });
    await addCustomField(h, t.alice, 'company', 'text');
    await addCustomField(h, t.alice, 'age', 'number');
    await addCustomField(h, t.alice, 'birthday', 'datetime-local');
    const row = await h.runtime.db('countries').orderBy('id').offset(3).first('id', 'name');
    country = { id: Number(row.id), name: String(row.name) };
  });

  const ctx = () => ({ userId: t.alice.user_id });
  const contactOf = (email: string) => h.runtime.db('contacts').where({ user_id: t.alice.user_id, email_key: emailKey(email) }).whereNull('deleted_at').first();
  const mailTo = (address: string) => sink.messages.filter((m) => m.to.some((to) => emailKey(to) === emailKey(address)));
  const post = (path: string, form: Record<string, unknown>) => request(h.runtime.app).post(path).type('form').send(form);

  /** Creates the form on the dashboard and answers its public id. */
  async function dashboardForm(name: string, fields: string[], required: string[]): Promise<string> {
    await t.web.post('/signup-forms/new', { name, contact_type_id: String(type), fields: fields as unknown as string, required_fields: required as unknown as string }).expect(303);
    const row = await h.runtime.db('signup_forms').where({ user_id: t.alice.user_id, name }).first();
    return String(row.public_id);
  }

  test('when the editor is opened then country and every custom field can be asked and made required', async () => {
    const page = await t.web.get('/signup-forms/new').expect(200);
    expect(page.text).toContain('Required fields');
    for (const value of ['country', 'company', 'age', 'birthday']) {
      expect(page.text).toContain(`name="fields" value="${value}"`);
      expect(page.text).toContain(`name="required_fields" value="${value}"`);
    }
  });

  test('when a required field is not among the fields asked then the editor refuses it in plain words and keeps the ticks', async () => {
    const res = await t.web.post('/signup-forms/new', { name: 'Odd', contact_type_id: String(type), fields: 'company', required_fields: ['company', 'country'] as unknown as string }).expect(422);
    expect(res.text).toContain('A required field must also be ticked under “Fields to ask”.');
    expect(res.text).toContain('name="required_fields" value="country" checked');
    expect(await h.runtime.db('signup_forms').where({ user_id: t.alice.user_id, name: 'Odd' }).first()).toBeUndefined();
  });

  test('when a required country and custom field are left empty then the public form says so in plain words, keeps what was typed and sends nothing', async () => {
    const id = await dashboardForm('Club <news>', ['first_name', 'country', 'company', 'age', 'birthday'], ['country', 'company']);
    const page = await request(h.runtime.app).get(`/subscribe/${id}`).expect(200);
    expect(page.text).toContain('<h1>Club &lt;news&gt;</h1>');
    expect(page.text).toMatch(/<label for="field-2" class="required">Country<\/label>\s*<select id="field-2" name="country" autocomplete="country" required>/);
    expect(page.text).toContain(`<option value="${country.id}">`);
    expect(page.text).toMatch(/<label for="field-3" class="required">company<\/label>/);
    expect(page.text).toContain('name="custom_field[age]" type="number"');
    expect(page.text).toContain('name="custom_field[birthday]" type="datetime-local"');
    expect(page.text).toMatch(/<label for="field-4">age<\/label>/);
    expect(page.text).not.toContain('<script');
    expect(page.text).not.toContain('style=');

    const res = await post(`/subscribe/${id}`, { email: 'ola@example.org', first_name: 'Ola', country: '', 'custom_field[company]': '  ', 'custom_field[age]': 'old', website: '' }).expect(422);
    expect(res.text).toContain('3 fields need your attention');
    expect(res.text).toContain('Choose your country.');
    expect(res.text).toContain('Fill in “company”.');
    expect(res.text).toContain('Enter a number.');
    expect(res.text).toContain('value="Ola"');
    expect(res.text).toMatch(/name="country"[^>]*aria-invalid="true" aria-describedby="error-2"/);
    const unknown = await post(`/subscribe/${id}`, { email: 'ola@example.org', country: '999999', 'custom_field[company]': 'Acme', website: '' }).expect(422);
    expect(unknown.text).toContain('Choose a country from the list.');
    expect(mailTo('ola@example.org')).toHaveLength(0);
    expect(await h.runtime.db('signups').where({ email_key: emailKey('ola@example.org') })).toHaveLength(0);
  });

  test('when the form is filled and confirmed then the new contact holds the country and the custom field values', async () => {
    const id = await dashboardForm('Members', ['first_name', 'country', 'company', 'age', 'birthday'], ['country', 'company']);
    await post(`/subscribe/${id}`, {
      email: 'Ida@Example.org',
      first_name: 'Ida',
      country: String(country.id),
      'custom_field[company]': 'Acme & Sons',
      'custom_field[age]': '42',
      'custom_field[birthday]': '1984-05-06T00:00',
      website: '',
    }).expect(200);
    expect(await contactOf('ida@example.org')).toBeUndefined();
    const [mail] = mailTo('ida@example.org');
    await post(confirmLink(mail.parsed.text), {}).expect(200);

    const row = await contactOf('ida@example.org');
    const contact = await h.runtime.services.contacts.get(ctx(), Number(row.id));
    expect(contact).toMatchObject({ first_name: 'Ida', country: String(country.id), contact_type_id: type });
    const values = Object.fromEntries(Object.values(contact.custom_field ?? {}).map((v) => [v.field_name, String(v.field_value)]));
    expect(values).toMatchObject({ company: 'Acme & Sons', age: '42' });
    expect(values.birthday).toMatch(/^1984-05-06/);
    // The dashboard's contact page shows the chosen country.
    const shown = await t.web.get(`/contacts/${row.id}/edit`).expect(200);
    expect(shown.text).toContain(`value="${country.id}" selected`);
  });

  test('when an existing contact confirms with optional fields left empty then it keeps its country and takes the new values', async () => {
    const id = await dashboardForm('Optional', ['country', 'company'], []);
    await post(`/subscribe/${id}`, { email: 'ida@example.org', country: '', 'custom_field[company]': 'Beta', website: '' }).expect(200);
    const [mail] = mailTo('ida@example.org');
    await post(confirmLink(mail.parsed.text), {}).expect(200);
    const contact = await h.runtime.services.contacts.get(ctx(), Number((await contactOf('ida@example.org')).id));
    expect(contact.country).toBe(String(country.id));
    const values = Object.fromEntries(Object.values(contact.custom_field ?? {}).map((v) => [v.field_name, String(v.field_value)]));
    expect(values).toMatchObject({ company: 'Beta', age: '42' });
  });

  test('when the form page is shown on the dashboard then required fields are marked and the snippet asks the country from a list', async () => {
    const id = await dashboardForm('Shown', ['country', 'age'], ['country']);
    const form = await h.runtime.db('signup_forms').where({ public_id: id }).first('id');
    const show = await t.web.get(`/signup-forms/${form.id}`).expect(200);
    expect(show.text).toContain('Country (required)');
    expect(show.text).toContain('&lt;select name=&quot;country&quot; required&gt;');
    expect(show.text).toContain(`&lt;option value=&quot;${country.id}&quot;&gt;`);
  });

  test('when a custom field has a label (an import made it from its header) then the form editor and the public form ask for it by that label', async () => {
    await h.runtime.services.fields.addCustom(ctx(), { field_name: 'Member_Since', field_type: 'datetime-local', label: 'Member Since' });
    expect((await t.web.get('/signup-forms/new').expect(200)).text).toContain('Member Since (custom field)');
    const id = await dashboardForm('Labelled', ['Member_Since'], []);
    const page = await request(h.runtime.app).get(`/subscribe/${id}`).expect(200);
    expect(page.text).toMatch(/<label for="field-\d+">Member Since<\/label>/);
    expect(page.text).toContain('name="custom_field[Member_Since]"');
  });
});
