import { generate } from 'otplib';
import { useHarness } from '../support/harness';
import { axeViolations } from './axe';
import { useBrowser } from './browser';

const PHONE = { width: 390, height: 844 };
const PASSWORD = 'correct horse battery staple';

/** A code of the app `steps` periods from now: a code is accepted once, so each use takes a step of its own. */
const codeAt = (secret: string, steps = 0) => generate({ secret, epoch: Math.floor(Date.now() / 1000) + steps * 30 });

describe('dashboard in Chromium: two-step sign-in and the audit log', () => {
  const h = useHarness();
  const b = useBrowser(h);

  test('when the owner turns on two-step sign-in by keyboard on a phone then the next sign-in asks for a code, and the audit log shows both and filters them', async () => {
    const { account, page } = await b.newcomer();
    await page.setViewportSize(PHONE);
    await b.signIn(page, account);

    // Set-up page, by keyboard.
    await page.goto('/two-factor');
    await page.getByRole('heading', { name: 'Two-step sign-in', level: 1 }).waitFor();
    expect(await axeViolations(page)).toEqual([]);
    await page.getByRole('button', { name: 'Set up two-step sign-in' }).focus();
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Scan this code' }).waitFor();
    await page.getByRole('img', { name: 'QR code to scan with your authenticator app' }).waitFor();
    expect(await axeViolations(page)).toEqual([]);
    expect(await page.evaluate('document.documentElement.scrollWidth <= window.innerWidth')).toBe(true);
    const secret = (await page.locator('code.secret-key').innerText()).trim();

    // A wrong code is refused with words a person reads; the right one turns it on.
    const field = page.getByLabel('The six-digit code your app shows now');
    await field.fill('000000');
    await field.press('Enter');
    await page.getByText('The code is not right.', { exact: false }).waitFor();
    expect(await axeViolations(page)).toEqual([]);
    await page.getByLabel('The six-digit code your app shows now').fill(await codeAt(secret));
    await page.getByLabel('The six-digit code your app shows now').press('Enter');
    await page.getByRole('heading', { name: 'Your recovery codes' }).waitFor();
    expect(await page.locator('ul.recovery-codes li').count()).toBe(10);
    expect(await axeViolations(page)).toEqual([]);
    expect(await page.evaluate('document.documentElement.scrollWidth <= window.innerWidth')).toBe(true);

    // Sign out, and in again: the password is followed by the code step.
    await page.getByRole('button', { name: 'Menu' }).click();
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(/\/login/);
    await page.getByLabel('Email').fill(account.email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByLabel('Password').press('Enter');
    await page.waitForURL(/\/login\/code/);
    await page.getByRole('heading', { name: 'Two-step sign-in' }).waitFor();
    expect(await axeViolations(page)).toEqual([]);
    expect(await page.evaluate('document.documentElement.scrollWidth <= window.innerWidth')).toBe(true);
    // The code field has the focus: a person types the code and presses Enter.
    expect(await page.evaluate('document.activeElement && document.activeElement.id')).toBe('code');
    await page.keyboard.type(await codeAt(secret, 1));
    await page.keyboard.press('Enter');
    await page.waitForURL(`${b.baseUrl}/`);

    // The audit log says who turned it on and signed in with a code, and filters by what.
    await page.getByRole('button', { name: 'Menu' }).click();
    await page.getByRole('navigation').getByRole('link', { name: 'Audit log' }).click();
    await page.getByRole('heading', { name: 'Audit log' }).waitFor();
    const list = page.locator('#audit-list');
    await list.getByRole('cell', { name: 'Turned on two-step sign-in' }).waitFor();
    await list.getByRole('cell', { name: 'With a two-step code' }).waitFor();
    expect(await axeViolations(page)).toEqual([]);
    expect(await page.evaluate('document.documentElement.scrollWidth <= window.innerWidth')).toBe(true);

    await page.getByLabel('What').selectOption({ label: 'Turned on two-step sign-in' });
    await page.waitForURL(/action=user\.two_factor_enabled/);
    await list.getByRole('cell', { name: 'Turned on two-step sign-in' }).waitFor();
    expect(await list.getByRole('cell', { name: 'Signed in', exact: true }).count()).toBe(0);
    expect(await axeViolations(page)).toEqual([]);

    // A filter nothing matches says so.
    await page.getByLabel('Since').fill('2099-01-01');
    await page.getByLabel('Since').press('Enter');
    await page.getByText('Nothing matches these filters.').waitFor();
    expect(await axeViolations(page)).toEqual([]);
    expect(b.problems).toEqual([]);
  });
});
