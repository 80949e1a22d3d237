import type { Page } from 'playwright-core';
import { addContactType, countryId } from '../support/fixtures';
import { useHarness } from '../support/harness';
import { axeViolations } from './axe';
import { useBrowser, widths } from './browser';

/**
 * The Contacts page's pager in Chromium on a phone, from the keyboard: First, Previous, Next
 * and Last each show their contacts with their position, and nothing scrolls sideways.
 */
describe('dashboard in Chromium: the contacts pager', () => {
  const h = useHarness();
  const b = useBrowser(h);

  /** The emails the table shows, in order. */
  const shown = (page: Page) => page.locator('#contact-list tbody tr td:nth-child(3)').allInnerTexts();

  /** Tabs to a pager link from the one before it and follows it with Enter, then waits for the position it leads to. */
  async function follow(page: Page, name: string, position: string): Promise<void> {
    await page.getByRole('navigation', { name: 'Pages' }).getByRole('link', { name, exact: true }).focus();
    await page.keyboard.press('Enter');
    await page.getByRole('navigation', { name: 'Pages' }).getByText(position).waitFor();
  }

  test('when the pager is used with the keyboard at 390 px then each page shows its contacts newest first, and nothing scrolls sideways', async () => {
    const account = await h.account();
    const type = await addContactType(h, account, 'Readers');
    const france = await countryId(h, 'FR');
    const now = new Date().toISOString();
    await h.runtime.db('contacts').insert(
      Array.from({ length: 120 }, (_, i) => ({
        user_id: account.user_id, contact_type_id: type, email: `r${i}@example.com`, email_key: `r${i}@example.com`, country: france, created_at: now, updated_at: now,
      })),
    );
    const all: string[] = await h.runtime.db('contacts').where({ user_id: account.user_id }).orderBy('id', 'desc').pluck('email');

    const page = await b.page();
    await page.setViewportSize({ width: 390, height: 844 });
    await b.signIn(page, account);
    await page.goto('/contacts');
    await page.getByRole('navigation', { name: 'Pages' }).getByText('1–50 of 120').waitFor();
    expect(await shown(page)).toEqual(all.slice(0, 50));
    const wide = await widths(page).then(({ scroll, inner }) => scroll > inner);
    expect(wide).toBe(false);
    expect(await axeViolations(page)).toEqual([]);

    await follow(page, 'Next', '51–100 of 120');
    expect(await shown(page)).toEqual(all.slice(50, 100));
    await follow(page, 'Last', '101–120 of 120');
    expect(await shown(page)).toEqual(all.slice(100));
    await follow(page, 'Previous', '51–100 of 120');
    expect(await shown(page)).toEqual(all.slice(50, 100));
    await follow(page, 'First', '1–50 of 120');
    expect(await shown(page)).toEqual(all.slice(0, 50));
  });
});
