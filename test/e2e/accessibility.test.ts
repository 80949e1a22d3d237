import type { Page } from 'playwright-core';
import { audienceOf, berlin, singleSendBody } from '../support/fixtures';
import { useHarness } from '../support/harness';
import { axeViolations } from './axe';
import { eventually, useBrowser } from './browser';
import { walkedPages } from './page-walk';

/** The labels of the page's required fields (not confirmation checkboxes), as shown (with their CSS `::after` text). */
async function requiredLabels(page: Page): Promise<string[]> {
  return page.locator('input[required]:not([type=checkbox]):not([type=hidden]), select[required], textarea[required]').evaluateAll((controls) =>
    controls.map((control) => {
      const label = (control as unknown as { labels: Array<{ textContent: string }> }).labels[0];
      if (!label) return '(no label)';
      const after = (globalThis as unknown as { getComputedStyle(e: unknown, pseudo: string): { content: string } }).getComputedStyle(label, '::after').content;
      return `${label.textContent.trim()}${after.startsWith('"') ? JSON.parse(after) : ''}`;
    }));
}

/** Accessibility: axe finds nothing on any page, also after its htmx swaps. */
describe('dashboard accessibility in Chromium', () => {
  const h = useHarness({ RELAY_ALLOW_PRIVATE: '1' });
  const b = useBrowser(h);

  test('when every page is checked with axe then no rule fails', async () => {
    const account = await h.account();
    const page = await b.signedIn(account);
    const paths = await walkedPages(h, account, page);
    const found: string[] = [];
    const required: string[] = [];
    for (const path of paths) {
      const res = await page.goto(path);
      if (!res || res.status() >= 400) {
        found.push(`${path}: ${res?.status()}`);
        continue;
      }
      found.push(...(await axeViolations(page)));
      required.push(...(await requiredLabels(page)).map((label) => `${path}: ${label}`));
    }
    expect(found).toEqual([]);
    // Every required field says so beside its label, in words.
    expect(required.length).toBeGreaterThan(20);
    expect(required.filter((label) => !label.includes('(required)'))).toEqual([]);
    expect(b.problems).toEqual([]);
  }, 300_000);

  test('when a keyboard user adds and removes conditions, searches, picks places, previews and rotates a key then focus stays with them, and axe and the CSP find nothing after each swap', async () => {
    const account = await h.account();
    const audience = await audienceOf(h, account, await berlin(h));
    await h.api(account).post('/contacts/add').send({ contact_type_id: audience.contactTypeId, email: 'ada@example.org', first_name: 'Ada', country: 1 }).expect(200);
    const send = await h.api(account).post('/single/send/create').send(singleSendBody(audience, { recipient_id: [`contacts_${audience.contactTypeId}`] })).expect(200);
    const page = await b.signedIn(account);
    const activeId = () => page.evaluate('document.activeElement && document.activeElement.id');
    const found: string[] = [];

    await page.goto('/segments/new');
    await page.getByRole('button', { name: 'Add condition' }).focus();
    await page.keyboard.press('Enter');
    await page.locator('#cond-0-field').waitFor();
    await eventually('the new condition takes the focus', async () => (await activeId()) === 'cond-0-field');
    found.push(...(await axeViolations(page)));

    // A changed field swaps the builder again; the select keeps the focus.
    await page.keyboard.press('ArrowDown');
    await page.locator('#cond-0-operator').waitFor();
    await page.waitForLoadState('networkidle');
    expect(await activeId()).toBe('cond-0-field');

    await page.keyboard.press('Enter'); // nothing: a select does not submit
    await page.getByRole('button', { name: 'Add condition' }).focus();
    await page.keyboard.press('Enter');
    await eventually('the second condition takes the focus', async () => (await activeId()) === 'cond-1-field');
    await page.getByRole('button', { name: 'Remove condition 2' }).focus();
    await page.keyboard.press('Enter');
    await eventually('Add condition takes the focus back', async () => (await activeId()) === 'add-condition');
    expect(await page.locator('.condition').count()).toBe(1);
    found.push(...(await axeViolations(page)));

    await page.goto('/contacts');
    await page.getByLabel('Search contacts').fill('ada@');
    await page.keyboard.press('Enter');
    await page.getByRole('cell', { name: 'ada@example.org', exact: true }).waitFor();
    expect(await activeId()).toBe('contact-search');
    found.push(...(await axeViolations(page)));

    await page.goto('/outbox');
    await page.getByLabel('Search messages').fill('nobody');
    await page.keyboard.press('Enter');
    await page.waitForLoadState('networkidle');
    expect(await activeId()).toBe('outbox-search');
    found.push(...(await axeViolations(page)));

    // The sender form's places: a chosen state swaps the state and city choices, keeping the focus.
    await page.goto('/senders/new');
    await page.getByLabel('Country').selectOption({ label: 'Germany' });
    const state = page.locator('#field-state_id');
    await eventually('the states of Germany arrive', async () => (await state.locator('option').count()) > 5);
    await state.focus();
    await state.selectOption({ index: 1 });
    await eventually('the cities of the state arrive', async () => (await page.locator('#field-city_id option').count()) > 1);
    expect(await activeId()).toBe('field-state_id');
    found.push(...(await axeViolations(page)));

    // A send's preview for another contact, and a rotated key shown once: both swapped in place.
    await page.goto(`/single-sends/${send.body.message.utr}`);
    await page.getByLabel('Preview for a contact').fill('ada');
    await page.getByRole('button', { name: 'Preview', exact: true }).click();
    await page.locator('#send-preview').getByText('News for Ada').waitFor();
    found.push(...(await axeViolations(page)));
    await page.goto('/api-keys');
    await page.getByRole('button', { name: 'Rotate secret key' }).click();
    await page.locator('#new-secret-key').waitFor();
    found.push(...(await axeViolations(page)));

    expect(found).toEqual([]);
    expect(b.problems).toEqual([]);
  }, 120_000);
});
