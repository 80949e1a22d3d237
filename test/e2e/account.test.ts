import { useHarness } from '../support/harness';
import { eventually, useBrowser } from './browser';

describe('dashboard in Chromium: sign-in, contact types, keys and settings', () => {
  const h = useHarness();
  const b = useBrowser(h);

  test('when a user signs in, adds, renames and deletes a contact type then every step shows, with no CSP or script error', async () => {
    const { account, page } = await b.newcomer();

    await page.goto('/contact-types');
    await page.waitForURL(/\/login\?next=%2Fcontact-types$/);
    await page.getByLabel('Email').fill(account.email);
    await page.getByLabel('Password').fill('wrong password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByText('The email or password is incorrect.').waitFor();

    await page.getByLabel('Password').fill('correct horse battery staple');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${b.baseUrl}/contact-types`);

    // Boosted navigation: the body is swapped, the URL and the title follow.
    await page.getByRole('link', { name: 'New contact type' }).first().click();
    await page.waitForURL(`${b.baseUrl}/contact-types/new`);
    // htmx applies the new title with the swap, which may come just after the URL changes.
    await eventually('the title follows', async () => (await page.title()) === 'New contact type · Campaigns');

    await page.getByLabel('Name').fill('a');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByText('The name must be at least 2 characters.').waitFor();

    await page.getByLabel('Name').fill('<b>Customers</b>');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.waitForURL(`${b.baseUrl}/contact-types`);
    await page.getByText('Contact type added.').waitFor();
    const link = page.getByRole('link', { name: '<b>Customers</b>' });
    await link.waitFor();

    await link.click();
    await page.getByLabel('Name').fill('Clients');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByText('Contact type saved.').waitFor();
    await page.getByRole('link', { name: 'Clients' }).waitFor();

    // Delete swaps the list in place (hx-post with the CSRF header from app.js).
    await page.getByRole('button', { name: 'Delete' }).click();
    await page.getByText('No contact types yet.').waitFor();
    expect(page.url()).toBe(`${b.baseUrl}/contact-types`);
    expect((await h.api(account).get('/contacts-type')).body.message.contactTypes).toEqual([]);

    expect(b.problems).toEqual([]);
  });

  test('when the secret key is rotated then the new one is shown once and works against the API', async () => {
    const account = await h.account();
    const page = await b.signedIn(account);

    await page.getByRole('navigation').getByRole('link', { name: 'API keys' }).click();
    await page.waitForURL(`${b.baseUrl}/api-keys`);
    expect(await page.locator('#public-key').textContent()).toBe(account.public_key);

    await page.getByRole('button', { name: 'Rotate secret key' }).click();
    const secret = (await page.locator('#new-secret-key').textContent()) ?? '';
    expect(secret).toMatch(/^sk_/);
    await h.api({ ...account, headers: { PublicKey: account.public_key, SecretKey: secret } }).get('/contacts-type').expect(200);
    await h.api(account).get('/contacts-type').expect(401);

    await page.reload();
    expect(await page.locator('#new-secret-key').count()).toBe(0);
    expect(b.problems).toEqual([]);
  });

  test('when the time zone is changed and the user signs out then the setting stays and the pages ask for sign-in again', async () => {
    const account = await h.account();
    const page = await b.signedIn(account);

    await page.getByRole('navigation').getByRole('link', { name: 'Settings' }).click();
    await page.getByLabel('Time zone').selectOption('Europe/Paris');
    await page.getByRole('button', { name: 'Save settings' }).click();
    await page.getByText('Settings saved.').waitFor();
    expect(await page.getByLabel('Time zone').inputValue()).toBe('Europe/Paris');
    expect((await h.runtime.services.accounts.get(account.user_id))?.time_zone).toBe('Europe/Paris');

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(`${b.baseUrl}/login`);
    await page.goto('/settings');
    await page.waitForURL(/\/login/);
    expect(b.problems).toEqual([]);
  });
});
