import { newsDesk } from '../support/fixtures';
import { useHarness } from '../support/harness';
import { useBrowser, fillComposer } from './browser';

describe('dashboard in Chromium: Liquid in the composer', () => {
  const h = useHarness();
  const b = useBrowser(h);

  test('when a body with a Liquid error is saved then the composer opens its HTML with the error and its line beside it', async () => {
    const account = await h.account();
    const { ctx } = await newsDesk(h, account, 'Customers', { from_name: 'Acme News' });
    const page = await b.signedIn(account);

    await page.goto('/single-sends/new');
    await page.locator('.designer-canvas iframe.gjs-frame').waitFor();
    await fillComposer(page, { name: 'Logic news', subject: '{% if first_name %}Hi {{ first_name }}{% else %}Hi there{% endif %}', preheader: 'With logic' });
    await page.getByLabel('Customers').first().check();
    await page.getByLabel('Welcome').check();
    await page.getByRole('button', { name: 'HTML', exact: true }).click();
    const html = page.locator('#field-template_html');
    await html.waitFor({ state: 'visible' });
    await html.fill('<html><body>\n<p>Hello</p>\n<p>{% iff first_name %}Hi{% endif %}</p>\n</body></html>');
    await page.getByRole('button', { name: 'Save single send' }).click();

    // The page comes back in the HTML mode, the message under the HTML it is about.
    const error = page.locator('#body-editor .field-error');
    await error.waitFor({ state: 'visible' });
    expect(await error.textContent()).toBe('Liquid error on line 3: tag "iff" not found.');
    expect(await html.isVisible()).toBe(true);
    expect(await html.inputValue()).toContain('{% iff first_name %}');
    expect(await html.getAttribute('aria-invalid')).toBe('true');
    // The subject, which parses, is kept as written.
    expect(await page.getByLabel('Subject').inputValue()).toBe('{% if first_name %}Hi {{ first_name }}{% else %}Hi there{% endif %}');
    expect(await h.runtime.db('single_sends').where({ user_id: account.user_id }).pluck('id')).toEqual([]);

    // Fixed, it saves.
    await html.fill('<html><body>\n<p>Hello</p>\n<p>{% if first_name %}Hi{% endif %}</p>\n</body></html>');
    await page.getByRole('button', { name: 'Save single send' }).click();
    await page.getByText('Draft saved.', { exact: false }).waitFor();
    expect(b.problems).toEqual([]);
  }, 60_000);
});
