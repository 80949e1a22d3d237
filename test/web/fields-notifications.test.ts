import { messages } from '../../src/lib/validation';
import { useHarness } from '../support/harness';
import { asFragment, useTwoAccounts } from '../support/web';

describe('dashboard custom fields and notification recipients', () => {
  const h = useHarness();
  const t = useTwoAccounts(h);


  describe('custom fields', () => {
    test('when a field is added then the list shows it with its placeholder, and the reserved fields are listed', async () => {
      const res = await t.web.post('/custom-fields', { field_name: 'company_name', field_type: 'text' }).expect(303);
      expect(res.headers.location).toBe('/custom-fields');
      const page = await t.web.get('/custom-fields').expect(200);
      expect(page.text).toContain('Field “company_name” added.');
      expect(page.text).toMatch(/<td>company_name<\/td>\s*<td>Text<\/td>\s*<td><code>\(\(company_name\)\)<\/code><\/td>/);
      // Reserved fields by their words, each with the placeholder that inserts it.
      expect(page.text).toContain('<li>First name <code>((first_name))</code></li>');
      expect(page.text).toContain('<li>State, province or region <code>((state_province_region))</code></li>');
    });

    test('when the name is invalid, taken or reserved then the form says so next to the field', async () => {
      const bad = await t.web.post('/custom-fields', { field_name: 'has space', field_type: 'text' }).expect(422);
      expect(bad.text).toContain('<p class="field-error" id="field_name-error">The field name format is invalid.</p>');
      await t.web.post('/custom-fields', { field_name: 'age_years', field_type: 'number' }).expect(303);
      const taken = await t.web.post('/custom-fields', { field_name: 'AGE_YEARS', field_type: 'number' }).expect(422);
      expect(taken.text).toContain('The field name has already been taken.');
      const reserved = await t.web.post('/custom-fields', { field_name: 'email', field_type: 'text' }).expect(422);
      expect(reserved.text).toContain(`<p class="field-error" id="field_name-error">${messages.reserved('field_name')}</p>`);
      const type = await t.web.post('/custom-fields', { field_name: 'x1', field_type: 'colour' }).expect(422);
      expect(type.text).toContain('<p class="field-error" id="field_type-error">The selected field type is invalid.</p>');
    });

    test('when a field is deleted with htmx then the list comes back without it', async () => {
      const id = await h.runtime.services.fields.addCustom({ userId: t.alice.user_id }, { field_name: 'doomed_field', field_type: 'text' });
      const res = await asFragment(t.web.post('/custom-fields/delete', { ids: String(id) }), 'custom-field-list').expect(200);
      expect(res.text.trimStart()).toMatch(/^<div id="custom-field-list">/);
      expect(res.text).not.toContain('doomed_field');
      expect(res.text).toContain('Field deleted, with its values on every contact.');
    });

    test('when another account’s field is deleted then it is a 404 and the field stays', async () => {
      const id = await h.runtime.services.fields.addCustom({ userId: t.bob.user_id }, { field_name: 'bobs_field', field_type: 'text' });
      await t.web.post('/custom-fields/delete', { ids: String(id) }).expect(404);
      expect((await h.runtime.services.fields.listCustom({ userId: t.bob.user_id })).map((f) => f.field_name)).toEqual(['bobs_field']);
      expect((await t.web.get('/custom-fields')).text).not.toContain('bobs_field');
    });
  });

  describe('notification recipients', () => {
    test('when a recipient is saved twice then it is listed once with the newer name', async () => {
      await t.web.post('/notification-recipients', { email_owner: 'Ops', email_address: 'ops@example.com' }).expect(303);
      await t.web.post('/notification-recipients', { email_owner: 'Operations <team>', email_address: 'OPS@example.com' }).expect(303);
      const page = await t.web.get('/notification-recipients').expect(200);
      expect(page.text).toContain('Recipient saved.');
      expect(page.text).toContain('<td>Operations &lt;team&gt;</td>');
      expect(page.text.match(/<td>ops@example\.com<\/td>/g)).toHaveLength(1);
    });

    test('when the form is empty then the reference’s messages show next to the fields', async () => {
      const res = await t.web.post('/notification-recipients', {}).expect(422);
      expect(res.text).toContain('<p class="field-error" id="email_address-error">The email address field is required.</p>');
      expect(res.text).toContain('<p class="field-error" id="email_owner-error">The name field is required</p>');
    });

    test('when recipients are deleted then they leave the list; another account’s are a 404', async () => {
      await h.runtime.services.notificationRecipients.save({ userId: t.alice.user_id }, { email_address: 'gone@example.com', email_owner: 'Gone' });
      const mine = (await h.runtime.services.notificationRecipients.list({ userId: t.alice.user_id })).rows.find((r) => r.email_address === 'gone@example.com')!;
      const res = await asFragment(t.web.post('/notification-recipients/delete', { ids: String(mine.id) }), 'notification-recipient-list').expect(200);
      expect(res.text).not.toContain('gone@example.com');
      await h.runtime.services.notificationRecipients.save({ userId: t.bob.user_id }, { email_address: 'bob@example.com', email_owner: 'Bob' });
      const bobs = (await h.runtime.services.notificationRecipients.list({ userId: t.bob.user_id })).rows[0];
      await t.web.post('/notification-recipients/delete', { ids: String(bobs.id) }).expect(404);
      expect((await h.runtime.services.notificationRecipients.list({ userId: t.bob.user_id })).rows).toHaveLength(1);
    });
  });
});
