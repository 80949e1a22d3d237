import { sendingFixtures } from '../support/fixtures';
import { useHarness } from '../support/harness';
import { axeViolations } from './axe';
import { useBrowser } from './browser';

const NOTE = 'What you typed here before leaving the page is back.';

/** The composer as a marketer meets it: a look without typing leaves no "typed is back" note, the preheader may stay empty, and a test goes to the person's own address unless they change it. */
describe('dashboard in Chromium: the single-send composer', () => {
  const h = useHarness();
  const b = useBrowser(h);
  const f = sendingFixtures(h);

  test('when a marketer looks, leaves, comes back and saves without a preheader then no restore note shows, the draft saves, and the test goes to their own address by default', async () => {
    const account = await h.account();
    await f.basics(account, 'Readers');
    const page = await b.page();
    await b.signIn(page, account);

    // A look, and away by the navigation: nothing was typed, so nothing is "back".
    await page.goto('/single-sends/new');
    await page.getByLabel('Name', { exact: true }).waitFor();
    await page.getByRole('link', { name: 'Contacts', exact: true }).click();
    await page.getByRole('heading', { name: 'Contacts', level: 1 }).waitFor();
    await page.goBack();
    await page.getByLabel('Name', { exact: true }).waitFor();
    await page.goto('/single-sends/new');
    await page.getByLabel('Name', { exact: true }).waitFor();
    expect(await page.getByText(NOTE).count()).toBe(0);

    // Typing and leaving brings the typing back, with the note.
    await page.getByLabel('Name', { exact: true }).fill('Spring sale');
    await page.getByRole('link', { name: 'Contacts', exact: true }).click();
    await page.getByRole('heading', { name: 'Contacts', level: 1 }).waitFor();
    await page.goto('/single-sends/new');
    await page.getByText(NOTE).waitFor();
    expect(await page.getByLabel('Name', { exact: true }).inputValue()).toBe('Spring sale');

    // The preheader says it is optional, and the draft saves without one.
    expect(await page.getByLabel('Preheader').getAttribute('required')).toBeNull();
    await page.getByLabel('Subject').fill('Spring is here');
    await page.getByLabel('Sender').selectOption({ index: 1 });
    await page.getByLabel('Unsubscribe group').selectOption({ label: 'Newsletter' });
    await page.getByLabel('Readers').first().check();
    expect(await axeViolations(page)).toEqual([]);
    await page.getByRole('button', { name: 'Save single send' }).click();
    await page.getByText('Draft saved.', { exact: false }).waitFor();

    // The test goes to the person's own address unless they type another.
    expect(await page.getByLabel('Send to').inputValue()).toBe(account.email);
    expect(await axeViolations(page)).toEqual([]);
    expect(b.problems).toEqual([]);
  });
});
