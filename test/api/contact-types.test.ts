import { up as renameDuplicates } from '../../migrations/20261123_0630_contact-type-duplicates';
import { nowValue } from '../../src/db/dialect';
import { TIMESTAMP, useHarness, TestAccount } from '../support/harness';

describe('contact types', () => {
  const h = useHarness();
  const [alice, bob] = h.accounts(2);

  async function addType(account: TestAccount, name: string): Promise<number> {
    await h.api(account).post('/contacts-type/add').field('name', name).expect(200);
    const list = await h.api(account).get('/contacts-type').expect(200);
    return list.body.message.contactTypes.find((t: { name: string }) => t.name === name).id;
  }

  test('when a type is added then the list shows it newest first with contacts_count', async () => {
    const add = await h.api(alice).post('/contacts-type/add').field('name', 'Leads').expect(200);
    expect(add.body).toEqual({ status: 'success', message: 'Added Successfully' });
    await h.api(alice).post('/contacts-type/add').field('name', 'Customers').expect(200);

    const res = await h.api(alice).get('/contacts-type').expect(200);
    expect(res.body.status).toBe('success');
    const [first, second] = res.body.message.contactTypes;
    expect(first).toEqual({
      id: expect.any(Number),
      user_id: alice.user_id,
      name: 'Customers',
      deleted_at: null,
      created_at: expect.stringMatching(TIMESTAMP),
      updated_at: expect.stringMatching(TIMESTAMP),
      contacts_count: 0,
    });
    expect(second.name).toBe('Leads');
  });

  test('when the name is missing or too short then 422 names the field', async () => {
    const missing = await h.api(alice).post('/contacts-type/add').field('other', 'x').expect(422);
    expect(missing.body).toEqual({ status: 'failed', errors: { name: ['The name field is required.'] } });
    const short = await h.api(alice).post('/contacts-type/add').field('name', 'a').expect(422);
    expect(short.body).toEqual({ status: 'failed', errors: { name: ['The name must be at least 2 characters.'] } });
  });

  test('when a name the account already has is added or given in an update then 422 and nothing changes', async () => {
    const dana = await h.account();
    const id = await addType(dana, 'Buyers');
    const other = await addType(dana, 'Sellers');
    const taken = { status: 'failed', errors: { name: ['The name has already been taken.'] } };
    expect((await h.api(dana).post('/contacts-type/add').field('name', 'Buyers').expect(422)).body).toEqual(taken);
    expect((await h.api(dana).post('/contacts-type/add').field('name', '  BUYERS ').expect(422)).body).toEqual(taken);
    const rename = await h.api(dana).post('/contacts-type/update').type('form').send({ id: other, name: 'buyers' }).expect(422);
    expect(rename.body).toEqual(taken);
    const list = await h.api(dana).get('/contacts-type').expect(200);
    expect(list.body.message.contactTypes.map((t: { name: string }) => t.name)).toEqual(['Sellers', 'Buyers']);

    // Its own name (another case included), another account's names and deleted types' names stay free.
    await h.api(dana).post('/contacts-type/update').type('form').send({ id, name: 'BUYERS' }).expect(200);
    await addType(await h.account(), 'Buyers');
    await h.api(dana).delete(`/contacts-type/delete?contact_type_id=${other}`).expect(200);
    await h.api(dana).post('/contacts-type/add').field('name', 'Sellers').expect(200);
  });

  test('when duplicate names were saved before the rule then the migration appends the id to each later one', async () => {
    const erin = await h.account();
    const now = nowValue();
    const row = (name: string, deleted = false) => ({ user_id: erin.user_id, name, created_at: now, updated_at: now, deleted_at: deleted ? now : null });
    // The unique index stands in the way of duplicates now: drop it for the old state, then rebuild it.
    await h.runtime.db.raw('drop index contact_types_name_live');
    try {
      await h.runtime.db('contact_types').insert([row('Staff'), row('staff '), row('Staff', true), row('Other'), row('STAFF')]);
      await renameDuplicates(h.runtime.db);
    } finally {
      await h.runtime.db.raw('create unique index contact_types_name_live on contact_types (user_id, lower(name)) where deleted_at is null');
    }
    const rows = await h.runtime.db('contact_types').where({ user_id: erin.user_id }).orderBy('id').select('id', 'name');
    const [, second, , , third] = rows;
    expect(rows.map((r) => r.name)).toEqual(['Staff', `staff (${second.id})`, 'Staff', 'Other', `STAFF (${third.id})`]);
  });

  test('when viewed then the type comes without contacts_count', async () => {
    const id = await addType(alice, 'Viewed');
    const res = await h.api(alice).get(`/contacts-type/view?contact_type_id=${id}`).expect(200);
    expect(res.body.message.contactType).toEqual({
      id,
      user_id: alice.user_id,
      name: 'Viewed',
      deleted_at: null,
      created_at: expect.stringMatching(TIMESTAMP),
      updated_at: expect.stringMatching(TIMESTAMP),
    });
  });

  test('when updated then the name changes; missing fields are reported together', async () => {
    const id = await addType(alice, 'Before');
    const res = await h.api(alice).post('/contacts-type/update').type('form').send({ id, name: 'After' }).expect(200);
    expect(res.body).toEqual({ status: 'success', message: 'Updated Successfully' });
    const view = await h.api(alice).get(`/contacts-type/view?contact_type_id=${id}`).expect(200);
    expect(view.body.message.contactType.name).toBe('After');

    const bad = await h.api(alice).post('/contacts-type/update').type('form').send({}).expect(422);
    expect(bad.body.errors).toEqual({ id: ['The id field is required.'], name: ['The name field is required.'] });
  });

  test('when deleted then success comes under errors and the type is gone', async () => {
    const id = await addType(alice, 'Doomed');
    const res = await h.api(alice).delete(`/contacts-type/delete?contact_type_id=${id}`).expect(200);
    expect(res.body).toEqual({ status: 'success', errors: 'Deleted Successfully' });
    const view = await h.api(alice).get(`/contacts-type/view?contact_type_id=${id}`).expect(404);
    expect(view.body).toEqual({ status: 'failed', errors: 'Record Not Found' });
    const list = await h.api(alice).get('/contacts-type').expect(200);
    expect(list.body.message.contactTypes.map((t: { id: number }) => t.id)).not.toContain(id);
    await h.api(alice).delete(`/contacts-type/delete?contact_type_id=${id}`).expect(404);
  });

  test('when another account addresses a type then it is not found and unchanged', async () => {
    const id = await addType(alice, 'Private');
    await h.api(bob).get(`/contacts-type/view?contact_type_id=${id}`).expect(404, { status: 'failed', errors: 'Record Not Found' });
    await h.api(bob).post('/contacts-type/update').field('id', String(id)).field('name', 'Stolen').expect(404);
    await h.api(bob).delete(`/contacts-type/delete?contact_type_id=${id}`).expect(404);
    const list = await h.api(bob).get('/contacts-type').expect(200);
    expect(list.body.message.contactTypes).toEqual([]);
    const view = await h.api(alice).get(`/contacts-type/view?contact_type_id=${id}`).expect(200);
    expect(view.body.message.contactType.name).toBe('Private');
  });

  test('when the id is missing or not an integer then 422', async () => {
    const missing = await h.api(alice).get('/contacts-type/view').expect(422);
    expect(missing.body.errors).toEqual({ contact_type_id: ['The contact type id field is required.'] });
    const bad = await h.api(alice).delete('/contacts-type/delete?contact_type_id=abc').expect(422);
    expect(bad.body.errors).toEqual({ contact_type_id: ['The contact type id must be an integer.'] });
  });

  test('when paged then message.pagination tells the total', async () => {
    const carol = await h.account();
    for (const name of ['One', 'Two', 'Three']) await h.api(carol).post('/contacts-type/add').field('name', name);
    const res = await h.api(carol).get('/contacts-type?page=2&per_page=2').expect(200);
    expect(res.body.message.contactTypes.map((t: { name: string }) => t.name)).toEqual(['One']);
    expect(res.body.message.pagination).toEqual({ page: 2, per_page: 2, total: 3 });
    const bad = await h.api(carol).get('/contacts-type?per_page=5000').expect(422);
    expect(bad.body.errors).toEqual({ per_page: ['The per page must be between 1 and 1000.'] });
  });
});
