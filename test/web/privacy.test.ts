import { addContact, addContactType, countryId } from '../support/fixtures';
import { useHarness } from '../support/harness';
import { useTwoAccounts } from '../support/web';

describe('dashboard privacy requests', () => {
  const h = useHarness();
  const t = useTwoAccounts(h);

  test('when an address is looked up then its data downloads as JSON, and erasing needs the confirmation, then removes the contact', async () => {
    const type = await addContactType(h, t.alice, 'People');
    await addContact(h, t.alice, { contact_type_id: type, email: 'ask@example.com', first_name: 'Ask', country: await countryId(h, 'FR') });
    expect((await t.web.get('/contacts').expect(200)).text).toContain('<a href="/contacts/privacy" class="button">Privacy requests</a>');
    const page = await t.web.get('/contacts/privacy').expect(200);
    expect(page.text).toContain('<form method="get" action="/contacts/privacy/export.json" hx-boost="false">');

    const json = await t.web.get('/contacts/privacy/export.json?email=ask@example.com').expect(200);
    expect(json.headers['content-disposition']).toBe('attachment; filename=privacy-export.json');
    expect(JSON.parse(json.text)).toMatchObject({ email: 'ask@example.com', contacts: [{ email: 'ask@example.com', first_name: 'Ask' }] });

    const unconfirmed = await t.web.post('/contacts/privacy/erase', { email: 'ask@example.com' }).expect(422);
    expect(unconfirmed.text).toContain('Tick the box to confirm the erasure.');
    expect(await h.runtime.db('contacts').where({ email_key: 'ask@example.com' }).first('id')).toBeDefined();

    const done = await t.web.post('/contacts/privacy/erase', { email: 'ask@example.com', confirm: '1' }).expect(303);
    expect(done.headers.location).toBe('/contacts/privacy');
    const after = await t.web.get('/contacts/privacy').expect(200);
    expect(after.text).toContain('ask@example.com was erased: 1 contact and 0 segment entries deleted, the address removed from 0 sent messages.');
    expect(await h.runtime.db('contacts').where({ email_key: 'ask@example.com' }).first('id')).toBeUndefined();
  });
});
