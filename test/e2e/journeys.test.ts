import { addAutomation, Audience, audienceOf, berlin, scheduleBody } from '../support/fixtures';
import { useHarness } from '../support/harness';
import { axeViolations } from './axe';
import { eventually, useBrowser, widths } from './browser';

describe('dashboard in Chromium: journeys', () => {
  const h = useHarness();
  const b = useBrowser(h);

  test('when a marketer builds a branch from the home page then the flow shows it labelled, errors point at their step, undo takes back a change, and the saved journey is version 1', async () => {
    const account = await h.account();
    const a: Audience = await audienceOf(h, account, await berlin(h));
    const utr = await addAutomation(h, account, { automation_name: 'Trial onboarding', unsubscribe_group_id: a.groupId });
    for (const subject of ['Welcome', 'Tips for day two', 'Did you miss this?']) {
      await h.api(account).post('/automations/schedule/create').send(scheduleBody(utr, a.senderId, { subject })).expect(200);
    }
    const page = await b.signedIn(account);

    await page.getByRole('navigation').getByRole('link', { name: 'Automations' }).click();
    await page.getByRole('link', { name: 'Trial onboarding' }).first().click();
    await page.getByRole('link', { name: /Journey: branch/ }).click();
    // Without a journey the steps show as a chain.
    await page.getByRole('button', { name: 'Send an email: Welcome' }).waitFor();

    // A "+" on the edge after the welcome: a check whether it was opened.
    await page.getByRole('button', { name: 'Add a step after “Welcome”' }).click();
    await page.getByRole('button', { name: 'Check', exact: true }).click();
    await page.getByLabel('Check', { exact: true }).selectOption({ label: 'whether they opened an email' });
    await page.getByLabel('Which email').selectOption({ label: 'Welcome' });
    await page.getByRole('button', { name: 'Apply' }).click();
    const check = page.locator('.flow-box.type-condition');
    await check.getByText('opened “Welcome”?').waitFor();
    await page.locator('.edge-label', { hasText: /^Yes$/ }).waitFor();
    await page.locator('.edge-label', { hasText: /^No$/ }).waitFor();

    // On "No", the reminder, added with the keyboard.
    const addOnNo = page.getByRole('button', { name: 'Add a step after “opened “Welcome”?” (No)' });
    await addOnNo.focus();
    await page.keyboard.press('Enter');
    await page.getByRole('button', { name: 'Send an email', exact: true }).click();
    await page.getByLabel('Email', { exact: true }).selectOption({ label: 'Did you miss this?' });
    await page.getByRole('button', { name: 'Apply' }).click();
    // The chain had it at its end already (after the tips): the new one is the last.
    await eventually('a second “Did you miss this?”', async () => (await page.getByRole('button', { name: 'Send an email: Did you miss this?' }).count()) === 2);

    // A split whose shares do not add up: the error stands at the split.
    await page.getByRole('button', { name: 'Add a step after “Did you miss this?”' }).last().click();
    await page.getByRole('button', { name: 'Split at random' }).click();
    await page.getByLabel('Branch 1 (%)').fill('30');
    await page.getByLabel('Branch 2 (%)').fill('30');
    await page.getByRole('button', { name: 'Apply' }).click();
    await page.locator('.edge-label', { hasText: /^30%$/ }).first().waitFor();
    await page.getByRole('button', { name: 'Save journey' }).click();
    await page.locator('.flow-box.type-split.invalid').getByText('the branches\' percents add up to 60, not 100.').waitFor();
    // After the swaps, with the side panel open and an error shown, axe finds nothing.
    await page.getByRole('button', { name: 'Split at random: 30% / 30%' }).click();
    await page.getByRole('heading', { name: 'Split at random' }).waitFor();
    expect(await axeViolations(page)).toEqual([]);

    // Undo takes the last change back (the shares), and the split is removed before saving.
    await page.getByRole('button', { name: 'Undo last change' }).click();
    await page.locator('.flow-box.type-split').getByText('50% / 50%').waitFor();
    await page.getByRole('button', { name: 'Split at random: 50% / 50%' }).click();
    await page.getByRole('button', { name: 'Remove this step' }).click();
    await page.locator('.flow-box.type-split').waitFor({ state: 'detached' });

    await page.getByRole('button', { name: 'Save journey' }).click();
    await page.getByText('Journey saved as version 1.').waitFor();
    await page.getByRole('cell', { name: '1 (current)' }).waitFor();
    const saved = await h.runtime.services.journeys.get({ userId: account.user_id }, utr);
    const condition = Object.values(saved.graph.nodes).find((n) => n.type === 'condition');
    expect(condition).toMatchObject({ type: 'condition', rule: { event: 'opened' }, yes: expect.any(String), no: expect.any(String) });

    // At 390 px the flow is an indented list: nothing scrolls sideways.
    await page.setViewportSize({ width: 390, height: 800 });
    await page.reload();
    await page.locator('.flow-box.type-condition').waitFor();
    const { scroll, inner } = await widths(page);
    expect(scroll).toBeLessThanOrEqual(inner);
    expect(b.problems).toEqual([]);
  });
});
