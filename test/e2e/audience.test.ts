import fs from 'node:fs';
import path from 'node:path';
import { countryId } from '../support/fixtures';
import { useHarness } from '../support/harness';
import type { Page } from 'playwright-core';
import { useBrowser } from './browser';

/**
 * Picks a field or operator of the condition builder and waits for the builder htmx sends
 * back (its option is then selected in the markup, not only in the control), so the next
 * step does not type into a row about to be replaced.
 */
async function choose(page: Page, label: string, value: string): Promise<void> {
  const control = page.getByLabel(label);
  await control.selectOption(value);
  await control.locator(`option[value="${value}"][selected]`).waitFor({ state: 'attached' });
}

describe('dashboard in Chromium: contacts, CSV import and segments', () => {
  const h = useHarness();
  const b = useBrowser(h);

  test('when a CSV is imported then the progress bar runs to the end and the summary lists the skipped rows', async () => {
    const account = await h.account();
    await h.runtime.services.contactTypes.add({ userId: account.user_id }, { name: 'Newsletter' });
    const rows = Array.from({ length: 20000 }, (_, i) => `reader${i}@example.com,Reader,${i}`);
    const csv = ['email,first_name,last_name', 'not-an-email,Bad,Row', ...rows].join('\n');
    const page = await b.signedIn(account);

    await page.getByRole('navigation').getByRole('link', { name: 'Contacts' }).click();
    await page.getByRole('link', { name: 'Import CSV' }).first().click();
    await page.getByLabel('Import into contact type').selectOption({ label: 'Newsletter' });
    await page.getByLabel('CSV file').setInputFiles({ name: 'readers.csv', mimeType: 'text/csv', buffer: Buffer.from(csv) });
    await page.getByRole('button', { name: 'Upload and choose columns' }).click();
    await page.getByRole('heading', { name: 'Columns of readers.csv' }).waitFor();
    expect(await page.getByLabel('email', { exact: true }).inputValue()).toBe('email');
    await page.getByRole('button', { name: 'Import', exact: true }).click();
    await page.getByRole('heading', { name: 'Import of readers.csv' }).waitFor();

    const progress = page.locator('#import-progress');
    await progress.getByText('Done', { exact: true }).waitFor({ timeout: 30_000 });
    await progress.getByText('20,001 of 20,001 rows processed').waitFor();
    expect(await page.locator('progress.import-bar').getAttribute('value')).toBe('20001');
    await progress.getByRole('cell', { name: 'The email must be a valid email address.' }).waitFor();
    expect(await progress.locator('.skipped-rows td.num').first().textContent()).toBe('2');
    // Done: the fragment no longer polls.
    expect(await progress.getAttribute('hx-trigger')).toBeNull();

    await page.getByRole('link', { name: 'Contacts', exact: true }).last().click();
    await page.getByLabel('Search contacts').fill('reader19999@');
    await page.locator('#contact-list').getByText('reader19999@example.com').waitFor();
    await page.getByText('1–1 of 1').waitFor();
    expect(b.problems).toEqual([]);
  });

  test('when a Mailchimp export is imported through the mapping step then names are right, a changed choice is kept and the contact type stays chosen for the next file', async () => {
    const account = await h.account();
    await h.runtime.services.contactTypes.add({ userId: account.user_id }, { name: 'Other' });
    await h.runtime.services.contactTypes.add({ userId: account.user_id }, { name: 'From Mailchimp' });
    const file = fs.readFileSync(path.join(__dirname, '..', 'fixtures', 'imports', 'subscribed_members_export_4f2a9c1b7e.csv'));
    const page = await b.signedIn(account);
    await page.goto(`${b.baseUrl}/contacts/import`);
    await page.getByLabel('Import into contact type').selectOption({ label: 'From Mailchimp' });
    await page.getByLabel('CSV file').setInputFiles({ name: 'subscribed_members_export_4f2a9c1b7e.csv', mimeType: 'text/csv', buffer: file });
    await page.getByRole('button', { name: 'Upload and choose columns' }).click();
    await page.getByRole('heading', { name: 'Columns of subscribed_members_export_4f2a9c1b7e.csv' }).waitFor();
    await page.locator('table.import-rows').getByRole('cell', { name: 'García', exact: true }).waitFor();
    expect(await page.getByLabel('Email Address').inputValue()).toBe('email');
    expect(await page.getByLabel('First Name').inputValue()).toBe('first_name');
    expect(await page.getByLabel('Last Name').inputValue()).toBe('last_name');
    expect(await page.getByLabel('MEMBER_RATING').inputValue()).toBe('ignore');
    // The street address is not wanted here.
    await page.getByLabel('Address', { exact: true }).selectOption('ignore');
    await page.getByRole('button', { name: 'Import', exact: true }).click();
    const progress = page.locator('#import-progress');
    await progress.getByText('Done', { exact: true }).waitFor({ timeout: 30_000 });
    await progress.getByText('2 of 2 rows processed').waitFor();

    const anna = await h.runtime.db('contacts').where({ user_id: account.user_id, email_key: 'anna.schmidt@example.com' }).first('first_name', 'last_name', 'address_line1');
    expect(anna).toMatchObject({ first_name: 'Anna', last_name: 'Schmidt' });
    expect(anna.address_line1 ?? '').toBe('');
    await page.getByRole('link', { name: 'Import another file' }).click();
    await page.getByRole('heading', { name: 'Import contacts' }).waitFor();
    expect(await page.getByLabel('Import into contact type').locator('option:checked').textContent()).toBe('From Mailchimp');
    expect(b.problems).toEqual([]);
  });

  test('when an import is still running then its page polls until it is done, then stops', async () => {
    const account = await h.account();
    const typeId = await h.runtime.services.contactTypes.add({ userId: account.user_id }, { name: 'Slow' });
    const now = new Date().toISOString();
    const [{ id }] = await h.runtime
      .db('imports')
      .insert({ user_id: account.user_id, contact_type_id: typeId, file_name: 'slow.csv', status: 'running', rows_total: 10, rows_done: 3, created_at: now, updated_at: now })
      .returning('id');
    const page = await b.signedIn(account);
    await page.goto(`/contacts/import/${id}`);
    await page.getByText('3 of 10 rows processed').waitFor();

    await h.runtime.db('imports').where({ id }).update({ rows_done: 7, updated_at: new Date().toISOString() });
    await page.getByText('7 of 10 rows processed').waitFor();
    const summary = { rows: 10, created: 9, updated: 0, skipped: 1, unsubscribed: 0, errors: [{ row: 4, reason: 'The email field is required.' }] };
    await h.runtime.db('imports').where({ id }).update({ status: 'done', rows_done: 10, summary: JSON.stringify(summary), updated_at: new Date().toISOString() });
    await page.locator('#import-progress').getByText('Done', { exact: true }).waitFor();
    await page.getByRole('cell', { name: 'The email field is required.' }).waitFor();
    expect(await page.locator('#import-progress').getAttribute('hx-trigger')).toBeNull();
    expect(b.problems).toEqual([]);
  });

  test('when a contact is added with a custom field and a segment built on it then the live count and the recipients agree', async () => {
    const account = await h.account();
    const ctx = { userId: account.user_id };
    const { services } = h.runtime;
    const typeId = await services.contactTypes.add(ctx, { name: 'Members' });
    await services.fields.addCustom(ctx, { field_name: 'age', field_type: 'number' });
    const fr = await countryId(h, 'FR');
    for (const [email, age] of [['young@example.com', '19'], ['old@example.com', '70']]) {
      await services.contacts.add(ctx, { contact_type_id: typeId, email, country: fr, text: {}, custom_field: { age } });
    }
    const page = await b.signedIn(account);

    await page.getByRole('navigation').getByRole('link', { name: 'Contacts' }).click();
    await page.getByRole('link', { name: 'New contact' }).first().click();
    await page.getByLabel('Contact type').selectOption({ label: 'Members' });
    await page.getByLabel('Email', { exact: true }).fill('middle@example.com');
    await page.getByLabel('First name').fill('Mid');
    await page.getByLabel('Country').selectOption({ label: 'France' });
    await page.getByLabel('age', { exact: true }).fill('45');
    await page.getByRole('button', { name: 'Save contact' }).click();
    await page.getByText('Contact added.').waitFor();
    await page.getByRole('link', { name: 'Mid' }).waitFor();

    await page.getByRole('navigation').getByRole('link', { name: 'Segments' }).click();
    await page.getByRole('link', { name: 'New segment' }).first().click();
    await page.getByLabel('Name', { exact: true }).fill('Over 30');
    await page.getByLabel('Contacts of type').selectOption({ label: 'Members' });
    await page.locator('#segment-count').getByText('3 contacts match now').waitFor();
    await page.getByRole('button', { name: 'Add condition' }).click();
    // Choosing a number field re-renders the row with the number operators.
    await choose(page, 'Field of condition 1', 'age');
    await choose(page, 'Operator of condition 1', 'is between');
    await page.getByLabel('Value of condition 1', { exact: true }).fill('30');
    await page.getByLabel('Second value of condition 1').fill('50');
    await page.locator('#segment-count').getByText('1 contact matches now').waitFor();
    await page.getByRole('button', { name: 'Add condition' }).click();
    await choose(page, 'Field of condition 2', 'email');
    await choose(page, 'Operator of condition 2', 'starts with');
    await page.getByLabel('Value of condition 2', { exact: true }).fill('young');
    await page.getByLabel('any condition (or)').check();
    await page.locator('#segment-count').getByText('2 contacts match now').waitFor();
    await page.getByRole('button', { name: 'Save segment' }).click();
    await page.getByText('Segment saved; its matching contacts are its recipients.').waitFor();
    const recipients = page.locator('#segment-recipient-list');
    await recipients.getByText('middle@example.com').waitFor();
    await recipients.getByText('young@example.com').waitFor();
    expect(await recipients.getByText('old@example.com').count()).toBe(0);

    await page.getByLabel('First name').fill('Hand');
    await page.getByLabel('Last name').fill('Made');
    await page.getByLabel('Email').fill('hand@example.com');
    await page.getByRole('button', { name: 'Add', exact: true }).click();
    await page.getByText('hand@example.com added to the segment.').waitFor();
    await recipients.getByRole('checkbox', { name: 'Select hand@example.com' }).check();
    await recipients.getByRole('button', { name: 'Delete selected' }).click();
    await page.getByText('Recipient removed.').waitFor();
    expect(await recipients.getByText('hand@example.com').count()).toBe(0);
    expect(b.problems).toEqual([]);
  });
});
