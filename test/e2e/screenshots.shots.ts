import fs from 'node:fs';
import path from 'node:path';
import { PROJECT_ROOT } from '../../src/lib/paths';
import { useHarness } from '../support/harness';
import { useBrowser } from './browser';

/**
 * `npm run screenshots`: the main pages with a little data, saved under docs/screenshots/
 * for the README. Not part of `npm test` (it writes into the work tree).
 */
const OUT = path.join(PROJECT_ROOT, 'docs', 'screenshots');

describe('screenshots', () => {
  const h = useHarness();
  const b = useBrowser(h);

  test('main pages', async () => {
    fs.mkdirSync(OUT, { recursive: true });
    const account = await h.account('demo.owner@example.com');
    const ctx = { userId: account.user_id };
    for (const name of ['Customers', 'Newsletter readers', 'Event guests']) await h.runtime.services.contactTypes.add(ctx, { name });

    const page = await b.page();
    const shot = async (name: string) => {
      await page.screenshot({ path: path.join(OUT, `${name}.png`), fullPage: false });
    };
    await page.goto('/login');
    await shot('sign-in');
    await b.signIn(page, account);
    await shot('home');
    await page.goto('/contact-types');
    await shot('contact-types');
    await page.goto('/contact-types/new');
    await page.getByLabel('Name').fill('x');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByText('The name must be at least 2 characters.').waitFor();
    await shot('contact-type-invalid');
    await page.goto('/api-keys');
    await page.getByRole('button', { name: 'Rotate secret key' }).click();
    await page.locator('#new-secret-key').waitFor();
    await shot('api-keys');
    await page.goto('/settings');
    await shot('settings');
    expect(b.problems).toEqual([]);
  });
});
