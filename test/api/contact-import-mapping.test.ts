import fs from 'node:fs';
import path from 'node:path';
import { uploadDir } from '../../src/http/upload';
import { addContactType, addCustomField } from '../support/fixtures';
import { useHarness } from '../support/harness';
import { failed } from '../support/expectations';

const FIXTURES = path.join(__dirname, '..', 'fixtures', 'imports');

describe('CSV column mapping and preview', () => {
  const h = useHarness();
  const [alice] = h.accounts(1);
  let type: number;

  beforeAll(async () => {
    type = await addContactType(h, alice, 'Mapped');
    await addCustomField(h, alice, 'member_rating', 'number');
  });

  const leftoverUploads = () => (fs.existsSync(uploadDir(h.runtime.config)) ? fs.readdirSync(uploadDir(h.runtime.config)) : []);

  const send = (url: string, content: Buffer | string, fields: Record<string, string>, name = 'file.csv') => {
    let req = h.api(alice).post(url);
    for (const [key, value] of Object.entries(fields)) req = req.field(key, value);
    return req.attach('file', Buffer.from(content), name);
  };

  test('when a Mailchimp export is previewed then the answer has its encoding, delimiter, header, first rows and the proposed mapping', async () => {
    const file = fs.readFileSync(path.join(FIXTURES, 'subscribed_members_export_4f2a9c1b7e.csv'));
    const res = await send('/contacts/csv-preview', file, {}).expect(200);
    const { preview } = res.body.message;
    expect(res.body.status).toBe('success');
    expect(preview.encoding).toBe('utf-8');
    expect(preview.delimiter).toBe(',');
    expect(preview.header.slice(0, 4)).toEqual(['Email Address', 'First Name', 'Last Name', 'Address']);
    expect(preview.rows).toHaveLength(2);
    expect(preview.rows[1].slice(0, 3)).toEqual(['jose.garcia@example.com', 'José', 'García']);
    expect(preview.mapping).toMatchObject({
      'Email Address': 'email',
      'First Name': 'first_name',
      'Last Name': 'last_name',
      Address: 'address_line1',
      'Phone Number': null,
      MEMBER_RATING: 'member_rating',
      OPTIN_TIME: null,
      TAGS: null,
    });
    expect(leftoverUploads()).toEqual([]);
  });

  test('when a Windows-1252 file with semicolons is previewed then it says so and its rows read right', async () => {
    const file = fs.readFileSync(path.join(FIXTURES, 'excel-semicolon-windows-1252.csv'));
    const { preview } = (await send('/contacts/csv-preview', file, {}).expect(200)).body.message;
    expect(preview).toEqual({
      encoding: 'windows-1252',
      delimiter: ';',
      header: ['E-mail', 'First name', 'Surname', 'Zip', 'City'],
      rows: [
        ['francois@example.fr', 'François', 'Lefèvre', '75011', 'Paris'],
        ['koeln@example.de', 'Jörg', 'Weiß', '50667', 'Köln'],
      ],
      mapping: { 'E-mail': 'email', 'First name': 'first_name', Surname: 'last_name', Zip: 'postal_code', City: 'city' },
    });
  });

  test('when a mapping is given then it overrides the aliases, ignores columns and fills custom fields', async () => {
    const csv = ['Contact,Given,Family,Rating,Name', 'm1@example.com,Ann,Lee,4,Ignored Name', 'm2@example.com,Bo,Kim,2,Other'].join('\n');
    const fields = {
      contact_type_id: String(type),
      'mapping[Contact]': 'email',
      'mapping[Given]': 'first_name',
      'mapping[Family]': 'ignore',
      'mapping[Rating]': 'member_rating',
      'mapping[Name]': 'ignore',
    };
    const preview = (await send('/contacts/csv-preview', csv, fields).expect(200)).body.message.preview;
    expect(preview.mapping).toEqual({ Contact: 'email', Given: 'first_name', Family: null, Rating: 'member_rating', Name: null });
    const res = await send('/contacts/upload-csv', csv, fields).expect(200);
    expect(res.body.summary).toEqual({ rows: 2, created: 2, updated: 0, skipped: 0, unsubscribed: 0, errors: [] });
    const m1 = await h.runtime.db('contacts').where({ user_id: alice.user_id, email_key: 'm1@example.com' }).first('first_name', 'last_name', 'custom_fields');
    expect(m1.first_name).toBe('Ann');
    expect(m1.last_name).toBe('');
    expect(typeof m1.custom_fields === 'string' ? JSON.parse(m1.custom_fields) : m1.custom_fields).toEqual({ member_rating: '4' });
  });

  test('when a mapping names an unknown field or a column the file lacks then 422 names each and nothing is imported', async () => {
    const csv = 'Email Address,Colour\nno@example.com,red\n';
    const res = await send('/contacts/upload-csv', csv, { contact_type_id: String(type), 'mapping[Colour]': 'favourite_colour', 'mapping[Phone]': 'email' }).expect(422);
    expect(res.body).toEqual(failed({
      'mapping[Colour]': ['The column Colour cannot be mapped to favourite_colour: choose a contact field, a custom field or ignore.'],
      'mapping[Phone]': ['The file has no column named Phone.'],
    }));
    expect(await h.runtime.db('contacts').where({ email_key: 'no@example.com' }).first()).toBeUndefined();
    expect(leftoverUploads()).toEqual([]);
  });

  test('when the preview has no file or a wrong one then 422 says so', async () => {
    const none = await h.api(alice).post('/contacts/csv-preview').field('encoding', 'utf-8').expect(422);
    expect(none.body).toEqual({ status: 'failed', errors: { file: ['The file field is required.'] } });
    const wrong = await send('/contacts/csv-preview', 'email\n', {}, 'people.xlsx').expect(422);
    expect(wrong.body).toEqual({ status: 'failed', errors: { file: ['The file must be a file of type: csv.'] } });
    const empty = await send('/contacts/csv-preview', '', {}).expect(422);
    expect(empty.body).toEqual({ status: 'failed', errors: { file: ['The file is empty.'] } });
  });
});
