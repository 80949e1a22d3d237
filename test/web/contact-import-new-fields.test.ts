import fs from 'node:fs';
import path from 'node:path';
import { useHarness } from '../support/harness';
import { importProgressUntilDone, useTwoAccounts } from '../support/web';

const FIXTURES = path.join(__dirname, '..', 'fixtures', 'imports');

/** The dashboard import needs nothing made beforehand: a contact type, custom fields, Excel's Unicode Text. */
describe('dashboard CSV import without a detour', () => {
  const h = useHarness();
  const t = useTwoAccounts(h);

  const upload = (content: Buffer | string, name: string, contactTypeId: string) =>
    t.web.agent.post('/contacts/import').field('_csrf', t.web.csrf).field('contact_type_id', contactTypeId).attach('file', Buffer.from(content), name);
  const idOf = (location: string) => Number(/^\/contacts\/import\/(\d+)\/columns$/.exec(location)?.[1]);

  const finished = (id: number) => importProgressUntilDone(t.web, id);

  test('when the account has no contact type then the import page offers one named after the file, and the upload makes it', async () => {
    const page = await t.web.get('/contacts/import').expect(200);
    expect(page.text).toContain('You have no contact type yet: the upload makes one, named after the file.');
    expect(page.text).toContain('<option value="new"');
    const res = await upload('email\nfirst@example.com', 'summer_fair-signups.csv', 'new').expect(303);
    const types = await h.runtime.db('contact_types').where({ user_id: t.alice.user_id }).pluck('name');
    expect(types).toEqual(['summer fair signups']);
    // The same file again makes a second type rather than failing on the name.
    await upload('email\nsecond@example.com', 'summer_fair-signups.csv', 'new').expect(303);
    expect((await h.runtime.db('contact_types').where({ user_id: t.alice.user_id }).pluck('name')).sort()).toEqual(['summer fair signups', 'summer fair signups 2']);
    expect(res.headers.location).toMatch(/^\/contacts\/import\/\d+\/columns$/);
  });

  test('when Excel’s Unicode Text is uploaded as .txt then it is read as UTF-16 with tabs and imported', async () => {
    const [typeId] = await h.runtime.db('contact_types').where({ user_id: t.alice.user_id }).orderBy('id').pluck('id');
    const res = await upload(fs.readFileSync(path.join(FIXTURES, 'excel-unicode-text.csv')), 'contacts.txt', String(typeId)).expect(303);
    const id = idOf(res.headers.location);
    const columns = await t.web.get(`/contacts/import/${id}/columns`).expect(200);
    expect(columns.text).toContain('Read as utf-16le, separated by tabs.');
  });

  test('when unmapped columns are made new custom fields on the mapping page then each gets the type its values suggest and its values come in', async () => {
    const [typeId] = await h.runtime.db('contact_types').where({ user_id: t.alice.user_id }).orderBy('id').pluck('id');
    const csv = fs.readFileSync(path.join(FIXTURES, 'subscribed_members_export_4f2a9c1b7e.csv'));
    const res = await upload(csv, 'subscribed_members_export_4f2a9c1b7e.csv', String(typeId)).expect(303);
    const id = idOf(res.headers.location);
    const page = await t.web.get(`/contacts/import/${id}/columns`).expect(200);
    const header = String(csv).split('\n')[0].split(',').map((c) => c.replace(/"/g, ''));
    const at = (name: string) => header.indexOf(name);
    expect(page.text).toContain('New number field “MEMBER_RATING” (as the values suggest)');
    expect(page.text).toContain('New date field “OPTIN_TIME” (as the values suggest)');
    // Offered by the column's own header, the words the person knows it by.
    expect(page.text).toContain('New text field “Phone Number” (as the values suggest)');
    const form: Record<string, string> = {};
    const chosen = [...page.text.matchAll(/<select id="column-(\d+)" name="column\[\d+\]">([\s\S]*?)<\/select>/g)].map((m) => /<option value="([^"]*)" selected>/.exec(m[2])?.[1] ?? 'ignore');
    chosen.forEach((target, i) => (form[`column[${i}]`] = target));
    Object.assign(form, {
      [`column[${at('MEMBER_RATING')}]`]: 'new:number',
      [`column[${at('OPTIN_TIME')}]`]: 'new:datetime-local',
      [`column[${at('Phone Number')}]`]: 'new:text',
      [`column[${at('TAGS')}]`]: 'new:text',
    });
    await t.web.post(`/contacts/import/${id}/columns`, form).expect(303);
    expect(await finished(id)).toContain('<p class="stat-label">Created</p><p class="stat-value">2</p>');
    const fields = await h.runtime.db('fields').where({ user_id: t.alice.user_id, is_reserved: 0 }).orderBy('field_name').select('field_name', 'field_type');
    expect(fields).toEqual([
      { field_name: 'MEMBER_RATING', field_type: 'number' },
      { field_name: 'OPTIN_TIME', field_type: 'datetime-local' },
      { field_name: 'Phone_Number', field_type: 'text' },
      { field_name: 'TAGS', field_type: 'text' },
    ]);
    // The header stays the field's label where it differs from the name; the API's records are as before.
    expect(await h.runtime.db('fields').where({ user_id: t.alice.user_id, is_reserved: 0 }).orderBy('field_name').pluck('label')).toEqual([null, null, 'Phone Number', null]);
    const listed = (await h.api(t.alice).get('/custom-fields').expect(200)).body.message.customFields;
    expect(Object.keys(listed.find((f: { field_name: string }) => f.field_name === 'Phone_Number')).sort()).toEqual(['created_at', 'field_name', 'field_type', 'id', 'is_reserved', 'updated_at', 'user_id']);
    // The dashboard shows the label: the custom fields page (with the placeholder's name beside it), the segment builder.
    const fieldsPage = (await t.web.get('/custom-fields').expect(200)).text;
    expect(fieldsPage).toContain('<td>Phone Number</td>');
    expect(fieldsPage).toContain('<td><code>((Phone_Number))</code></td>');
    await h.api(t.alice).post('/segment/save').send({
      segment_name: 'Callable', contact_type_id: typeId, select_field: ['Phone_Number', 'state_province_region'], select_operator: ['is not empty', 'is'], value: ['Bavaria'],
    }).expect(200);
    const segments = (await t.web.get('/segments').expect(200)).text;
    expect(segments).toContain('Phone Number is not empty and State, province or region is “Bavaria”');
    const [segmentId] = await h.runtime.db('segments').where({ user_id: t.alice.user_id, segment_name: 'Callable' }).pluck('id');
    const builder = (await t.web.get(`/segments/${segmentId}/edit`).expect(200)).text;
    expect(builder).toContain('<option value="Phone_Number" data-kind="text" selected>Phone Number</option>');
    expect(builder).toContain('<option value="state_province_region" data-kind="text" selected>State, province or region</option>');
    expect(builder).toContain('<option value="created_at" data-kind="date">Date added</option>');
    const anna = await h.api(t.alice).get('/contacts/list').expect(200);
    const record = anna.body.message.contacts.find((c: { email: string }) => c.email === 'anna.schmidt@example.com');
    expect(record.custom_field.MEMBER_RATING.field_value).toBe('4');
    expect(record.custom_field.OPTIN_TIME.field_value).toBe('2023-01-05T10:00');
    expect(record.custom_field.Phone_Number.field_value).toBe('555-0100');
    expect(record.custom_field.TAGS.field_value).toBe('"Newsletter","VIP"');
  });
});
