import { addContact, addContactType, addCustomField, countryId } from '../support/fixtures';
import { TIMESTAMP, useHarness } from '../support/harness';
import { failed } from '../support/expectations';

describe('contacts', () => {
  const h = useHarness();
  const [alice, bob] = h.accounts(2);
  let leads: number;
  let france: number;

  beforeAll(async () => {
    leads = await addContactType(h, alice, 'Leads');
    france = await countryId(h, 'FR');
  });

  test('when a contact is added then the list shows it with its type and country name', async () => {
    const res = await h.api(alice)
      .post('/contacts/add')
      .field('contact_type_id', String(leads))
      .field('first_name', 'Ada')
      .field('last_name', 'Lovelace')
      .field('email', 'Ada@Example.com')
      .field('country', String(france))
      .field('city', 'Paris')
      .expect(200);
    expect(res.body).toEqual({ status: 'success', message: 'Contact Added Successfully' });

    const list = await h.api(alice).get('/contacts/list').expect(200);
    expect(list.body).toEqual({
      status: 'success',
      message: {
        contacts: [
          {
            id: expect.any(Number),
            user_id: alice.user_id,
            contact_type_id: leads,
            first_name: 'Ada',
            last_name: 'Lovelace',
            email: 'Ada@Example.com',
            alt_email: null,
            country: 'France',
            state: '',
            city: 'Paris',
            address_line1: '',
            address_line2: '',
            state_province_region: '',
            postal_code: '',
            time_zone: null,
            custom_field: null,
            deleted_at: null,
            created_at: expect.stringMatching(TIMESTAMP),
            updated_at: expect.stringMatching(TIMESTAMP),
            fullname: 'Ada Lovelace',
            contact_type: {
              id: leads,
              user_id: alice.user_id,
              name: 'Leads',
              deleted_at: null,
              created_at: expect.stringMatching(TIMESTAMP),
              updated_at: expect.stringMatching(TIMESTAMP),
            },
          },
        ],
      },
    });
  });

  test('when details are asked then the country is its id as a string and there is no contact_type', async () => {
    const id = await addContact(h, alice, { contact_type_id: leads, email: 'details@example.com', country: france, first_name: 'Dee' });
    const res = await h.api(alice).get(`/contacts/details?contact_id=${id}`).expect(200);
    expect(res.body.message.contact).toEqual({
      id,
      user_id: alice.user_id,
      contact_type_id: leads,
      first_name: 'Dee',
      last_name: '',
      email: 'details@example.com',
      alt_email: null,
      country: String(france),
      state: '',
      city: '',
      address_line1: '',
      address_line2: '',
      state_province_region: '',
      postal_code: '',
      time_zone: null,
      custom_field: null,
      deleted_at: null,
      created_at: expect.stringMatching(TIMESTAMP),
      updated_at: expect.stringMatching(TIMESTAMP),
      fullname: 'Dee',
    });
  });

  test('when required parameters are missing then each is reported at once', async () => {
    const res = await h.api(alice).post('/contacts/add').field('first_name', 'Nobody').expect(422);
    expect(res.body).toEqual(failed({
      contact_type_id: ['The contact type id field is required.'],
      email: ['The email field is required.'],
      country: ['The country field is required.'],
    }));
  });

  test('when the email, contact type or country is invalid then 422 names them', async () => {
    const bobType = await addContactType(h, bob, 'Bob type');
    const bad = await h.api(alice)
      .post('/contacts/add')
      .send({ contact_type_id: leads, email: 'not-an-email', country: france, alt_email: 'nope' })
      .expect(422);
    expect(bad.body.errors).toEqual({
      email: ['The email must be a valid email address.'],
      alt_email: ['The alt email must be a valid email address.'],
    });
    const unknown = await h.api(alice).post('/contacts/add').send({ contact_type_id: bobType, email: 'x@example.com', country: 999999 }).expect(422);
    expect(unknown.body).toEqual({
      status: 'failed',
      errors: { contact_type_id: ['The selected contact type id is invalid.'], country: ['The selected country is invalid.'] },
    });
  });

  test('when the email exists in the account in another case then 422 taken; another account may use it', async () => {
    await addContact(h, alice, { contact_type_id: leads, email: 'taken@example.com', country: france });
    const res = await h.api(alice).post('/contacts/add').send({ contact_type_id: leads, email: 'TAKEN@example.com', country: france }).expect(422);
    expect(res.body).toEqual({ status: 'failed', errors: { email: ['The email has already been taken.'] } });
    const bobType = await addContactType(h, bob, 'Bob leads');
    await h.api(bob).post('/contacts/add').send({ contact_type_id: bobType, email: 'taken@example.com', country: france }).expect(200);
  });

  test('when custom fields are given then they are checked by type and shown keyed by name', async () => {
    const carol = await h.account();
    const type = await addContactType(h, carol, 'Members');
    await addCustomField(h, carol, 'age', 'number');
    await addCustomField(h, carol, 'joined', 'datetime-local');
    await addCustomField(h, carol, 'team', 'text');

    const wrong = await h.api(carol)
      .post('/contacts/add')
      .field('contact_type_id', String(type))
      .field('email', 'm@example.com')
      .field('country', String(france))
      .field('custom_field[age]', 'forty')
      .field('custom_field[joined]', '2026-02-30')
      .field('custom_field[shoe]', '42')
      .expect(422);
    expect(wrong.body).toEqual(failed({
      'custom_field[age]': ['The age must be a number.'],
      'custom_field[joined]': ['The joined is not a valid date.'],
      'custom_field[shoe]': ['The selected shoe is invalid.'],
    }));

    const id = await addContact(h, carol, {
      contact_type_id: type,
      email: 'm@example.com',
      country: france,
      custom_field: { age: ' 42 ', joined: '2026-03-01 09:30' },
    });
    const res = await h.api(carol).get(`/contacts/details?contact_id=${id}`).expect(200);
    expect(res.body.message.contact.custom_field).toEqual({
      age: { field_name: 'age', field_value: '42' },
      joined: { field_name: 'joined', field_value: '2026-03-01T09:30' },
      team: { field_name: 'team', field_value: null },
    });
  });

  test('when updated then given values change, absent optional ones and other custom fields stay', async () => {
    const dave = await h.account();
    const type = await addContactType(h, dave, 'Old type');
    const other = await addContactType(h, dave, 'New type');
    await addCustomField(h, dave, 'age', 'number');
    await addCustomField(h, dave, 'team', 'text');
    const id = await addContact(h, dave, {
      contact_type_id: type,
      email: 'u@example.com',
      country: france,
      city: 'Lyon',
      custom_field: { age: '30', team: 'Red' },
    });
    await addContact(h, dave, { contact_type_id: type, email: 'other@example.com', country: france });
    const joined: number[][] = [];
    h.runtime.services.audienceEvents.onContactTypeJoin(async (event) => {
      if (event.userId === dave.user_id) joined.push(event.contactIds);
    });

    const res = await h.api(dave)
      .post('/contacts/update')
      .type('form')
      .send({ contact_id: id, contact_type_id: other, email: 'U2@example.com', country: await countryId(h, 'DE'), 'custom_field[age]': '31' })
      .expect(200);
    expect(res.body).toEqual({ status: 'success', message: 'Contact Updated Successfully' });
    const details = (await h.api(dave).get(`/contacts/details?contact_id=${id}`).expect(200)).body.message.contact;
    expect(details).toMatchObject({ contact_type_id: other, email: 'U2@example.com', city: 'Lyon', country: String(await countryId(h, 'DE')) });
    expect(details.custom_field).toEqual({ age: { field_name: 'age', field_value: '31' }, team: { field_name: 'team', field_value: 'Red' } });
    expect(joined).toEqual([[id]]);

    const taken = await h.api(dave).post('/contacts/update').send({ contact_id: id, contact_type_id: other, email: 'OTHER@example.com', country: france }).expect(422);
    expect(taken.body).toEqual({ status: 'failed', errors: { email: ['The email has already been taken.'] } });
    await h.api(dave).post('/contacts/update').send({ contact_id: id, contact_type_id: other, email: 'u2@EXAMPLE.com', country: france }).expect(200);

    const missing = await h.api(dave).post('/contacts/update').send({}).expect(422);
    expect(missing.body.errors).toEqual({
      contact_id: ['The contact id field is required.'],
      contact_type_id: ['The contact type id field is required.'],
      email: ['The email field is required.'],
      country: ['The country field is required.'],
    });
  });

  test('when another account addresses a contact then it is not found and unchanged', async () => {
    const id = await addContact(h, alice, { contact_type_id: leads, email: 'private@example.com', country: france });
    const bobType = await addContactType(h, bob, 'Bob own');
    await h.api(bob).get(`/contacts/details?contact_id=${id}`).expect(404, { status: 'failed', errors: 'Record Not Found' });
    await h.api(bob).post('/contacts/update').send({ contact_id: id, contact_type_id: bobType, email: 'stolen@example.com', country: france }).expect(404);
    await h.api(bob).delete(`/contacts/delete?contact_id=${id}`).expect(404);
    await h.api(bob).post('/contacts/bulk-delete').type('form').send({ 'strIds[0]': id }).expect(404, { status: 'failed', errors: 'Record Not Found' });
    const still = await h.api(alice).get(`/contacts/details?contact_id=${id}`).expect(200);
    expect(still.body.message.contact.email).toBe('private@example.com');
    const bobList = await h.api(bob).get('/contacts/list').expect(200);
    expect(bobList.body.message.contacts.map((c: { email: string }) => c.email)).not.toContain('private@example.com');
  });

  test('when deleted then the contact is gone, contacts_count follows and the email is free again', async () => {
    const erin = await h.account();
    const type = await addContactType(h, erin, 'Counted');
    const ids = [];
    for (const n of [1, 2, 3]) ids.push(await addContact(h, erin, { contact_type_id: type, email: `c${n}@example.com`, country: france }));
    const count = async () => (await h.api(erin).get('/contacts-type').expect(200)).body.message.contactTypes[0].contacts_count;
    expect(await count()).toBe(3);

    const del = await h.api(erin).delete(`/contacts/delete?contact_id=${ids[0]}`).expect(200);
    expect(del.body).toEqual({ status: 'success', message: 'Deleted Successfully' });
    await h.api(erin).get(`/contacts/details?contact_id=${ids[0]}`).expect(404);
    await h.api(erin).delete(`/contacts/delete?contact_id=${ids[0]}`).expect(404);
    expect(await count()).toBe(2);

    const bulk = await h.api(erin).post('/contacts/bulk-delete').type('form').send({ 'strIds[0]': ids[1], 'strIds[1]': ids[2], 'strIds[2]': 999999 }).expect(200);
    expect(bulk.body).toEqual({ status: 'success', message: 'Deleted Successfully' });
    expect(await count()).toBe(0);
    expect((await h.api(erin).get('/contacts/list').expect(200)).body.message.contacts).toEqual([]);

    await addContact(h, erin, { contact_type_id: type, email: 'C1@example.com', country: france });
    expect(await count()).toBe(1);

    const none = await h.api(erin).post('/contacts/bulk-delete').type('form').send({}).expect(422);
    expect(none.body).toEqual({ status: 'failed', errors: { strIds: ['The strIds field is required.'] } });
  });

  test('when paged or searched then the list narrows and tells the total', async () => {
    const fred = await h.account();
    const type = await addContactType(h, fred, 'Searchable');
    for (const [first, last, email] of [['Zoë', 'Alpha', 'one@example.com'], ['Bob', 'Beta', 'two@example.com'], ['Cy', 'Gamma', 'three@other.org']]) {
      await addContact(h, fred, { contact_type_id: type, first_name: first, last_name: last, email, country: france });
    }
    const page = await h.api(fred).get('/contacts/list?page=2&per_page=2').expect(200);
    expect(page.body.message.contacts.map((c: { email: string }) => c.email)).toEqual(['one@example.com']);
    expect(page.body.message.pagination).toEqual({ page: 2, per_page: 2, total: 3 });

    const byEmail = await h.api(fred).get('/contacts/list?search=EXAMPLE.com').expect(200);
    expect(byEmail.body.message.contacts.map((c: { email: string }) => c.email)).toEqual(['two@example.com', 'one@example.com']);
    const byName = await h.api(fred).get('/contacts/list?search=bob%20beta').expect(200);
    expect(byName.body.message.contacts.map((c: { email: string }) => c.email)).toEqual(['two@example.com']);
    const literal = await h.api(fred).get('/contacts/list?search=%25').expect(200);
    expect(literal.body.message.contacts).toEqual([]);
    const paged = await h.api(fred).get('/contacts/list?search=example&per_page=1').expect(200);
    expect(paged.body.message.pagination).toEqual({ page: 1, per_page: 1, total: 2 });
  });

  test('when the list is longer than one chunk then it streams whole, newest first', async () => {
    const gina = await h.account();
    const type = await addContactType(h, gina, 'Many');
    const now = new Date().toISOString();
    const rows = Array.from({ length: 2345 }, (_, i) => ({
      user_id: gina.user_id,
      contact_type_id: type,
      email: `bulk${i}@example.com`,
      email_key: `bulk${i}@example.com`,
      country: france,
      created_at: now,
      updated_at: now,
    }));
    for (let i = 0; i < rows.length; i += 200) await h.runtime.db('contacts').insert(rows.slice(i, i + 200));
    const res = await h.api(gina).get('/contacts/list').expect(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    const emails = res.body.message.contacts.map((c: { email: string }) => c.email);
    expect(emails).toHaveLength(2345);
    expect(emails[0]).toBe('bulk2344@example.com');
    expect(emails[2344]).toBe('bulk0@example.com');
    expect(res.body.message.contacts[1000]).toMatchObject({ country: 'France', contact_type: { name: 'Many' } });
  });

  test('when the ids are missing or not integers then 422', async () => {
    const missing = await h.api(alice).get('/contacts/details').expect(422);
    expect(missing.body.errors).toEqual({ contact_id: ['The contact id field is required.'] });
    const bad = await h.api(alice).delete('/contacts/delete?contact_id=abc').expect(422);
    expect(bad.body.errors).toEqual({ contact_id: ['The contact id must be an integer.'] });
  });
});
