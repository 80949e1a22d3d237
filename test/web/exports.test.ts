import { addContact, addContactType, countryId } from '../support/fixtures';
import { useHarness } from '../support/harness';
import { signIn, useTwoAccounts } from '../support/web';

describe('dashboard CSV exports', () => {
  const h = useHarness();
  const t = useTwoAccounts(h);

  test('when the contacts, global unsubscribes and a group are shown then each offers its CSV, which downloads', async () => {
    const type = await addContactType(h, t.alice, 'Readers');
    await addContact(h, t.alice, { contact_type_id: type, email: 'reader@example.com', first_name: 'Rea', country: await countryId(h, 'FR') });
    await h.api(t.alice).post('/global-unsubscribes/save').send({ email_address: 'gone@example.com' }).expect(200);
    await h.api(t.alice).post('/unsubscribes-groups/save').send({ group_name: 'News', description: 'Weekly', is_display: 1 }).expect(200);
    const group = await h.runtime.db('unsubscribe_groups').where({ user_id: t.alice.user_id }).first('id');
    await h.api(t.alice).post('/unsubscribes-groups/manually-add').send({ unsubscribe_groups_id: group.id, email_address: 'left@example.com' }).expect(200);

    const link = (href: string) => `<a href="${href}" class="button" hx-boost="false" download>Export CSV</a>`;
    expect((await t.web.get('/contacts').expect(200)).text).toContain(link('/contacts/export.csv'));
    expect((await t.web.get('/global-unsubscribes').expect(200)).text).toContain(link('/global-unsubscribes/export.csv'));
    expect((await t.web.get(`/unsubscribe-groups/${group.id}`).expect(200)).text).toContain(link(`/unsubscribe-groups/${group.id}/export.csv`));

    const contacts = await t.web.get('/contacts/export.csv').expect(200);
    expect(contacts.headers['content-disposition']).toBe('attachment; filename=contacts.csv');
    expect(contacts.text.split('\r\n')[1]).toBe('Rea,,reader@example.com,,France,,,,,,');
    expect((await t.web.get('/global-unsubscribes/export.csv').expect(200)).text).toContain('\r\ngone@example.com,');
    expect((await t.web.get(`/unsubscribe-groups/${group.id}/export.csv`).expect(200)).text).toContain('\r\nleft@example.com,');

    // The dashboard's downloads give times on the account's clock with the offset; the API keeps UTC.
    await h.runtime.db('global_unsubscribes').where({ user_id: t.alice.user_id }).update({ created_at: '2026-07-01T10:15:03.000Z' });
    await h.runtime.db('unsubscribe_group_recipients').where({ user_id: t.alice.user_id }).update({ created_at: '2026-12-01T10:15:03.000Z' });
    await h.runtime.db('accounts').where({ id: t.alice.user_id }).update({ time_zone: 'Europe/Berlin' });
    const alice = await signIn(h, t.alice);
    expect((await alice.get('/global-unsubscribes/export.csv').expect(200)).text).toBe('email_address,created_at\r\ngone@example.com,2026-07-01 12:15:03 +02:00\r\n');
    expect((await alice.get(`/unsubscribe-groups/${group.id}/export.csv`).expect(200)).text).toBe('email_address,created_at\r\nleft@example.com,2026-12-01 11:15:03 +01:00\r\n');
    const api = await h.api(t.alice).get('/global-unsubscribes/export').expect(200);
    expect(api.text).toContain('gone@example.com,2026-07-01T10:15:03.000000Z');

    // Bob sees none of it.
    const bob = await signIn(h, t.bob);
    await bob.get(`/unsubscribe-groups/${group.id}/export.csv`).expect(404);
    expect((await bob.get('/contacts/export.csv').expect(200)).text).toBe('first_name,last_name,email,alt_email,country,state,city,address_line1,address_line2,state_province_region,postal_code\r\n');
  });
});
