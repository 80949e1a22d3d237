import { jsonValue, parseJson } from '../../src/db/dialect';
import { RESERVED_FIELD_NAMES } from '../../src/lib/constants';
import { expectDeleteIdRules, NOT_FOUND } from '../support/expectations';
import { TIMESTAMP, useHarness, TestAccount } from '../support/harness';

describe('reserved and custom fields', () => {
  const h = useHarness();
  const [alice, bob] = h.accounts(2);

  async function customFields(account: TestAccount): Promise<{ id: number; field_name: string; field_type: string }[]> {
    const res = await h.api(account).get('/custom-fields').expect(200);
    return res.body.message.customFields;
  }

  async function addField(account: TestAccount, name: string, type = 'text'): Promise<number> {
    await h.api(account).post('/custom-fields/save').field('field_name', name).field('field_type', type).expect(200);
    return (await customFields(account)).find((f) => f.field_name === name)!.id;
  }

  test('when reserved fields are listed then they are the contact columns, shared and without timestamps', async () => {
    const res = await h.api(alice).get('/reserve-fields').expect(200);
    const fields = res.body.message.reservedFields;
    expect(fields.map((f: { field_name: string }) => f.field_name)).toEqual(RESERVED_FIELD_NAMES);
    expect(fields[0]).toEqual({ id: expect.any(Number), user_id: null, field_name: 'first_name', field_type: 'text', is_reserved: 1, created_at: null, updated_at: null });
    expect(fields[1].field_name).toBe('last_name');
    const other = await h.api(bob).get('/reserve-fields').expect(200);
    expect(other.body).toEqual(res.body);
  });

  test('when custom fields are saved then the list shows them newest first, with each type', async () => {
    const res = await h.api(alice).post('/custom-fields/save').field('field_name', 'company_name').field('field_type', 'text').expect(200);
    expect(res.body).toEqual({ status: 'success', message: 'Added Successfully' });
    await h.api(alice).post('/custom-fields/save').send({ field_name: 'Age', field_type: 'number' }).expect(200);
    await h.api(alice).post('/custom-fields/save').type('form').send({ field_name: 'join_date_2', field_type: 'datetime-local' }).expect(200);

    const list = await h.api(alice).get('/custom-fields').expect(200);
    expect(list.body.message.customFields).toEqual([
      expect.objectContaining({ field_name: 'join_date_2', field_type: 'datetime-local' }),
      expect.objectContaining({ field_name: 'Age', field_type: 'number' }),
      {
        id: expect.any(Number),
        user_id: alice.user_id,
        field_name: 'company_name',
        field_type: 'text',
        is_reserved: 0,
        created_at: expect.stringMatching(TIMESTAMP),
        updated_at: expect.stringMatching(TIMESTAMP),
      },
    ]);
    expect(await customFields(bob)).toEqual([]);
    const forContacts = await h.runtime.services.fields.listCustom({ userId: alice.user_id });
    expect(forContacts.map((f) => f.field_name)).toEqual(['company_name', 'Age', 'join_date_2']);
  });

  test('when fields are missing or the type unknown then 422 reports each', async () => {
    const missing = await h.api(alice).post('/custom-fields/save').field('other', 'x').expect(422);
    expect(missing.body).toEqual({
      status: 'failed',
      errors: { field_name: ['The field name field is required.'], field_type: ['The field type field is required.'] },
    });
    const badType = await h.api(alice).post('/custom-fields/save').send({ field_name: 'score', field_type: 'date' }).expect(422);
    expect(badType.body).toEqual({ status: 'failed', errors: { field_type: ['The selected field type is invalid.'] } });
  });

  test.each(['two words', 'dash-name', 'naïve', 'semi;colon'])('when the name is %j then the format is invalid', async (name) => {
    const res = await h.api(alice).post('/custom-fields/save').send({ field_name: name, field_type: 'text' }).expect(422);
    expect(res.body).toEqual({ status: 'failed', errors: { field_name: ['The field name format is invalid.'] } });
  });

  test('when the name is too long then 422', async () => {
    const res = await h.api(alice).post('/custom-fields/save').send({ field_name: 'x'.repeat(65), field_type: 'text' }).expect(422);
    expect(res.body.errors).toEqual({ field_name: ['The field name may not be greater than 64 characters.'] });
  });

  test.each(['first_name', 'Last_Name', 'EMAIL', 'created_at', 'full_name', 'unsubscribe_preferences'])(
    'when the name is the reserved %j then 422 says so',
    async (name) => {
      const res = await h.api(alice).post('/custom-fields/save').send({ field_name: name, field_type: 'text' }).expect(422);
      expect(res.body).toEqual({ status: 'failed', errors: { field_name: ['The field name is reserved.'] } });
    },
  );

  test('when the account has the name in any case then 422 taken; another account may use it', async () => {
    const carol = await h.account();
    await addField(carol, 'loyalty');
    const dup = await h.api(carol).post('/custom-fields/save').send({ field_name: 'LOYALTY', field_type: 'number' }).expect(422);
    expect(dup.body).toEqual({ status: 'failed', errors: { field_name: ['The field name has already been taken.'] } });
    await addField(bob, 'loyalty');
    expect((await customFields(carol)).map((f) => f.field_name)).toEqual(['loyalty']);
  });

  test('when two saves of one name race then one wins and the other is taken', async () => {
    const frank = await h.account();
    const results = await Promise.all(
      ['Race', 'race', 'RACE'].map((name) => h.api(frank).post('/custom-fields/save').send({ field_name: name, field_type: 'text' })),
    );
    expect(results.map((r) => r.status).sort()).toEqual([200, 422, 422]);
    for (const r of results.filter((r) => r.status === 422)) {
      expect(r.body.errors).toEqual({ field_name: ['The field name has already been taken.'] });
    }
    expect(await customFields(frank)).toHaveLength(1);
  });

  test('when a custom field is deleted then it is gone, its values leave the contacts, and again is 404', async () => {
    const dave = await h.account();
    const id = await addField(dave, 'shoe_size', 'number');
    await addField(dave, 'nickname');
    const now = new Date().toISOString();
    const [type] = await h.runtime.db('contact_types').insert({ user_id: dave.user_id, name: 'People', created_at: now, updated_at: now }).returning('id');
    const [contact] = await h.runtime.db('contacts')
      .insert({
        user_id: dave.user_id,
        contact_type_id: typeof type === 'object' ? type.id : type,
        email: 'c@example.com',
        email_key: 'c@example.com',
        custom_fields: jsonValue({ shoe_size: '42', nickname: 'Cee' }),
        created_at: now,
        updated_at: now,
      })
      .returning('id');

    const res = await h.api(dave).delete(`/custom-fields/delete?id=${id}`).expect(200);
    expect(res.body).toEqual({ status: 'success', message: 'Deleted Successfully' });
    expect((await customFields(dave)).map((f) => f.field_name)).toEqual(['nickname']);
    const row = await h.runtime.db('contacts').where({ id: typeof contact === 'object' ? contact.id : contact }).first();
    expect(parseJson(row.custom_fields, {})).toEqual({ nickname: 'Cee' });

    await h.api(dave).delete(`/custom-fields/delete?id=${id}`).expect(404, NOT_FOUND);
  });

  test('when a reserved field or another account’s field is deleted then 404 and nothing changes', async () => {
    const reserved = await h.api(alice).get('/reserve-fields').expect(200);
    const firstName = reserved.body.message.reservedFields[0];
    await h.api(alice).delete(`/custom-fields/delete?id=${firstName.id}`).expect(404, NOT_FOUND);
    const erin = await h.account();
    const id = await addField(erin, 'private_note');
    await h.api(bob).delete(`/custom-fields/delete?id=${id}`).expect(404, NOT_FOUND);
    expect((await customFields(erin)).map((f) => f.id)).toEqual([id]);
    const after = await h.api(alice).get('/reserve-fields').expect(200);
    expect(after.body).toEqual(reserved.body);
  });

  test('when delete lacks an integer id then 422', async () => {
    await expectDeleteIdRules(h.api(alice), '/custom-fields/delete');
  });
});
