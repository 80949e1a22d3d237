import fs from 'node:fs';
import { uploadDir } from '../../src/http/upload';
import { importBatchRows } from '../../src/db/contact-upsert';
import { importLane, importLanes } from '../../src/db/import-lanes';
import { addContact, addContactType, addCustomField, countryId } from '../support/fixtures';
import { TestAccount, useHarness } from '../support/harness';

const HEADER = 'first_name,last_name,email,country,city,age,joined';

describe('CSV sample and import', () => {
  const h = useHarness();
  const [alice] = h.accounts(1);
  let type: number;

  beforeAll(async () => {
    type = await addContactType(h, alice, 'Imported');
    await addCustomField(h, alice, 'age', 'number');
    await addCustomField(h, alice, 'joined', 'datetime-local');
  });

  const upload = (account: TestAccount, contactTypeId: number | string, csv: string, name = 'contacts.csv') =>
    h.api(account).post('/contacts/upload-csv').field('contact_type_id', String(contactTypeId)).attach('file', Buffer.from(csv), name);

  const emailsOf = async (account: TestAccount) =>
    (await h.api(account).get('/contacts/list').expect(200)).body.message.contacts.map((c: { email: string }) => c.email);

  const leftoverUploads = () => (fs.existsSync(uploadDir(h.runtime.config)) ? fs.readdirSync(uploadDir(h.runtime.config)) : []);

  test('when the sample is downloaded then it is a CSV attachment with every reserved column, the custom fields and an example row', async () => {
    const res = await h.api(alice).get('/contacts/csv-sample/download').expect(200);
    expect(res.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(res.headers['content-disposition']).toBe('attachment; filename=contacts-sample.csv');
    expect(res.text).toBe(
      'first_name,last_name,email,alt_email,country,state,city,address_line1,address_line2,state_province_region,postal_code,age,joined\r\n' +
        'John,Doe,john.doe@example.com,john@example.org,United States,California,San Francisco,1 Market Street,Suite 100,CA,94105,42,2026-01-31T09:00\r\n',
    );
  });

  test('when the sample is imported back then its example contact exists', async () => {
    const bob = await h.account();
    const bobType = await addContactType(h, bob, 'From sample');
    const sample = await h.api(bob).get('/contacts/csv-sample/download').expect(200);
    const res = await upload(bob, bobType, sample.text).expect(200);
    expect(res.body.summary).toEqual({ rows: 1, created: 1, updated: 0, skipped: 0, unsubscribed: 0, errors: [] });
    const [contact] = (await h.api(bob).get('/contacts/list').expect(200)).body.message.contacts;
    expect(contact).toMatchObject({ email: 'john.doe@example.com', alt_email: 'john@example.org', country: 'United States', address_line2: 'Suite 100', postal_code: '94105' });
  });

  test('when a CSV has quoted commas, UTF-8 names and countries by name, code or id then every row is imported', async () => {
    const india = await countryId(h, 'IN');
    const csv = [
      HEADER + ',unknown column',
      '"Zoë","Müller, Jr.",zoe@example.com,France,"Paris, 8e",41,2026-03-01T09:30,ignored',
      `José,Øster,jose@example.com,${india},Mumbai,,,`,
      '李,王,li@example.com,de,Berlin,7,2026-03-02,',
    ].join('\n');
    const res = await upload(alice, type, csv).expect(200);
    expect(res.body).toEqual({
      status: 'success',
      message: 'Imported Successfully',
      summary: { rows: 3, created: 3, updated: 0, skipped: 0, unsubscribed: 0, errors: [] },
    });
    const contacts = (await h.api(alice).get('/contacts/list').expect(200)).body.message.contacts;
    const zoe = contacts.find((c: { email: string }) => c.email === 'zoe@example.com');
    expect(zoe).toMatchObject({
      first_name: 'Zoë',
      last_name: 'Müller, Jr.',
      fullname: 'Zoë Müller, Jr.',
      city: 'Paris, 8e',
      country: 'France',
      contact_type_id: type,
      custom_field: { age: { field_name: 'age', field_value: '41' }, joined: { field_name: 'joined', field_value: '2026-03-01T09:30' } },
    });
    expect(contacts.find((c: { email: string }) => c.email === 'jose@example.com')).toMatchObject({ country: 'India', last_name: 'Øster' });
    expect(contacts.find((c: { email: string }) => c.email === 'li@example.com')).toMatchObject({
      first_name: '李',
      country: 'Germany',
      custom_field: { age: { field_name: 'age', field_value: '7' }, joined: { field_name: 'joined', field_value: '2026-03-02T00:00' } },
    });
    expect(leftoverUploads()).toEqual([]);
  });

  test('when values hold backslashes, tabs, quotes and line breaks then they are stored as written', async () => {
    const ivan = await h.account();
    const ivanType = await addContactType(h, ivan, 'Escapes');
    const res = await upload(ivan, ivanType, 'email,address_line1,city\nesc@example.com,"1 Main St\r\nApt \\N 4","C:\\dir\tx ""quoted"""\n').expect(200);
    expect(res.body.summary).toEqual({ rows: 1, created: 1, updated: 0, skipped: 0, unsubscribed: 0, errors: [] });
    const [contact] = (await h.api(ivan).get('/contacts/list').expect(200)).body.message.contacts;
    expect(contact).toMatchObject({ address_line1: '1 Main St\r\nApt \\N 4', city: 'C:\\dir\tx "quoted"' });
  });

  test('when emails already exist in any case then those contacts are updated, moved into the type, other values kept', async () => {
    const carol = await h.account();
    await addCustomField(h, carol, 'age', 'number');
    await addCustomField(h, carol, 'team', 'text');
    const oldType = await addContactType(h, carol, 'Old');
    const newType = await addContactType(h, carol, 'New');
    const existing = await addContact(h, carol, {
      contact_type_id: oldType,
      email: 'Known@Example.com',
      country: await countryId(h, 'FR'),
      city: 'Lyon',
      first_name: 'Before',
      custom_field: { age: '30', team: 'Red' },
    });

    const res = await upload(carol, newType, 'email,first_name,age\nKNOWN@example.com,After,31\nfresh@example.com,New,\nfresh@EXAMPLE.com,Newer,5\n').expect(200);
    expect(res.body.summary).toEqual({ rows: 3, created: 1, updated: 2, skipped: 0, unsubscribed: 0, errors: [] });

    const known = (await h.api(carol).get(`/contacts/details?contact_id=${existing}`).expect(200)).body.message.contact;
    expect(known).toMatchObject({ email: 'KNOWN@example.com', first_name: 'After', city: 'Lyon', contact_type_id: newType });
    expect(known.custom_field).toEqual({ age: { field_name: 'age', field_value: '31' }, team: { field_name: 'team', field_value: 'Red' } });
    const contacts = (await h.api(carol).get('/contacts/list').expect(200)).body.message.contacts;
    expect(contacts).toHaveLength(2);
    expect(contacts.find((c: { email: string }) => c.email.toLowerCase() === 'fresh@example.com')).toMatchObject({ first_name: 'Newer', email: 'fresh@EXAMPLE.com' });
    const types = (await h.api(carol).get('/contacts-type').expect(200)).body.message.contactTypes;
    expect(types.map((t: { name: string; contacts_count: number }) => [t.name, t.contacts_count])).toEqual([['New', 2], ['Old', 0]]);
  });

  test('when an email repeats within one batch then its last row wins and each repeat counts as an update', async () => {
    const rita = await h.account();
    await addCustomField(h, rita, 'age', 'number');
    const type = await addContactType(h, rita, 'Repeats');
    const csv = 'email,first_name,age\nrep@example.com,One,1\nother@example.com,Other,9\nREP@example.com,Two,2\nrep@EXAMPLE.com,Three,3\nRep@Example.com,Four,\n';
    const res = await upload(rita, type, csv).expect(200);
    expect(res.body.summary).toEqual({ rows: 5, created: 2, updated: 3, skipped: 0, unsubscribed: 0, errors: [] });
    const contacts = (await h.api(rita).get('/contacts/list').expect(200)).body.message.contacts;
    expect(contacts).toHaveLength(2);
    const rep = contacts.find((c: { email: string }) => c.email.toLowerCase() === 'rep@example.com');
    expect(rep).toMatchObject({ email: 'Rep@Example.com', first_name: 'Four' });
    const details = (await h.api(rita).get(`/contacts/details?contact_id=${rep.id}`).expect(200)).body.message.contact;
    // The last row's blank age, not an earlier row's value.
    expect(details.custom_field).toEqual({ age: { field_name: 'age', field_value: null } });
  });

  test('when custom values hold quotes, backslashes and other scripts then they are stored as the JSON of the values, in column order', async () => {
    const uma = await h.account();
    await addCustomField(h, uma, 'joined', 'datetime-local');
    await addCustomField(h, uma, 'note', 'text');
    await addCustomField(h, uma, 'age', 'number');
    const type = await addContactType(h, uma, 'Escaped');
    const csv = [
      'email,note,age,joined',
      'q@example.com,"He said ""hi"" \\ left",-12.5,2024-02-29T23:59',
      'r@example.com,Zoë 李 {"x":1},,2024-02-29',
      's@example.com,,7,2023-02-29T10:00',
      't@example.com,plain,8,2024-13-01T10:00',
    ].join('\n');
    const res = await upload(uma, type, csv).expect(200);
    expect(res.body.summary).toMatchObject({ rows: 4, created: 2, skipped: 2 });
    expect(res.body.summary.errors.map((e: { row: number }) => e.row)).toEqual([4, 5]);
    const stored = await h.runtime.db('contacts').where({ user_id: uma.user_id }).orderBy('email').select('email', 'custom_fields');
    const text = (v: unknown) => (typeof v === 'string' ? v : JSON.stringify(v));
    expect(stored.map((r: { custom_fields: unknown }) => JSON.parse(text(r.custom_fields)))).toEqual([
      { note: 'He said "hi" \\ left', age: '-12.5', joined: '2024-02-29T23:59' },
      { note: 'Zoë 李 {"x":1}', age: null, joined: '2024-02-29T00:00' },
    ]);
    // The file's column order (SQLite keeps the text as written; PostgreSQL's jsonb orders keys itself).
    if (typeof stored[0].custom_fields === 'string') expect(Object.keys(JSON.parse(stored[0].custom_fields))).toEqual(['note', 'age', 'joined']);
  });

  test('when imports end, failed or not, then SQLite checkpoints its WAL as often as before', async () => {
    const db = h.runtime.db;
    if (db.client.config.client === 'pg') return;
    const setting = async () => ((await db.raw('pragma wal_autocheckpoint')) as { wal_autocheckpoint: number }[])[0].wal_autocheckpoint;
    const before = await setting();
    const wes = await h.account();
    const type = await addContactType(h, wes, 'Checkpoints');
    await Promise.all([upload(wes, type, 'email\na@example.com\n').expect(200), upload(wes, type, 'email\nb@example.com\n').expect(200)]);
    await upload(wes, type, 'name\nno email column\n').expect(422);
    expect(await setting()).toBe(before);
  });

  test('when rows deep in a long file hold control characters or unreadable bytes then exactly those rows are skipped', async () => {
    const vera = await h.account();
    await addCustomField(h, vera, 'age', 'number');
    const type = await addContactType(h, vera, 'Deep');
    // Clean rows fill the first chunks of the file; the bad ones come far after them, each among clean rows.
    const lines = ['email,first_name,city,age'];
    for (let i = 0; i < 3000; i += 1) lines.push(`clean${i}@example.com,Name ${i},City ${i % 7},${i % 90}`);
    lines.push('bell@example.com,Ri\u0007ng,Paris,1', 'after-bell@example.com,Fine,Paris,2');
    lines.push('esc@example.com,Esc,Ro\u001bme,3', 'fffd@example.com,Bad \uFFFD name,Oslo,4', 'agebad@example.com,Age,Oslo,\uFFFD5');
    for (let i = 0; i < 700; i += 1) lines.push(`tail${i}@example.com,Tail ${i},Lyon,${i % 90}`);
    const res = await upload(vera, type, lines.join('\n') + '\n').expect(200);
    expect(res.body.summary).toEqual({
      rows: 3705,
      created: 3701,
      updated: 0,
      skipped: 4,
      unsubscribed: 0,
      errors: [
        { row: 3002, reason: 'The first name must not contain control characters.' },
        { row: 3004, reason: 'The city must not contain control characters.' },
        { row: 3005, reason: "The first name has characters that could not be read in the file's encoding; choose the file's encoding and upload it again." },
        { row: 3006, reason: "The age has characters that could not be read in the file's encoding; choose the file's encoding and upload it again." },
      ],
    });
    const stored = await h.runtime.db('contacts').where({ user_id: vera.user_id }).pluck('email');
    expect(stored).toHaveLength(3701);
    expect(stored).toEqual(expect.arrayContaining(['clean0@example.com', 'clean2999@example.com', 'after-bell@example.com', 'tail699@example.com']));
    expect(stored).not.toEqual(expect.arrayContaining(['bell@example.com']));
  });

  test('when rows are invalid then they are skipped and reported with their row numbers', async () => {
    const dave = await h.account();
    await addCustomField(h, dave, 'age', 'number');
    const daveType = await addContactType(h, dave, 'Checked');
    const csv = [
      'email,country,age,alt_email',
      'good@example.com,FR,1,',
      ',FR,1,',
      'not-an-email,FR,1,',
      'a@example.com,Atlantis,1,',
      'b@example.com,FR,old,',
      '',
      'c@example.com,FR,2,bad-alt',
      'last@example.com,,,',
    ].join('\r\n');
    const res = await upload(dave, daveType, csv).expect(200);
    expect(res.body.summary).toEqual({
      rows: 7,
      created: 2,
      updated: 0,
      skipped: 5,
      unsubscribed: 0,
      errors: [
        { row: 3, reason: 'The email field is required.' },
        { row: 4, reason: 'The email must be a valid email address.' },
        { row: 5, reason: 'The selected country is invalid.' },
        { row: 6, reason: 'The age must be a number.' },
        { row: 8, reason: 'The alt email must be a valid email address.' },
      ],
    });
    expect((await emailsOf(dave)).sort()).toEqual(['good@example.com', 'last@example.com']);
  });

  test('when the file is semicolon-separated with a byte-order mark then its header still matches', async () => {
    const erin = await h.account();
    const erinType = await addContactType(h, erin, 'Excel');
    const res = await upload(erin, erinType, '\uFEFFFirst Name;Email;Country\r\nÉmile;emile@example.com;France\r\n').expect(200);
    expect(res.body.summary).toEqual({ rows: 1, created: 1, updated: 0, skipped: 0, unsubscribed: 0, errors: [] });
    const [contact] = (await h.api(erin).get('/contacts/list').expect(200)).body.message.contacts;
    expect(contact).toMatchObject({ first_name: 'Émile', email: 'emile@example.com', country: 'France' });
  });

  test('when the file has a header row only then nothing is imported', async () => {
    const res = await upload(alice, type, `${HEADER}\n`).expect(200);
    expect(res.body).toEqual({ status: 'success', message: 'Imported Successfully', summary: { rows: 0, created: 0, updated: 0, skipped: 0, unsubscribed: 0, errors: [] } });
  });

  test('when the file has no email column or is empty then 422 on file', async () => {
    const noEmail = await upload(alice, type, 'first_name,last_name\nA,B\n').expect(422);
    expect(noEmail.body).toEqual({ status: 'failed', errors: { file: ['The file must have a header row with an email column.'] } });
    const empty = await upload(alice, type, '').expect(422);
    expect(empty.body).toEqual({ status: 'failed', errors: { file: ['The file must have a header row with an email column.'] } });
    expect(leftoverUploads()).toEqual([]);
  });

  test('when the file is not a .csv, or parameters are missing, then 422 names each', async () => {
    const wrong = await upload(alice, type, 'email\na@example.com\n', 'contacts.xlsx').expect(422);
    expect(wrong.body).toEqual({ status: 'failed', errors: { file: ['The file must be a file of type: csv.'] } });
    const missing = await h.api(alice).post('/contacts/upload-csv').field('other', 'x').expect(422);
    expect(missing.body).toEqual({
      status: 'failed',
      errors: { contact_type_id: ['The contact type id field is required.'], file: ['The file field is required.'] },
    });
    const notInteger = await upload(alice, 'abc', 'email\n').expect(422);
    expect(notInteger.body.errors).toEqual({ contact_type_id: ['The contact type id must be an integer.'] });
    expect(leftoverUploads()).toEqual([]);
  });

  test("when the contact type is another account's then 422 and nothing is imported", async () => {
    const frank = await h.account();
    const res = await upload(frank, type, 'email\nsneaky@example.com\n').expect(422);
    expect(res.body).toEqual({ status: 'failed', errors: { contact_type_id: ['The selected contact type id is invalid.'] } });
    expect(await emailsOf(alice)).not.toContain('sneaky@example.com');
    expect(await emailsOf(frank)).toEqual([]);
    expect(leftoverUploads()).toEqual([]);
  });

  // PostgreSQL has no foreign keys on contacts (migration 0950): these checks are the only guard.
  test('when the contact type was deleted or never existed then 422, and no contact refers to a missing or deleted type', async () => {
    const ivy = await h.account();
    const gone = await addContactType(h, ivy, 'Gone');
    await h.api(ivy).delete(`/contacts-type/delete?contact_type_id=${gone}`).expect(200);
    for (const id of [gone, 987654]) {
      const res = await upload(ivy, id, 'email\nlost@example.com\n').expect(422);
      expect(res.body).toEqual({ status: 'failed', errors: { contact_type_id: ['The selected contact type id is invalid.'] } });
      await h.api(ivy).post('/contacts/add').send({ contact_type_id: id, email: 'lost@example.com', country: await countryId(h, 'FR') }).expect(422);
    }
    expect(await emailsOf(ivy)).toEqual([]);
    const orphans = await h.runtime.db('contacts as c')
      .leftJoin('contact_types as t', 't.id', 'c.contact_type_id')
      .leftJoin('accounts as a', 'a.id', 'c.user_id')
      .whereNull('c.deleted_at')
      .where((q) => q.whereNull('t.id').orWhereNull('a.id').orWhereNotNull('t.deleted_at').orWhereRaw('t.user_id <> c.user_id'))
      .count({ n: '*' })
      .first();
    expect(Number(orphans?.n)).toBe(0);
  });

  test('when a file spans several batches then every row lands once and the joins are announced', async () => {
    const gina = await h.account();
    const ginaType = await addContactType(h, gina, 'Many');
    await addContact(h, gina, { contact_type_id: ginaType, email: 'row5@example.com', country: await countryId(h, 'FR') });
    const announced: number[] = [];
    h.runtime.services.audienceEvents.onContactTypeJoin(async (event) => {
      if (event.userId === gina.user_id) announced.push(...event.contactIds);
    });
    // Row 100 is in the first batch; a row of the second batch repeats its email: the later row wins.
    const repeat = importBatchRows(h.runtime.db) + 100;
    const lines = ['email,first_name'];
    for (let i = 0; i < 12_000; i += 1) lines.push(i === repeat ? 'ROW100@example.com,Latest' : `row${i}@example.com,Row ${i}`);
    const res = await upload(gina, ginaType, lines.join('\n')).expect(200);
    expect(res.body.summary).toEqual({ rows: 12_000, created: 11_998, updated: 2, skipped: 0, unsubscribed: 0, errors: [] });
    const count = await h.runtime.db('contacts').where({ user_id: gina.user_id }).whereNull('deleted_at').count({ n: '*' }).first();
    expect(Number(count?.n)).toBe(11_999);
    expect(new Set(announced).size).toBe(11_998);
    const row100 = await h.runtime.db('contacts').where({ user_id: gina.user_id, email_key: 'row100@example.com' }).first('first_name', 'email');
    expect(row100).toEqual({ first_name: 'Latest', email: 'ROW100@example.com' });
  });

  test('when a batch fails then it leaves no row behind, the batches before it stay, and the answer is a 500', async () => {
    const hank = await h.account();
    const hankType = await addContactType(h, hank, 'Fragile');
    // Rows go to a lane by email and each lane takes its rows B at a time (SQLite has one lane):
    // the batches are known before the upload. The second batch of lane 0 fails on its middle row.
    const batch = importBatchRows(h.runtime.db);
    const { lanes } = importLanes(h.runtime.db);
    const emails = Array.from({ length: Math.round(2.4 * batch * lanes) }, (_, i) => `f${i}@example.com`);
    const batches: string[][] = [];
    const firsts: number[] = [];
    for (let lane = 0; lane < lanes; lane += 1) {
      const mine = emails.filter((email) => importLane(email, lanes) === lane);
      firsts.push(batches.length);
      for (let at = 0; at < mine.length; at += batch) batches.push(mine.slice(at, at + batch));
    }
    expect(batches[1]).toHaveLength(batch);
    const failing = batches[1][batch / 2];
    h.runtime.services.audienceEvents.onContactTypeJoin(async (event, trx) => {
      if (event.userId !== hank.user_id) return;
      if (await trx('contacts').whereIn('id', event.contactIds).where({ email: failing }).first('id')) throw new Error('listener failed');
    });
    const res = await upload(hank, hankType, ['email', ...emails].join('\n')).expect(500);
    expect(res.body).toEqual({ status: 'failed', errors: 'Internal Server Error' });
    const rows: { email: string }[] = await h.runtime.db('contacts').where({ user_id: hank.user_id }).select('email');
    const stored = new Set(rows.map((r) => r.email));
    const kept = batches.map((rowsOf) => rowsOf.filter((email) => stored.has(email)).length);
    expect(kept[1]).toBe(0);
    // Each lane's first batch was written before the failing one; any batch is there whole or not at all
    // (on PostgreSQL other lanes' later batches may have been written alongside the failing one).
    for (const first of firsts) expect(kept[first]).toBe(batches[first].length);
    kept.forEach((n, at) => expect([0, batches[at].length]).toContain(n));
    expect(leftoverUploads()).toEqual([]);
  });
});

describe('CSV import size limit', () => {
  const h = useHarness({ MAX_CSV_MB: '1' });

  test('when the file is larger than MAX_CSV_MB then 413 and no file is left behind', async () => {
    const account = await h.account();
    const type = await addContactType(h, account, 'Big');
    const big = 'email\n' + 'someone@example.com\n'.repeat(60_000);
    const res = await h.api(account).post('/contacts/upload-csv').field('contact_type_id', String(type)).attach('file', Buffer.from(big), 'big.csv').expect(413);
    expect(res.body).toEqual({ status: 'failed', errors: 'The uploaded content is too large.' });
    const dir = uploadDir(h.runtime.config);
    expect(fs.existsSync(dir) ? fs.readdirSync(dir) : []).toEqual([]);
  });
});
