import { addContactType } from '../support/fixtures';
import { TestAccount, useHarness } from '../support/harness';
import { importFixture, importReaders } from '../support/import-readers';

/** MailerLite, Substack, HubSpot and Google Contacts exports import as they are, statuses honoured. */
const fixture = importFixture;

describe('CSV import of MailerLite, Substack, HubSpot and Google Contacts exports', () => {
  const h = useHarness();
  const { contactsOf, unsubscribedOf } = importReaders(h);

  async function imported(name: string): Promise<{ account: TestAccount; summary: Record<string, unknown> }> {
    const account = await h.account();
    const type = await addContactType(h, account, 'Imported');
    const res = await h.api(account).post('/contacts/upload-csv').field('contact_type_id', String(type)).attach('file', fixture(name), name).expect(200);
    return { account, summary: res.body.summary };
  }
  const suppressedOf = async (account: TestAccount): Promise<string[]> =>
    (await h.api(account).get('/suppressions').expect(200)).body.message.suppressions.map((s: { email_address: string }) => s.email_address).sort();

  test('when a MailerLite export is imported then name is the first name beside last_name, and junk, unconfirmed, unsubscribed and bounced addresses are not mailable', async () => {
    const { account, summary } = await imported('mailerlite-subscribers-export.csv');
    expect(summary).toEqual({ rows: 5, created: 5, updated: 0, skipped: 0, unsubscribed: 4, errors: [] });
    const contacts = await contactsOf(account);
    expect(contacts.get('grace@example.com')).toMatchObject({ first_name: 'Grace', last_name: 'Hopper', city: 'Arlington', postal_code: '22201' });
    expect(contacts.get('new@example.com')).toMatchObject({ first_name: 'Nia', last_name: 'Newcomer' });
    expect(await unsubscribedOf(account)).toEqual(['linus@example.com', 'new@example.com', 'spam@example.com']);
    expect(await suppressedOf(account)).toEqual(['bounce@example.com']);
  });

  test('when a Substack export is imported then an address with email_disabled=true is unsubscribed and the others are not', async () => {
    const { account, summary } = await imported('substack-email-list.csv');
    expect(summary).toEqual({ rows: 3, created: 3, updated: 0, skipped: 0, unsubscribed: 1, errors: [] });
    expect([...(await contactsOf(account)).keys()].sort()).toEqual(['disabled@example.com', 'paid@example.com', 'reader@example.com']);
    expect(await unsubscribedOf(account)).toEqual(['disabled@example.com']);
  });

  test('when a HubSpot export is imported then every contact comes in', async () => {
    const { account, summary } = await imported('hubspot-crm-exports-all-contacts-2024-05-06.csv');
    expect(summary).toMatchObject({ skipped: 0, errors: [] });
    expect((await contactsOf(account)).size).toBe(summary.created);
  });

  test('when a Google Contacts cell holds several addresses then the first is taken and the summary says how many rows had several', async () => {
    const { account, summary } = await imported('google-contacts-several-addresses.csv');
    expect(summary).toEqual({ rows: 2, created: 2, updated: 0, skipped: 0, unsubscribed: 0, errors: [], several_addresses: 2 });
    const contacts = await contactsOf(account);
    expect(contacts.get('ada@home.example')).toMatchObject({ first_name: 'Ada', last_name: 'Lovelace', alt_email: null });
    expect(contacts.get('alan@example.com')).toMatchObject({ alt_email: 'alan@old.example' });
  });

  test('when the API is given Excel’s Unicode Text as .txt then it keeps the reference’s csv-only rule', async () => {
    const account = await h.account();
    const type = await addContactType(h, account, 'Imported');
    const res = await h.api(account).post('/contacts/upload-csv').field('contact_type_id', String(type)).attach('file', fixture('excel-unicode-text.csv'), 'contacts.txt');
    expect(res.status).toBe(422);
    expect(res.body).toEqual({ status: 'failed', errors: { file: ['The file must be a file of type: csv.'] } });
  });
});
