import { addVerifiedSender, berlin, newsDesk } from '../support/fixtures';
import { useHarness } from '../support/harness';
import { eventually, useBrowser, fillComposer } from './browser';

describe('dashboard in Chromium: single sends and automations', () => {
  const h = useHarness();
  const b = useBrowser(h);

  test('when a single send is composed, picking a template and an audience, then its page shows it with the chart', async () => {
    const account = await h.account();
    const { ctx } = await newsDesk(h, account, 'Customers');
    const page = await b.signedIn(account);

    await page.getByRole('navigation').getByRole('link', { name: 'Single sends' }).click();
    await page.getByRole('link', { name: 'New single send' }).first().click();
    await fillComposer(page, { name: 'Launch', subject: 'Our launch', preheader: 'Read all about it' });
    await page.getByLabel('Welcome').check();
    // htmx refills the editor with the picked template's HTML.
    await eventually('the editor holds the template', async () => (await page.locator('#field-template_html').inputValue()).includes('Welcome aboard'));
    await page.getByLabel('Customers').first().check();
    await page.getByRole('button', { name: 'Save single send' }).click();
    await page.getByText('Draft saved.', { exact: false }).waitFor();
    await page.getByRole('heading', { name: 'Launch' }).waitFor();
    await page.locator('.bar-chart').waitFor();
    await page.frameLocator('iframe.message-frame').getByText('Welcome aboard').first().waitFor();
    expect(b.problems).toEqual([]);
  });

  test('when an automation is created, given a step and a group, then it goes live in place', async () => {
    const account = await h.account();
    const ctx = { userId: account.user_id };
    const { services } = h.runtime;
    await addVerifiedSender(h, account, await berlin(h), { nickname: 'Hello', from_email: 'hello@acme.example' });
    await services.unsubscribeGroups.add(ctx, { group_name: 'Onboarding', description: 'Tips', is_display: 1 });
    await services.contactTypes.add(ctx, { name: 'Trials' });
    const page = await b.signedIn(account);

    await page.getByRole('navigation').getByRole('link', { name: 'Automations' }).click();
    await page.getByRole('link', { name: 'New automation' }).first().click();
    await page.getByLabel('Name').fill('Onboarding');
    await page.getByLabel('Target', { exact: true }).selectOption({ label: 'Contact type: Trials' });
    await page.getByRole('button', { name: 'Create automation' }).click();
    await page.getByText('Automation created as a draft').waitFor();

    await page.getByLabel('Subject').fill('Welcome aboard');
    await page.getByLabel('Design template').selectOption({ label: 'Welcome' });
    await page.getByLabel('Wait').selectOption({ label: 'At once' });
    await page.getByLabel('How many').fill('0');
    await page.getByRole('button', { name: 'Add step' }).click();
    await page.getByText('Step added.').waitFor();

    await page.getByRole('button', { name: 'Set live' }).click();
    await page.locator('#flash').getByText('Unsubscribe group require to live automation').waitFor();
    await page.getByLabel('Unsubscribe group').selectOption({ label: 'Onboarding' });
    await page.getByRole('button', { name: 'Save settings' }).click();
    await page.getByText('Automation saved.').waitFor();
    await page.getByRole('button', { name: 'Set live' }).click();
    await page.locator('#automation-state').getByText('Live', { exact: true }).waitFor();
    await page.getByRole('button', { name: 'Pause' }).waitFor();
    expect(b.problems).toEqual([]);
  });
});
