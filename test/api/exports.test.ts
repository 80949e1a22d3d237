import Papa from 'papaparse';
import { addContact, addContactType, addCustomField, countryId } from '../support/fixtures';
import { TestAccount, useHarness } from '../support/harness';

/** The header, then the rows sorted (as parsed values, so a line break inside a value is kept). */
function sortedRows(csv: string): string[][] {
  const [header, ...rows] = Papa.parse<string[]>(csv.trimEnd()).data;
  return [header, ...rows.sort((a, b) => a.join('\u0000').localeCompare(b.join('\u0000')))];
}

describe('CSV exports (extension)', () => {
  const h = useHarness();

  const HEADER = 'first_name,last_name,email,alt_email,country,state,city,address_line1,address_line2,state_province_region,postal_code';

  const exportOf = async (account: TestAccount, query = '') => {
    const res = await h.api(account).get(`/contacts/export${query}`).expect(200);
    expect(res.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(res.headers['content-disposition']).toBe('attachment; filename=contacts.csv');
    return res.text;
  };

  const upload = (account: TestAccount, type: number, csv: string) =>
    h.api(account).post('/contacts/upload-csv').field('contact_type_id', String(type)).attach('file', Buffer.from(csv), 'export.csv');

  async function accountWithFields(): Promise<{ account: TestAccount; type: number }> {
    const account = await h.account();
    await addCustomField(h, account, 'plan', 'text');
    await addCustomField(h, account, 'score', 'number');
    await addCustomField(h, account, 'joined', 'datetime-local');
    return { account, type: await addContactType(h, account, 'Everyone') };
  }

  test('when contacts are exported then the CSV has the sample file’s columns plus one per custom field, country by name, oldest first', async () => {
    const { account, type } = await accountWithFields();
    const other = await addContactType(h, account, 'Other');
    await addContact(h, account, { contact_type_id: type, email: 'ann@example.com', first_name: 'Ann', last_name: 'Lee', country: await countryId(h, 'FR'), city: 'Paris', custom_field: { plan: 'pro', score: '7' } });
    await addContact(h, account, { contact_type_id: other, email: 'bo@example.com', first_name: 'Bo', country: await countryId(h, 'DE'), custom_field: { joined: '2026-01-31T09:00' } });

    const all = await exportOf(account);
    expect(all).toBe(
      `${HEADER},plan,score,joined\r\n` +
        'Ann,Lee,ann@example.com,,France,,Paris,,,,,pro,7,\r\n' +
        'Bo,,bo@example.com,,Germany,,,,,,,,,2026-01-31T09:00\r\n',
    );
    expect(await exportOf(account, `?contact_type_id=${other}`)).toBe(`${HEADER},plan,score,joined\r\nBo,,bo@example.com,,Germany,,,,,,,,,2026-01-31T09:00\r\n`);
  });

  test('when an exported file is imported into another account and exported again then it is unchanged', async () => {
    const source = await accountWithFields();
    const values = [
      { email: 'quote@example.com', first_name: 'Zoë "Z"', last_name: 'Müller, Jr.', city: 'Line one\nline two', custom_field: { plan: 'a,b', score: '-12.5' } },
      { email: 'Mixed.Case@Example.com', first_name: '李', alt_email: 'other@example.org', state: 'Île-de-France', postal_code: '75011', custom_field: { joined: '2026-03-02T00:00' } },
      { email: 'plain@example.com', address_line1: '1 Main St', address_line2: 'Apt 4', state_province_region: 'CA' },
    ];
    for (const v of values) await addContact(h, source.account, { contact_type_id: source.type, country: await countryId(h, 'FR'), ...v });
    const first = await exportOf(source.account);

    const target = await accountWithFields();
    const imported = await upload(target.account, target.type, first).expect(200);
    expect(imported.body.summary).toEqual({ rows: 3, created: 3, updated: 0, skipped: 0, unsubscribed: 0, errors: [] });
    // The same header and rows; PostgreSQL's bulk write may number the new contacts in another order.
    expect(sortedRows(await exportOf(target.account))).toEqual(sortedRows(first));
    expect(sortedRows(first)).toHaveLength(4);

    // Imported back into its own account, it changes nothing either.
    const again = await upload(source.account, source.type, first).expect(200);
    expect(again.body.summary).toMatchObject({ rows: 3, created: 0, updated: 3, skipped: 0 });
    expect(await exportOf(source.account)).toBe(first);
  });

  test('when values look like spreadsheet formulas then the export writes them as text, and they import back unchanged', async () => {
    const source = await accountWithFields();
    await addContact(h, source.account, {
      contact_type_id: source.type, country: await countryId(h, 'FR'), email: 'formula@example.com',
      first_name: '=HYPERLINK("http://evil.example","Click")', last_name: '@SUM(1+1)', city: '-2+3+cmd|\' /C calc\'!A0',
      address_line1: '+49 30 1234', postal_code: '-12', custom_field: { plan: '+cmd|calc', score: '-12.5' },
    });
    const csv = await exportOf(source.account);
    const [, row] = csv.trimEnd().split('\r\n');
    // Formula-like cells start with a quote mark; plain numbers, signed or not, stay numbers.
    expect(row).toBe(
      `"'=HYPERLINK(""http://evil.example"",""Click"")","'@SUM(1+1)",formula@example.com,,France,,"'-2+3+cmd|' /C calc'!A0",+49 30 1234,,,-12,"'+cmd|calc",-12.5,`,
    );
    const target = await accountWithFields();
    await upload(target.account, target.type, csv).expect(200);
    const [contact] = (await h.api(target.account).get('/contacts/list').expect(200)).body.message.contacts;
    expect(contact).toMatchObject({ first_name: '=HYPERLINK("http://evil.example","Click")', last_name: '@SUM(1+1)', city: '-2+3+cmd|\' /C calc\'!A0', address_line1: '+49 30 1234' });
    expect(contact.custom_field.plan.field_value).toBe('+cmd|calc');
    expect(await exportOf(target.account)).toBe(csv);
  });

  test('when a segment is exported then only its members come out, brought up to date first', async () => {
    const { account, type } = await accountWithFields();
    const paris = await addContact(h, account, { contact_type_id: type, email: 'p@example.com', city: 'Paris', country: await countryId(h, 'FR') });
    await addContact(h, account, { contact_type_id: type, email: 'l@example.com', city: 'Lyon', country: await countryId(h, 'FR') });
    await h.api(account)
      .post('/segment/save')
      .send({ segment_name: 'Parisians', contact_type_id: type, select_field: ['city'], select_operator: ['is'], value: ['Paris'] })
      .expect(200);
    const segment = await h.runtime.db('segments').where({ user_id: account.user_id }).first('id');
    // A contact that moves to Paris after the segment was saved is a member at export time.
    await h.api(account).post('/contacts/update').send({ contact_id: String(paris), contact_type_id: type, email: 'p@example.com', country: await countryId(h, 'FR'), city: 'Paris' }).expect(200);
    const lyon = await h.runtime.db('contacts').where({ user_id: account.user_id, email_key: 'l@example.com' }).first('id');
    await h.api(account).post('/contacts/update').send({ contact_id: String(lyon.id), contact_type_id: type, email: 'l@example.com', country: await countryId(h, 'FR'), city: 'Paris' }).expect(200);
    const csv = await exportOf(account, `?segment_id=${segment.id}`);
    expect(csv.trimEnd().split('\r\n').slice(1).map((line) => line.split(',')[2]).sort()).toEqual(['l@example.com', 'p@example.com']);
  });

  test('when the filters name another account’s records or are not integers then 422 names each', async () => {
    const { account } = await accountWithFields();
    const stranger = await accountWithFields();
    const res = await h.api(account).get(`/contacts/export?contact_type_id=${stranger.type}&segment_id=999999`).expect(422);
    expect(res.body).toEqual({
      status: 'failed',
      errors: { contact_type_id: ['The selected contact type id is invalid.'], segment_id: ['The selected segment id is invalid.'] },
    });
    const bad = await h.api(account).get('/contacts/export?contact_type_id=abc').expect(422);
    expect(bad.body).toEqual({ status: 'failed', errors: { contact_type_id: ['The contact type id must be an integer.'] } });
  });

  test('when global unsubscribes and a group’s recipients are exported then each is a CSV of its addresses; another account’s group is a 404', async () => {
    const { account } = await accountWithFields();
    await h.api(account).post('/global-unsubscribes/save').send({ email_address: 'g1@example.com, g2@example.com' }).expect(200);
    await h.api(account).post('/unsubscribes-groups/save').send({ group_name: 'News', description: 'Weekly', is_display: 1 }).expect(200);
    const group = await h.runtime.db('unsubscribe_groups').where({ user_id: account.user_id }).first('id');
    await h.api(account).post('/unsubscribes-groups/manually-add').send({ unsubscribe_groups_id: group.id, email_address: 'r1@example.com' }).expect(200);

    const globals = await h.api(account).get('/global-unsubscribes/export').expect(200);
    expect(globals.headers['content-disposition']).toBe('attachment; filename=global-unsubscribes.csv');
    const lines = globals.text.trimEnd().split('\r\n');
    expect(lines[0]).toBe('email_address,created_at');
    expect(lines.slice(1).map((l) => l.split(',')[0])).toEqual(['g1@example.com', 'g2@example.com']);
    expect(lines[1].split(',')[1]).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/);

    const recipients = await h.api(account).get(`/unsubscribes-groups/recipients-export?groupId=${group.id}`).expect(200);
    expect(recipients.text.trimEnd().split('\r\n').map((l) => l.split(',')[0])).toEqual(['email_address', 'r1@example.com']);

    const stranger = await h.account();
    const foreign = await h.api(stranger).get(`/unsubscribes-groups/recipients-export?groupId=${group.id}`).expect(404);
    expect(foreign.body).toEqual({ status: 'failed', errors: 'Record Not Found' });
    const missing = await h.api(account).get('/unsubscribes-groups/recipients-export').expect(422);
    expect(missing.body).toEqual({ status: 'failed', errors: { groupId: ['The groupId field is required.'] } });
  });
});
