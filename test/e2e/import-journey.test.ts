import fs from 'node:fs';
import path from 'node:path';
import { useHarness } from '../support/harness';
import { axeViolations } from './axe';
import { eventually, useBrowser } from './browser';

const FIXTURES = path.join(__dirname, '..', 'fixtures', 'imports');

/** A first day: a Mailchimp export imported as it is, on a phone, into an account with nothing set up; an imported contact edited without a country. */
describe('dashboard in Chromium: contacts imported from another tool', () => {
  const h = useHarness();
  const b = useBrowser(h);

  test('when a fresh account imports a Mailchimp export at 390 px then the upload makes the contact type, the file’s first rows scroll sideways by keyboard, and the mapping step makes the custom fields', async () => {
    const { account, page } = await b.newcomer();
    await page.setViewportSize({ width: 390, height: 844 });
    await b.signIn(page, account);
    await page.goto('/contacts/import');
    await page.getByText('You have no contact type yet: the upload makes one, named after the file.').waitFor();
    expect(await page.getByLabel('Import into contact type').inputValue()).toBe('new');
    const file = 'subscribed_members_export_4f2a9c1b7e.csv';
    await page.getByLabel('CSV file').setInputFiles({ name: file, mimeType: 'text/csv', buffer: fs.readFileSync(path.join(FIXTURES, file)) });
    await page.getByRole('button', { name: 'Upload and choose columns' }).click();
    await page.getByRole('heading', { name: `Columns of ${file}` }).waitFor();
    await page.getByText('Into subscribed members export 4f2a9c1b7e.').waitFor();
    expect(await axeViolations(page)).toEqual([]);

    // Columns no field takes: each offers a new custom field, the type its values suggest first.
    const rating = page.getByLabel('MEMBER_RATING', { exact: true });
    expect(await rating.locator('option[value^="new:"]').first().textContent()).toBe('New number field “MEMBER_RATING” (as the values suggest)');
    await rating.selectOption('new:number');
    await page.getByLabel('OPTIN_TIME', { exact: true }).selectOption('new:datetime-local');
    await page.getByLabel('Phone Number', { exact: true }).selectOption('new:text');
    await page.getByLabel('TAGS', { exact: true }).selectOption('new:text');
    expect(await page.getByLabel('Email Address', { exact: true }).inputValue()).toBe('email');
    // The file's first rows are wider than the phone: their table is a named tab stop that
    // scrolls sideways under the arrow keys. (Whether its scrollbar shows cannot be seen here:
    // headless Chromium under Playwright hides scrollbars.)
    const rows = page.getByRole('region', { name: 'First rows of the file' });
    await rows.focus();
    expect(await rows.evaluate((el) => el === (el as unknown as { ownerDocument: { activeElement: unknown } }).ownerDocument.activeElement)).toBe(true);
    const scroller = () => rows.evaluate((el) => {
      const box = el as unknown as { scrollLeft: number; scrollWidth: number; clientWidth: number };
      return { left: box.scrollLeft, wider: box.scrollWidth > box.clientWidth };
    });
    expect(await scroller()).toEqual({ left: 0, wider: true });
    for (let i = 0; i < 3; i += 1) await page.keyboard.press('ArrowRight');
    await eventually('the rows scrolled sideways', async () => (await scroller()).left > 0);
    await page.getByRole('button', { name: 'Import', exact: true }).click();
    await page.getByRole('heading', { name: `Import of ${file}` }).waitFor();
    const progress = page.locator('#import-progress');
    await progress.getByText('Done', { exact: true }).waitFor();
    await progress.getByText('2 of 2 rows processed').waitFor();
    expect(await axeViolations(page)).toEqual([]);

    await page.goto('/custom-fields');
    // A field made from the header "Phone Number" keeps the header as its label (its placeholder is the name).
    for (const name of ['MEMBER_RATING', 'OPTIN_TIME', 'Phone Number', 'TAGS', '((Phone_Number))']) await page.getByRole('cell', { name, exact: true }).waitFor();
    expect(await page.getByRole('cell', { name: 'Phone_Number', exact: true }).count()).toBe(0);
    // The segment builder offers it by the same words.
    await page.goto('/segments/new');
    await page.getByRole('button', { name: 'Add condition' }).click();
    await page.locator('#cond-0-field').selectOption({ label: 'Phone Number' });
    expect(await page.locator('#cond-0-field').inputValue()).toBe('Phone_Number');
    await page.goto('/contacts');
    await page.getByRole('link', { name: 'Anna Schmidt' }).click();
    expect(await page.getByLabel('MEMBER_RATING', { exact: true }).inputValue()).toBe('4');
    expect(await page.getByLabel('OPTIN_TIME', { exact: true }).inputValue()).toBe('2023-01-05T10:00');
    const { scroll, inner } = await page.evaluate(() => {
      const w = globalThis as unknown as { document: { documentElement: { scrollWidth: number } }; innerWidth: number };
      return { scroll: w.document.documentElement.scrollWidth, inner: w.innerWidth };
    });
    expect(scroll).toBeLessThanOrEqual(inner);
    expect(b.problems).toEqual([]);
  });

  test('when a contact imported without a country is edited then it saves with the country left empty, saying why that is allowed', async () => {
    const account = await h.account();
    await h.runtime.services.contactTypes.add({ userId: account.user_id }, { name: 'Readers' });
    const page = await b.signedIn(account);
    await page.goto('/contacts/import');
    await page.getByLabel('Import into contact type').selectOption({ label: 'Readers' });
    await page.getByLabel('CSV file').setInputFiles({ name: 'readers.csv', mimeType: 'text/csv', buffer: Buffer.from('email,first_name\nnoor@example.com,Noor\n') });
    await page.getByRole('button', { name: 'Upload and choose columns' }).click();
    await page.getByRole('heading', { name: 'Columns of readers.csv' }).waitFor();
    await page.getByRole('button', { name: 'Import', exact: true }).click();
    await page.locator('#import-progress').getByText('Done', { exact: true }).waitFor();

    await page.goto('/contacts');
    await page.getByRole('link', { name: 'Noor' }).click();
    await page.getByText('This contact came in without a country; you may leave it so.').waitFor();
    expect(await page.getByLabel('Country', { exact: true }).inputValue()).toBe('');
    expect(await axeViolations(page)).toEqual([]);
    await page.getByLabel('Last name', { exact: true }).fill('Haddad');
    await page.getByRole('button', { name: 'Save contact' }).click();
    await page.getByText('Contact saved.').waitFor();
    await page.getByRole('link', { name: 'Noor Haddad' }).click();
    await page.getByText('This contact came in without a country; you may leave it so.').waitFor();
    expect(await page.getByLabel('Country', { exact: true }).inputValue()).toBe('');
    expect(b.problems).toEqual([]);
  });
});
