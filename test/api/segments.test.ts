import { createHash } from 'node:crypto';
import { isPostgres } from '../../src/db';
import { addContact, addContactType, addCustomField, countryId } from '../support/fixtures';
import { TIMESTAMP, TestAccount, useHarness } from '../support/harness';
import { failed } from '../support/expectations';

type Rule = [field: string, operator: string, ...values: string[]];

describe('segments', () => {
  const h = useHarness();
  const [alice, bob] = h.accounts(2);
  let type: number;
  let otherType: number;
  const ids: Record<string, number> = {};

  /** Three contacts of `type` with known values, one of another type and one deleted. */
  beforeAll(async () => {
    type = await addContactType(h, alice, 'Members');
    otherType = await addContactType(h, alice, 'Others');
    await addCustomField(h, alice, 'age', 'number');
    await addCustomField(h, alice, 'joined', 'datetime-local');
    await addCustomField(h, alice, 'team', 'text');
    const [fr, de] = [await countryId(h, 'FR'), await countryId(h, 'DE')];
    const rows = [
      { key: 'ada', contact_type_id: type, first_name: 'Ada', last_name: 'Lovelace', email: 'ada@example.com', country: fr, city: 'Paris', custom: { age: '36', joined: '2025-01-10T10:00', team: 'Red' }, created_at: '2026-01-05T12:00:00.000Z' },
      { key: 'bob', contact_type_id: type, first_name: 'Bob', last_name: 'Stone', email: 'bob@test.org', country: de, city: 'Berlin', custom: { age: '17', joined: '2025-02-01T09:00' }, created_at: '2026-01-10T08:00:00.000Z' },
      { key: 'cy', contact_type_id: type, first_name: 'Cy', last_name: 'Young', email: 'cy@example.com', country: null, city: '', custom: { age: '52' }, created_at: '2026-02-01T00:00:00.000Z' },
      { key: 'di', contact_type_id: otherType, first_name: 'Ada', last_name: 'Other', email: 'di@example.com', country: fr, city: 'Paris', custom: { age: '36' }, created_at: '2026-01-05T12:00:00.000Z' },
      { key: 'gone', contact_type_id: type, first_name: 'Ada', last_name: 'Gone', email: 'gone@example.com', country: fr, city: 'Paris', custom: { age: '36' }, created_at: '2026-01-05T12:00:00.000Z', deleted_at: '2026-01-06T00:00:00.000Z' },
    ];
    for (const { key, custom, ...row } of rows) {
      const [inserted] = await h.runtime.db('contacts')
        .insert({ ...row, user_id: alice.user_id, email_key: row.email, custom_fields: JSON.stringify(custom), updated_at: row.created_at })
        .returning('id');
      ids[key] = Number(typeof inserted === 'object' ? inserted.id : inserted);
    }
  });

  let seq = 0;
  /** Saves a segment through the API (JSON arrays) and returns its id. */
  async function saveSegment(account: TestAccount, rules: Rule[], options: { queryType?: string; contactTypeId?: number } = {}): Promise<number> {
    seq += 1;
    const name = `Segment ${seq}`;
    const res = await h.api(account)
      .post('/segment/save')
      .send({
        segment_name: name,
        contact_type_id: options.contactTypeId ?? type,
        select_field: rules.map((r) => r[0]),
        select_operator: rules.map((r) => r[1]),
        value: rules.flatMap((r) => r.slice(2)),
        ...(options.queryType ? { query_type: options.queryType } : {}),
      });
    if (res.status !== 200) throw new Error(`save failed: ${res.status} ${JSON.stringify(res.body)}`);
    expect(res.body).toEqual({ status: 'success', message: 'Saved Successfully' });
    const row = await h.runtime.db('segments').where({ user_id: account.user_id, segment_name: name }).first('id');
    return Number(row.id);
  }

  async function memberEmails(account: TestAccount, segmentId: number): Promise<string[]> {
    const res = await h.api(account).get(`/segment/email/list?segment_id=${segmentId}`).expect(200);
    return res.body.message.contactEmails.map((r: { email: string }) => r.email).sort();
  }

  const cases: [string, Rule[], string[], 'and' | 'or'][] = [
    ['text is, ignoring case', [['first_name', 'is', 'ADA']], ['ada@example.com'], 'and'],
    ['text is not', [['first_name', 'is not', 'Ada']], ['bob@test.org', 'cy@example.com'], 'and'],
    ['text contains', [['email', 'contains', 'EXAMPLE']], ['ada@example.com', 'cy@example.com'], 'and'],
    ['text does not contain', [['email', 'does not contain', 'example']], ['bob@test.org'], 'and'],
    ['text starts with', [['last_name', 'starts with', 'lo']], ['ada@example.com'], 'and'],
    ['text ends with', [['email', 'ends with', '.ORG']], ['bob@test.org'], 'and'],
    ['text contains a wildcard character literally', [['first_name', 'contains', '%']], [], 'and'],
    ['custom text is empty', [['team', 'is empty']], ['bob@test.org', 'cy@example.com'], 'and'],
    ['custom text is not empty', [['team', 'is not empty']], ['ada@example.com'], 'and'],
    ['column is empty', [['city', 'is empty']], ['cy@example.com'], 'and'],
    ['city is, ignoring case', [['city', 'is', 'BERLIN']], ['bob@test.org'], 'and'],
    ['city is not', [['city', 'is not', 'paris']], ['bob@test.org', 'cy@example.com'], 'and'],
    ['city starts with, ignoring case', [['city', 'starts with', 'pA']], ['ada@example.com'], 'and'],
    ['city contains a wildcard character literally', [['city', 'contains', 'r_i']], [], 'and'],
    ['city does not contain', [['city', 'does not contain', 'ER']], ['ada@example.com', 'cy@example.com'], 'and'],
    ['email domain', [['email', 'ends with', '@Example.com']], ['ada@example.com', 'cy@example.com'], 'and'],
    ['a column that may be null is empty', [['alt_email', 'is empty']], ['ada@example.com', 'bob@test.org', 'cy@example.com'], 'and'],
    ['country is, by ISO code', [['country', 'is', 'fr']], ['ada@example.com'], 'and'],
    ['country is not', [['country', 'is not', 'France']], ['bob@test.org', 'cy@example.com'], 'and'],
    ['country contains, by name', [['country', 'contains', 'many']], ['bob@test.org'], 'and'],
    ['country is empty', [['country', 'is empty']], ['cy@example.com'], 'and'],
    ['number is', [['age', 'is', '36']], ['ada@example.com'], 'and'],
    ['number is not', [['age', 'is not', '36']], ['bob@test.org', 'cy@example.com'], 'and'],
    ['number greater than', [['age', 'greater than', '36']], ['cy@example.com'], 'and'],
    ['number less than', [['age', 'less than', '36']], ['bob@test.org'], 'and'],
    ['number is between, bounds included', [['age', 'is between', '17', '36']], ['ada@example.com', 'bob@test.org'], 'and'],
    ['number is between, bounds reversed', [['age', 'is between', '40', '18']], ['ada@example.com'], 'and'],
    ['created_at is a day', [['created_at', 'is', '2026-01-05']], ['ada@example.com'], 'and'],
    ['created_at is before', [['created_at', 'is before', '2026-01-10']], ['ada@example.com'], 'and'],
    ['created_at is after a day', [['created_at', 'is after', '2026-01-10']], ['cy@example.com'], 'and'],
    ['created_at is between two days', [['created_at', 'is between', '2026-01-06', '2026-02-01']], ['bob@test.org', 'cy@example.com'], 'and'],
    ['custom date is after', [['joined', 'is after', '2025-01-31']], ['bob@test.org'], 'and'],
    ['custom date is a minute', [['joined', 'is', '2025-01-10T10:00']], ['ada@example.com'], 'and'],
    ['custom date is between', [['joined', 'is between', '2025-01-01', '2025-01-31 23:59']], ['ada@example.com'], 'and'],
    ['and of several conditions', [['email', 'contains', 'example'], ['age', 'less than', '40']], ['ada@example.com'], 'and'],
    ['or of several conditions', [['first_name', 'is', 'Ada'], ['age', 'greater than', '50']], ['ada@example.com', 'cy@example.com'], 'or'],
    ['no condition: the whole contact type', [], ['ada@example.com', 'bob@test.org', 'cy@example.com'], 'and'],
  ];

  test.each(cases)('when a segment uses %s then exactly the matching live contacts of its type are members', async (_name, rules, expected, queryType) => {
    const id = await saveSegment(alice, rules, { queryType });
    expect(await memberEmails(alice, id)).toEqual(expected);
  });

  test('when segments are listed then each carries its rules and segment_emails_count', async () => {
    const carol = await h.account();
    const carolType = await addContactType(h, carol, 'Carol type');
    await addContact(h, carol, { contact_type_id: carolType, email: 'one@example.com', country: await countryId(h, 'FR'), first_name: 'One' });
    const id = await saveSegment(carol, [['first_name', 'is', 'One']], { contactTypeId: carolType, queryType: 'or' });
    const res = await h.api(carol).get('/segment/list').expect(200);
    expect(res.body).toEqual({
      status: 'success',
      message: {
        segments: [
          {
            id,
            user_id: carol.user_id,
            contact_type_id: carolType,
            segment_name: expect.stringMatching(/^Segment \d+$/),
            select_field: ['first_name'],
            select_operator: ['is'],
            value: ['One'],
            query_type: 'or',
            deleted_at: null,
            created_at: expect.stringMatching(TIMESTAMP),
            updated_at: expect.stringMatching(TIMESTAMP),
            segment_emails_count: 1,
          },
        ],
      },
    });
  });

  test('when members are listed then each row has the reference shape', async () => {
    const id = await saveSegment(alice, [['first_name', 'is', 'Ada']]);
    const res = await h.api(alice).get(`/segment/email/list?segment_id=${id}`).expect(200);
    expect(res.body).toEqual({
      status: 'success',
      message: {
        contactEmails: [
          {
            id: expect.any(Number),
            user_id: alice.user_id,
            segment_id: id,
            contact_id: ids.ada,
            first_name: 'Ada',
            last_name: 'Lovelace',
            email: 'ada@example.com',
            country: 'France',
            state: '',
            city: 'Paris',
            address_line1: '',
            created_at: expect.stringMatching(TIMESTAMP),
            updated_at: expect.stringMatching(TIMESTAMP),
            fullname: 'Ada Lovelace',
          },
        ],
      },
    });
    const paged = await h.api(alice).get(`/segment/email/list?segment_id=${id}&per_page=1`).expect(200);
    expect(paged.body.message.pagination).toEqual({ page: 1, per_page: 1, total: 1 });
  });

  test('when a recipient is stored by hand then it survives refreshes, and rule members follow the rules', async () => {
    const dave = await h.account();
    const daveType = await addContactType(h, dave, 'Dave type');
    const fr = await countryId(h, 'FR');
    await addContact(h, dave, { contact_type_id: daveType, email: 'rule@example.com', first_name: 'Rule', country: fr });
    await addContact(h, dave, { contact_type_id: daveType, email: 'other@example.com', first_name: 'Other', country: fr });
    const joins: number[] = [];
    h.runtime.services.audienceEvents.onSegmentJoin(async (event, trx) => {
      if (event.userId !== dave.user_id) return;
      const rows = await trx('segment_recipients').where({ segment_id: event.segmentId, created_at: event.joinedAt }).select('contact_id');
      joins.push(...rows.map((r: { contact_id: number }) => Number(r.contact_id)));
    });
    const id = await saveSegment(dave, [['first_name', 'is', 'Rule']], { contactTypeId: daveType });
    expect(joins).toHaveLength(1);

    const stored = await h.api(dave).post('/segment/email/store').field('segment_id', String(id)).field('first_name', 'Man').field('last_name', 'Ual').field('email', 'manual@example.com').expect(200);
    expect(stored.body).toEqual({ status: 'success', message: 'Added Successfully' });
    expect(await memberEmails(dave, id)).toEqual(['manual@example.com', 'rule@example.com']);

    const update = await h.api(dave)
      .post(`/segment/update?segment_id=${id}`)
      .send({ segment_name: 'Renamed', contact_type_id: daveType, select_field: ['first_name'], select_operator: ['is'], value: ['Other'] })
      .expect(200);
    expect(update.body).toEqual({ status: 'success', message: 'Updated Successfully' });
    expect(await memberEmails(dave, id)).toEqual(['manual@example.com', 'other@example.com']);
    expect(joins).toHaveLength(2);

    // Refreshing again changes nothing; a rule member that is stored by hand stays when it stops matching.
    await h.runtime.services.segments.refresh({ userId: dave.user_id }, id);
    await h.api(dave).post('/segment/email/store').send({ segment_id: id, first_name: 'Kept', last_name: 'Hand', email: 'OTHER@example.com' }).expect(200);
    await h.api(dave).post(`/segment/update?segment_id=${id}`).send({ segment_name: 'Renamed', contact_type_id: daveType, select_field: ['first_name'], select_operator: ['is'], value: ['Nobody'] }).expect(200);
    expect(await memberEmails(dave, id)).toEqual(['OTHER@example.com', 'manual@example.com']);
    expect(joins).toHaveLength(2);

    const list = await h.api(dave).get('/segment/list').expect(200);
    expect(list.body.message.segments[0]).toMatchObject({ segment_name: 'Renamed', value: ['Nobody'], segment_emails_count: 2 });
    const recipients = await h.runtime.services.segments.recipients({ userId: dave.user_id }, id).orderBy('sr.email_key');
    expect(recipients.map((r: { email_key: string; source: string }) => [r.email_key, r.source])).toEqual([['manual@example.com', 'manual'], ['other@example.com', 'manual']]);
  });

  test('when a member contact is deleted or renamed then the segment shows it at once', async () => {
    const erin = await h.account();
    const erinType = await addContactType(h, erin, 'Erin type');
    const fr = await countryId(h, 'FR');
    const keep = await addContact(h, erin, { contact_type_id: erinType, email: 'keep@example.com', first_name: 'Keep', country: fr });
    const drop = await addContact(h, erin, { contact_type_id: erinType, email: 'drop@example.com', first_name: 'Drop', country: fr });
    const id = await saveSegment(erin, [], { contactTypeId: erinType });
    await h.api(erin).post('/contacts/update').send({ contact_id: keep, contact_type_id: erinType, email: 'keep@example.com', first_name: 'Kept', country: fr }).expect(200);
    await h.api(erin).delete(`/contacts/delete?contact_id=${drop}`).expect(200);
    const res = await h.api(erin).get(`/segment/email/list?segment_id=${id}`).expect(200);
    expect(res.body.message.contactEmails.map((r: { first_name: string; email: string }) => [r.first_name, r.email])).toEqual([['Kept', 'keep@example.com']]);
    expect((await h.api(erin).get('/segment/list').expect(200)).body.message.segments[0].segment_emails_count).toBe(1);
  });

  test('when a segment is deleted then success comes under errors and it is gone', async () => {
    const id = await saveSegment(alice, [['first_name', 'is', 'Ada']]);
    const res = await h.api(alice).delete(`/segment/delete?segment_id=${id}`).expect(200);
    expect(res.body).toEqual({ status: 'success', errors: 'Deleted Successfully' });
    await h.api(alice).delete(`/segment/delete?segment_id=${id}`).expect(404, { status: 'failed', errors: 'Record Not Found' });
    await h.api(alice).get(`/segment/email/list?segment_id=${id}`).expect(404);
    const list = await h.api(alice).get('/segment/list').expect(200);
    expect(list.body.message.segments.map((s: { id: number }) => s.id)).not.toContain(id);
  });

  test('when another account addresses a segment or its recipients then it is not found and unchanged', async () => {
    const id = await saveSegment(alice, [['first_name', 'is', 'Ada']]);
    const [recipient] = await h.runtime.db('segment_recipients').where({ segment_id: id }).select('id');
    await h.api(bob).get(`/segment/email/list?segment_id=${id}`).expect(404, { status: 'failed', errors: 'Record Not Found' });
    await h.api(bob).delete(`/segment/email/delete?segment_recipient_id=${recipient.id}`).expect(404);
    await h.api(bob).delete(`/segment/delete?segment_id=${id}`).expect(404);
    const bobType = await addContactType(h, bob, 'Bob type');
    await h.api(bob).post(`/segment/update?segment_id=${id}`).send({ segment_name: 'Stolen', contact_type_id: bobType }).expect(404);
    const store = await h.api(bob).post('/segment/email/store').send({ segment_id: id, first_name: 'X', last_name: 'Y', email: 'x@example.com' }).expect(422);
    expect(store.body).toEqual({ status: 'failed', errors: { segment_id: ['The selected segment id is invalid.'] } });
    expect((await h.api(bob).get('/segment/list').expect(200)).body.message.segments).toEqual([]);
    expect(await memberEmails(alice, id)).toEqual(['ada@example.com']);

    const del = await h.api(alice).delete(`/segment/email/delete?segment_recipient_id=${recipient.id}`).expect(200);
    expect(del.body).toEqual({ status: 'success', message: 'Deleted Successfully' });
    expect(await memberEmails(alice, id)).toEqual([]);
  });

  test('when the rules are invalid then 422 names every problem', async () => {
    const missing = await h.api(alice).post('/segment/save').send({}).expect(422);
    expect(missing.body).toEqual({
      status: 'failed',
      errors: { segment_name: ['The segment name field is required.'], contact_type_id: ['The contact type id field is required.'] },
    });
    const bobType = await addContactType(h, bob, 'Not yours');
    const bad = await h.api(alice)
      .post('/segment/save')
      .send({
        segment_name: 'Bad',
        contact_type_id: bobType,
        query_type: 'xor',
        select_field: ['shoe_size', 'age', 'first_name', 'created_at', 'age'],
        select_operator: ['is', 'contains', 'is', 'is after', 'is between'],
        value: ['42', '3', '', 'yesterday', '1', 'ten'],
      })
      .expect(422);
    expect(bad.body).toEqual(failed({
      contact_type_id: ['The selected contact type id is invalid.'],
      query_type: ['The selected query type is invalid.'],
      'select_field.0': ['The selected select field.0 is invalid.'],
      'select_operator.1': ['The selected select operator.1 is invalid.'],
      'value.2': ['The value.2 field is required.'],
      'value.3': ['The value.3 is not a valid date.'],
      'value.5': ['The value.5 must be a number.'],
    }));
    const counts = await h.api(alice).post('/segment/save').send({ segment_name: 'Counts', contact_type_id: type, select_field: ['age', 'city'], select_operator: ['is between', 'is empty'], value: ['1'] }).expect(422);
    expect(counts.body.errors).toEqual({ value: ['The value must contain 2 items.'] });
    const arrays = await h.api(alice).post('/segment/save').send({ segment_name: 'Arrays', contact_type_id: type, select_field: ['age', 'city'], select_operator: ['is'], value: ['1'] }).expect(422);
    expect(arrays.body.errors).toEqual({ select_operator: ['The select operator must contain 2 items.'] });
    const country = await h.api(alice).post('/segment/save').send({ segment_name: 'Country', contact_type_id: type, select_field: ['country'], select_operator: ['is'], value: ['Atlantis'] }).expect(422);
    expect(country.body.errors).toEqual({ 'value.0': ['The selected value.0 is invalid.'] });
  });

  test('when conditions come as indexed form fields then they parse like JSON arrays', async () => {
    const res = await h.api(alice)
      .post('/segment/save')
      .type('form')
      .send({ segment_name: 'Form', contact_type_id: type, query_type: 'and', 'select_field[0]': 'age', 'select_operator[0]': 'is between', 'value[0]': '30', 'value[1]': '40' })
      .expect(200);
    expect(res.body).toEqual({ status: 'success', message: 'Saved Successfully' });
    const row = await h.runtime.db('segments').where({ user_id: alice.user_id, segment_name: 'Form' }).first('id');
    expect(await memberEmails(alice, Number(row.id))).toEqual(['ada@example.com']);
  });

  test('when a recipient is stored with bad input then 422 names each field', async () => {
    const id = await saveSegment(alice, []);
    const res = await h.api(alice).post('/segment/email/store').send({ segment_id: id, email: 'nope' }).expect(422);
    expect(res.body).toEqual(failed({
      first_name: ['The first name field is required.'],
      last_name: ['The last name field is required.'],
      email: ['The email must be a valid email address.'],
    }));
  });

  test('when contacts are added, updated, imported or deleted then rule segments follow them without being saved again', async () => {
    const erin = await h.account();
    const members = await addContactType(h, erin, 'Members');
    const others = await addContactType(h, erin, 'Others');
    await addCustomField(h, erin, 'plan', 'text');
    const fr = await countryId(h, 'FR');
    const paris = await saveSegment(erin, [['city', 'is', 'Paris']], { contactTypeId: members });
    const gold = await saveSegment(erin, [['plan', 'is', 'gold'], ['country', 'is', 'FR']], { contactTypeId: members });
    const othersInParis = await saveSegment(erin, [['city', 'is', 'Paris']], { contactTypeId: others });
    const all = async () => ({ paris: await memberEmails(erin, paris), gold: await memberEmails(erin, gold), othersInParis: await memberEmails(erin, othersInParis) });

    const ann = await addContact(h, erin, { contact_type_id: members, email: 'ann@example.com', country: fr, city: 'Paris' });
    const ben = await addContact(h, erin, { contact_type_id: members, email: 'ben@example.com', country: fr, city: 'Lyon' });
    expect(await all()).toEqual({ paris: ['ann@example.com'], gold: [], othersInParis: [] });

    const update = (id: number, fields: Record<string, unknown>) => h.api(erin).post('/contacts/update').send({ contact_id: id, country: fr, ...fields }).expect(200);
    await update(ben, { contact_type_id: members, email: 'ben@example.com', city: 'Paris', custom_field: { plan: 'gold' } });
    await update(ann, { contact_type_id: members, email: 'ann@example.com', city: 'Lyon' });
    expect(await all()).toEqual({ paris: ['ben@example.com'], gold: ['ben@example.com'], othersInParis: [] });
    // Moving to another type leaves that type's segments and joins the other's; a new email replaces the old.
    await update(ben, { contact_type_id: others, email: 'ben.new@example.com', city: 'Paris' });
    expect(await all()).toEqual({ paris: [], gold: [], othersInParis: ['ben.new@example.com'] });

    const csv = 'email,city,country,plan\nann@example.com,Paris,FR,\ncid@example.com,Paris,FR,gold\ndee@example.com,Nice,DE,gold\n';
    const imported = await h.api(erin).post('/contacts/upload-csv').field('contact_type_id', String(members)).attach('file', Buffer.from(csv), 'c.csv').expect(200);
    expect(imported.body.summary).toMatchObject({ rows: 3, created: 2, updated: 1, skipped: 0 });
    expect(await all()).toEqual({ paris: ['ann@example.com', 'cid@example.com'], gold: ['cid@example.com'], othersInParis: ['ben.new@example.com'] });

    const cid = await h.runtime.db('contacts').where({ user_id: erin.user_id, email_key: 'cid@example.com' }).first('id');
    await h.api(erin).delete(`/contacts/delete?contact_id=${cid.id}`).expect(200);
    expect(await all()).toEqual({ paris: ['ann@example.com'], gold: [], othersInParis: ['ben.new@example.com'] });
    const counts = (await h.api(erin).get('/segment/list').expect(200)).body.message.segments.map((g: { segment_emails_count: number }) => g.segment_emails_count);
    expect(counts).toEqual([1, 0, 1]);
  });

  test('when a rule is on the city or on the email domain then PostgreSQL answers it from an index of that column', async () => {
    if (!isPostgres(h.runtime.db)) return;
    const dan = await h.account();
    const danType = await addContactType(h, dan, 'Many');
    await addCustomField(h, dan, 'age', 'number');
    // Enough contacts (in 1,000 cities and domains) for the planner to prefer an index to reading
    // them all; vacuumed as a running database is (the trigram index's pending entries merged).
    await h.runtime.db.raw(
      `insert into contacts (user_id, contact_type_id, email, email_key, city, custom_fields, created_at, updated_at)
       select ?, ?, 'c' || i || '@' || md5((i % 1000)::text) || '.example', 'c' || i || '@' || md5((i % 1000)::text) || '.example', 'City ' || (i % 1000), '{"age": "30"}', now(), now()
       from generate_series(1, 20000) i`,
      [dan.user_id, danType],
    );
    await h.runtime.db.raw('vacuum analyze contacts');
    const plan = async (rules: Rule[]) => {
      const { query } = await h.runtime.services.segments.countQuery({ userId: dan.user_id }, {
        segment_name: 'x', contact_type_id: danType, query_type: 'and',
        select_field: rules.map((r) => r[0]), select_operator: rules.map((r) => r[1]), value: rules.flatMap((r) => r.slice(2)),
      });
      const { sql, bindings } = query.toSQL();
      return ((await h.runtime.db.raw(`explain ${sql}`, bindings as never[])).rows as Array<Record<string, string>>).map((r) => r['QUERY PLAN']).join('\n');
    };
    expect(await plan([['city', 'starts with', 'CITY 12'], ['age', 'greater than', '20']])).toMatch(/contacts_user_type_city[\s\S]*Index Cond: .*lower\(\(city\)::text\) ~>=~ 'city 12'/);
    expect(await plan([['city', 'is', 'city 7']])).toMatch(/contacts_user_type_city[\s\S]*Index Cond: .*lower\(\(city\)::text\) = 'city 7'/);
    const domain = `@${createHash('md5').update('7').digest('hex').toUpperCase()}.example`;
    expect(await plan([['email', 'ends with', domain]])).toMatch(/Bitmap Index Scan on contacts_email_trgm/);
    expect(await h.runtime.services.segments.count({ userId: dan.user_id }, { segment_name: 'x', contact_type_id: danType, query_type: 'and', select_field: ['email'], select_operator: ['ends with'], value: [domain] })).toBe(20);
  });
});
