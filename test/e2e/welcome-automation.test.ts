import { addVerifiedSender, berlin, testWorker } from '../support/fixtures';
import { useHarness } from '../support/harness';
import { useSmtpSink } from '../support/smtp';
import { axeViolations } from './axe';
import { useBrowser } from './browser';

/** A first welcome automation, set up in the dashboard by a new user, mails a new contact at once. */
describe('dashboard in Chromium: a first welcome automation', () => {
  const sink = useSmtpSink();
  const h = useHarness();
  const b = useBrowser(h);

  test('when a new user creates a welcome automation then its first step waits “At once”, and once live a contact added in the dashboard gets the first mail at the next worker run', async () => {
    const account = await h.account();
    const ctx = { userId: account.user_id };
    const { services } = h.runtime;
    await addVerifiedSender(h, account, await berlin(h), { nickname: 'Hello', from_email: 'hello@acme.example', from_name: 'Acme' });
    await services.unsubscribeGroups.add(ctx, { group_name: 'Newsletter', description: 'News', is_display: 1 });
    await services.contactTypes.add(ctx, { name: 'Readers' });
    const page = await b.signedIn(account);

    await page.getByRole('navigation').getByRole('link', { name: 'Automations' }).click();
    await page.getByRole('link', { name: 'New automation' }).first().click();
    expect(await page.getByLabel(/Welcome: each contact who joins/).isChecked()).toBe(true);
    await page.getByLabel('Name', { exact: true }).fill('Welcome series');
    await page.getByLabel('Target', { exact: true }).selectOption({ label: 'Contact type: Readers' });
    await page.getByLabel('Unsubscribe group', { exact: true }).selectOption({ label: 'Newsletter' });
    await page.getByRole('button', { name: 'Create automation' }).click();
    await page.getByText('Automation created as a draft: add its steps, then set it live.').waitFor();

    // The first step's wait is "At once", already chosen.
    const wait = page.getByLabel('Wait', { exact: true });
    expect(await wait.inputValue()).toBe('instantly');
    expect(await wait.locator('option:checked').textContent()).toBe('At once');
    expect(await axeViolations(page)).toEqual([]);
    await page.getByLabel('Subject', { exact: true }).fill('Welcome aboard, ((first_name))');
    await page.getByLabel('Sender', { exact: true }).selectOption({ label: 'Hello — hello@acme.example' });
    await page.getByLabel('Design template', { exact: true }).selectOption({ label: 'Welcome' });
    await page.getByRole('button', { name: 'Add step' }).click();
    await page.getByText('Step added.').waitFor();
    await page.locator('.steps-list li', { hasText: 'Welcome aboard, ((first_name))' }).getByText('at once', { exact: false }).waitFor();

    await page.getByRole('button', { name: 'Set live' }).click();
    await page.getByText('The automation is live.').waitFor();
    await page.locator('#automation-state').getByText('Live', { exact: true }).waitFor();

    // A contact joins the target: the worker's next run mails them, with no waiting.
    await page.getByRole('navigation').getByRole('link', { name: 'Contacts' }).click();
    await page.getByRole('link', { name: 'New contact' }).first().click();
    await page.getByLabel('Contact type', { exact: true }).selectOption({ label: 'Readers' });
    await page.getByLabel('Email', { exact: true }).fill('mia@example.org');
    await page.getByLabel('First name', { exact: true }).fill('Mia');
    await page.getByLabel('Country', { exact: true }).selectOption({ label: 'Germany' });
    await page.getByRole('button', { name: 'Save contact' }).click();
    await page.getByText('Contact added.').waitFor();

    const { worker, close } = testWorker(h, sink.url);
    await worker.runOnce().finally(close);
    const [mail] = await sink.waitFor(1);
    expect(mail.to).toEqual(['mia@example.org']);
    expect(mail.parsed.subject).toBe('Welcome aboard, Mia');
    expect(mail.parsed.from?.value).toEqual([{ name: 'Acme', address: 'hello@acme.example' }]);
    expect(b.problems).toEqual([]);
  });
});
