import iconv from 'iconv-lite';
import { addContactType, addCustomField } from '../support/fixtures';
import { TestAccount, useHarness } from '../support/harness';
import { importFixture, importReaders } from '../support/import-readers';

/** Exports of the tools people leave, in their own formats (test/fixtures/imports). */
const fixture = importFixture;

describe('CSV import of other tools’ exports', () => {
  const h = useHarness();
  const { contactsOf, unsubscribedOf } = importReaders(h);

  async function freshAccount(): Promise<{ account: TestAccount; type: number }> {
    const account = await h.account();
    return { account, type: await addContactType(h, account, 'Imported') };
  }

  const upload = (account: TestAccount, type: number, content: Buffer | string, name: string, fields: Record<string, string> = {}) => {
    let req = h.api(account).post('/contacts/upload-csv').field('contact_type_id', String(type));
    for (const [key, value] of Object.entries(fields)) req = req.field(key, value);
    return req.attach('file', Buffer.from(content), name);
  };

  /** The account's suppression list as `address reason source`. */
  const suppressedOf = async (account: TestAccount): Promise<string[]> =>
    (await h.api(account).get('/suppressions').expect(200)).body.message.suppressions
      .map((s: { email_address: string; reason: string; source: string }) => `${s.email_address} ${s.reason} ${s.source}`)
      .sort();

  test('when Mailchimp’s subscribed, unsubscribed and cleaned exports are imported then names are right, the unsubscribed address is unsubscribed and the cleaned one suppressed as a bounce', async () => {
    const { account, type } = await freshAccount();
    const subscribed = await upload(account, type, fixture('subscribed_members_export_4f2a9c1b7e.csv'), 'subscribed_members_export_4f2a9c1b7e.csv').expect(200);
    expect(subscribed.body.summary).toEqual({ rows: 2, created: 2, updated: 0, skipped: 0, unsubscribed: 0, errors: [] });
    const unsubscribed = await upload(account, type, fixture('unsubscribed_members_export_4f2a9c1b7e.csv'), 'unsubscribed.csv').expect(200);
    expect(unsubscribed.body.summary).toEqual({ rows: 1, created: 1, updated: 0, skipped: 0, unsubscribed: 1, errors: [] });
    const cleaned = await upload(account, type, fixture('cleaned_members_export_4f2a9c1b7e.csv'), 'cleaned.csv').expect(200);
    expect(cleaned.body.summary).toEqual({ rows: 1, created: 1, updated: 0, skipped: 0, unsubscribed: 1, errors: [] });

    const contacts = await contactsOf(account);
    expect(contacts.get('anna.schmidt@example.com')).toMatchObject({ first_name: 'Anna', last_name: 'Schmidt', address_line1: '12 Main St  Springfield  IL  62701  US' });
    expect(contacts.get('jose.garcia@example.com')).toMatchObject({ first_name: 'José', last_name: 'García' });
    expect(contacts.get('leaving@example.com')).toMatchObject({ first_name: 'Lea', last_name: 'Ving' });
    expect(contacts.get('gone@example.com')).toMatchObject({ first_name: 'Gon', last_name: 'Away' });
    expect(await unsubscribedOf(account)).toEqual(['leaving@example.com']);
    expect(await suppressedOf(account)).toEqual(['gone@example.com hard_bounce import']);
  });

  test('when a Brevo export is imported then FIRSTNAME and LASTNAME fill the names and a blacklisted address is unsubscribed', async () => {
    const { account, type } = await freshAccount();
    const res = await upload(account, type, fixture('brevo_contacts_export.csv'), 'brevo_contacts_export.csv').expect(200);
    expect(res.body.summary).toEqual({ rows: 2, created: 2, updated: 0, skipped: 0, unsubscribed: 1, errors: [] });
    const contacts = await contactsOf(account);
    expect(contacts.get('claire.dubois@example.com')).toMatchObject({ first_name: 'Claire', last_name: 'Dubois' });
    expect(contacts.get('blocked@example.com')).toMatchObject({ first_name: 'Bruno', last_name: 'Blanc' });
    expect(await unsubscribedOf(account)).toEqual(['blocked@example.com']);
  });

  test('when a HubSpot export is imported then names and address land in their fields and "unsubscribed from all email" is honoured', async () => {
    const { account, type } = await freshAccount();
    const res = await upload(account, type, fixture('hubspot-crm-exports-all-contacts-2024-05-06.csv'), 'hubspot.csv').expect(200);
    expect(res.body.summary).toEqual({ rows: 2, created: 2, updated: 0, skipped: 0, unsubscribed: 1, errors: [] });
    const contacts = await contactsOf(account);
    expect(contacts.get('grace@example.com')).toMatchObject({
      first_name: 'Grace', last_name: 'Hopper', address_line1: '1 Navy Way', city: 'Arlington', state: 'VA', postal_code: '22202', country: 'United States',
    });
    expect(contacts.get('alan@example.com')).toMatchObject({ first_name: 'Alan', last_name: 'Turing', city: 'Wilmslow', country: 'United Kingdom' });
    expect(await unsubscribedOf(account)).toEqual(['alan@example.com']);
  });

  test('when a Google Contacts export is imported then Given Name and Family Name fill the names and E-mail 1 is the email', async () => {
    const { account, type } = await freshAccount();
    const res = await upload(account, type, fixture('google-contacts.csv'), 'contacts.csv').expect(200);
    expect(res.body.summary).toEqual({ rows: 2, created: 2, updated: 0, skipped: 0, unsubscribed: 0, errors: [] });
    const contacts = await contactsOf(account);
    expect(contacts.get('ada@example.com')).toMatchObject({
      first_name: 'Ada', last_name: 'Lovelace', alt_email: 'ada@work.example.com', address_line1: '12 St James\'s Square', city: 'London', postal_code: 'SW1Y 4JH', country: 'United Kingdom',
    });
    expect(contacts.get('emilie@example.fr')).toMatchObject({ first_name: 'Émilie', last_name: 'du Châtelet' });
  });

  test('when an Outlook export in Windows-1252 is imported then E-mail Address matches and accented names arrive intact', async () => {
    const { account, type } = await freshAccount();
    const res = await upload(account, type, fixture('outlook-contacts.csv'), 'outlook.csv').expect(200);
    expect(res.body.summary).toEqual({ rows: 2, created: 2, updated: 0, skipped: 0, unsubscribed: 0, errors: [] });
    const contacts = await contactsOf(account);
    expect(contacts.get('juergen.mueller@example.de')).toMatchObject({ first_name: 'Jürgen', last_name: 'Müller', address_line1: 'Hauptstraße 5', city: 'Köln', country: 'Germany' });
    expect(contacts.get('zoe@example.se')).toMatchObject({ first_name: 'Zoë', last_name: 'Ångström' });
  });

  test('when a listmonk export is imported then name is split, attributes fill custom fields, unknown keys are listed and a blocklisted row is unsubscribed', async () => {
    const { account, type } = await freshAccount();
    await addCustomField(h, account, 'plan', 'text');
    await addCustomField(h, account, 'score', 'number');
    const res = await upload(account, type, fixture('listmonk-subscribers.csv'), 'subscribers.csv').expect(200);
    expect(res.body.summary).toEqual({ rows: 3, created: 3, updated: 0, skipped: 0, unsubscribed: 1, errors: [], ignored_attributes: ['city'] });
    const contacts = await contactsOf(account);
    expect(contacts.get('marie@example.com')).toMatchObject({
      first_name: 'Marie', last_name: 'Curie',
      custom_field: { plan: { field_name: 'plan', field_value: 'pro' }, score: { field_name: 'score', field_value: '42' } },
    });
    expect(contacts.get('solo@example.com')).toMatchObject({ first_name: 'Prince', last_name: '', custom_field: { plan: { field_name: 'plan', field_value: 'free' }, score: { field_name: 'score', field_value: null } } });
    expect(await unsubscribedOf(account)).toEqual(['spam@example.com']);
  });

  test('when a European Excel file (Windows-1252, semicolons) is imported then E-mail, First name, Surname and Zip match and nothing is garbled', async () => {
    const { account, type } = await freshAccount();
    const res = await upload(account, type, fixture('excel-semicolon-windows-1252.csv'), 'excel.csv').expect(200);
    expect(res.body.summary).toEqual({ rows: 2, created: 2, updated: 0, skipped: 0, unsubscribed: 0, errors: [] });
    const contacts = await contactsOf(account);
    expect(contacts.get('francois@example.fr')).toMatchObject({ first_name: 'François', last_name: 'Lefèvre', postal_code: '75011', city: 'Paris' });
    expect(contacts.get('koeln@example.de')).toMatchObject({ first_name: 'Jörg', last_name: 'Weiß', city: 'Köln' });
  });

  test('when Excel’s Unicode text (UTF-16 LE with a mark, tabs) is imported then its names arrive intact', async () => {
    const { account, type } = await freshAccount();
    const res = await upload(account, type, fixture('excel-unicode-text.csv'), 'unicode.csv').expect(200);
    expect(res.body.summary).toEqual({ rows: 1, created: 1, updated: 0, skipped: 0, unsubscribed: 0, errors: [] });
    expect((await contactsOf(account)).get('naoko@example.jp')).toMatchObject({ first_name: '直子', last_name: '山田' });
  });

  test('when a status column says unsubscribed, blocklisted or blacklisted then those addresses are unsubscribed; cleaned or bounced ones are suppressed as bounces', async () => {
    const { account, type } = await freshAccount();
    const csv = ['Email Address,STATUS', 'a@example.com,subscribed', 'b@example.com,Unsubscribed', 'c@example.com,cleaned', 'd@example.com,bounced', 'e@example.com,blocklisted', 'f@example.com,blacklisted', 'g@example.com,pending'].join('\n');
    const res = await upload(account, type, csv, 'status.csv').expect(200);
    expect(res.body.summary).toEqual({ rows: 7, created: 7, updated: 0, skipped: 0, unsubscribed: 5, errors: [] });
    expect(await unsubscribedOf(account)).toEqual(['b@example.com', 'e@example.com', 'f@example.com']);
    expect(await suppressedOf(account)).toEqual(['c@example.com hard_bounce import', 'd@example.com hard_bounce import']);
  });

  test('when a 2 MB file has an unclosed quote on row 13 then that row is reported, every record is counted and the rest is imported', async () => {
    const { account, type } = await freshAccount();
    const lines = ['email,first_name,last_name'];
    for (let i = 2; i <= 41_713; i += 1) lines.push(i === 13 ? `broken@example.com,"Unclosed,Quote` : `person${i}@example.com,First ${i},Last name number ${i}`);
    const csv = lines.join('\n') + '\n';
    expect(csv.length).toBeGreaterThan(2_000_000);
    const res = await upload(account, type, csv, 'big.csv').expect(200);
    expect(res.body.summary).toEqual({
      rows: 41_712,
      created: 41_711,
      updated: 0,
      skipped: 1,
      unsubscribed: 0,
      errors: [{ row: 13, reason: 'A quote opened in this row is never closed, so the row could not be read (reading went on at the next line).' }],
    });
    const last = await h.runtime.db('contacts').where({ user_id: account.user_id, email_key: 'person41713@example.com' }).first('first_name');
    expect(last).toEqual({ first_name: 'First 41713' });
  });

  test('when rows have too many or too few values then each is skipped with its row number, trailing empty values are fine', async () => {
    const { account, type } = await freshAccount();
    const csv = ['email,first_name,last_name', 'ok@example.com,Ok,Fine', 'short@example.com,Short', 'long@example.com,Too,Many,Values', 'trailing@example.com,Trail,Ing,,'].join('\r\n');
    const res = await upload(account, type, csv, 'fields.csv').expect(200);
    expect(res.body.summary).toEqual({
      rows: 4,
      created: 2,
      updated: 0,
      skipped: 2,
      unsubscribed: 0,
      errors: [
        { row: 3, reason: 'This row has 2 values where the header has 3.' },
        { row: 4, reason: 'This row has 4 values where the header has 3.' },
      ],
    });
  });

  test('when the encoding is given then it overrides the detection, and bytes it cannot read skip the row instead of storing U+FFFD', async () => {
    const { account, type } = await freshAccount();
    const latin2 = iconv.encode('email,first_name\r\nlech@example.pl,Łukasz\r\n', 'iso-8859-2');
    const res = await upload(account, type, latin2, 'pl.csv', { encoding: 'iso-8859-2' }).expect(200);
    expect(res.body.summary).toMatchObject({ rows: 1, created: 1, skipped: 0 });
    expect((await contactsOf(account)).get('lech@example.pl')).toMatchObject({ first_name: 'Łukasz' });

    const latin1 = iconv.encode('email,first_name\r\nfr@example.fr,François\r\nplain@example.com,Plain\r\n', 'windows-1252');
    const forced = await upload(account, type, latin1, 'fr.csv', { encoding: 'utf-8' }).expect(200);
    expect(forced.body.summary).toEqual({
      rows: 2,
      created: 1,
      updated: 0,
      skipped: 1,
      unsubscribed: 0,
      errors: [{ row: 2, reason: "The first name has characters that could not be read in the file's encoding; choose the file's encoding and upload it again." }],
    });
    const stored = await h.runtime.db('contacts').where({ user_id: account.user_id }).pluck('first_name');
    expect(stored.join('')).not.toContain('\uFFFD');

    const unknown = await upload(account, type, 'email\na@example.com\n', 'x.csv', { encoding: 'klingon-8' }).expect(422);
    expect(unknown.body).toEqual({ status: 'failed', errors: { encoding: ['The selected encoding is invalid.'] } });
  });
});
