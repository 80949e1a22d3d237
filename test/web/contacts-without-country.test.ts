import { addContactType, countryId, sendingFixtures } from '../support/fixtures';
import { useHarness } from '../support/harness';
import { useTwoAccounts } from '../support/web';

/** A contact that came in without a country (an import, a signup form) is edited without inventing one. */
describe('dashboard contact without a country', () => {
  const h = useHarness();
  const t = useTwoAccounts(h);

  test('when a contact without a country is saved with the country left empty then it saves and stays without one', async () => {
    const type = await addContactType(h, t.alice, 'Imported');
    const id = await sendingFixtures(h).contact(t.alice.user_id, type, 'nocountry@example.com', { country: null });
    const form = await t.web.get(`/contacts/${id}/edit`).expect(200);
    expect(form.text).toContain('This contact came in without a country; you may leave it so.');
    expect(form.text).not.toMatch(/<select id="field-country" name="country" required/);
    await t.web.post(`/contacts/${id}/edit`, { contact_type_id: String(type), email: 'nocountry@example.com', country: '', first_name: 'Noor' }).expect(303);
    expect(await h.runtime.db('contacts').where({ id }).first('first_name', 'country')).toEqual({ first_name: 'Noor', country: null });

    // Choosing one later sets it; the API keeps the reference's rule.
    const france = await countryId(h, 'FR');
    await t.web.post(`/contacts/${id}/edit`, { contact_type_id: String(type), email: 'nocountry@example.com', country: String(france) }).expect(303);
    expect((await h.runtime.db('contacts').where({ id }).first('country')).country).toBe(france);
    const refused = await t.web.post(`/contacts/${id}/edit`, { contact_type_id: String(type), email: 'nocountry@example.com', country: '' }).expect(422);
    expect(refused.text).toContain('id="country-error"');
    const api = await h.api(t.alice).post('/contacts/update').send({ contact_id: id, contact_type_id: type, email: 'nocountry@example.com' });
    expect(api.status).toBe(422);
    expect(api.body.errors.country).toEqual(['The country field is required.']);
  });
});
