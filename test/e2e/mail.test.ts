import { createMailTransport } from '../../src/mail/transport';
import { useHarness } from '../support/harness';
import { useBrowser } from './browser';

describe('dashboard in Chromium: unsubscribes, outbox and senders', () => {
  const h = useHarness();
  const b = useBrowser(h);

  test('when a group is created and addresses added, then one row and a selection are deleted in place', async () => {
    const account = await h.account();
    const page = await b.signedIn(account);

    await page.getByRole('navigation').getByRole('link', { name: 'Groups' }).click();
    await page.getByRole('link', { name: 'New group' }).first().click();
    await page.getByLabel('Name').fill('Product news');
    await page.getByLabel('Description').fill('News about our products');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByText('Unsubscribe group created.').waitFor();

    await page.getByLabel('Add addresses to this group').fill('one@example.com\ntwo@example.com\nthree@example.com');
    await page.getByRole('button', { name: 'Add', exact: true }).click();
    await page.getByText('3 addresses added.').waitFor();

    const list = page.locator('#group-recipient-list');
    await list.getByRole('row', { name: /two@example\.com/ }).getByRole('button', { name: 'Delete' }).click();
    await page.locator('#flash').getByText('Address removed.').waitFor();
    expect(await list.getByText('two@example.com').count()).toBe(0);

    await page.getByLabel('Select one@example.com').check();
    await page.getByLabel('Select three@example.com').check();
    await page.getByRole('button', { name: 'Delete selected' }).click();
    await page.getByText('No address in this group yet.').waitFor();
    await page.locator('#flash').getByText('2 addresses removed.').waitFor();
    expect(b.problems).toEqual([]);
  });

  test('when the account has a message in the outbox then it opens, framed, with its links listed', async () => {
    const account = await h.account();
    const transport = createMailTransport(h.runtime.config);
    await transport.send({
      accountId: account.user_id,
      from: 'team@example.com',
      to: 'jane@example.org',
      subject: 'Verify your sender',
      html: '<h1 style="color:#333">Almost there</h1><p><a href="http://campaigns.test/verify-sender/t0ken">Verify</a></p>',
    });
    transport.close();
    const page = await b.signedIn(account);

    await page.getByRole('navigation').getByRole('link', { name: 'Outbox' }).click();
    await page.getByRole('link', { name: 'Verify your sender' }).click();
    await page.getByRole('link', { name: 'http://campaigns.test/verify-sender/t0ken' }).waitFor();
    await page.frameLocator('iframe.message-frame').getByRole('heading', { name: 'Almost there' }).waitFor();
    expect(b.problems).toEqual([]);
  });

  test('when a sender is created with the place pickers and its link followed from the Outbox then it shows verified', async () => {
    const account = await h.account();
    const page = await b.signedIn(account);

    await page.getByRole('navigation').getByRole('link', { name: 'Senders' }).click();
    await page.getByRole('link', { name: 'New sender' }).first().click();
    await page.getByLabel('Nickname').fill('Newsletter');
    await page.getByLabel('From name').fill('Acme News');
    await page.getByLabel('From email').fill('news@acme.example');
    await page.getByLabel('Reply-to email').fill('reply@acme.example');
    await page.getByLabel('Address', { exact: true }).fill('1 Main Street');
    await page.getByLabel('Country').selectOption({ label: 'Canada' });
    // htmx fills the states of the chosen country, then the cities of the chosen state.
    await page.getByLabel('State or region').selectOption({ label: 'Ontario' });
    await page.locator('#field-city_id option', { hasText: 'Toronto' }).first().waitFor({ state: 'attached' });
    await page.getByLabel('City').selectOption({ label: 'Toronto' });
    await page.getByRole('button', { name: 'Save sender' }).click();
    await page.getByText('A verification link was mailed to news@acme.example.').waitFor();
    await page.getByText('Waiting').waitFor();

    await page.getByRole('navigation').getByRole('link', { name: 'Outbox' }).click();
    await page.getByRole('link', { name: 'Confirm your sender address' }).click();
    const link = page.locator('.links a').first();
    const href = (await link.getAttribute('href')) ?? '';
    // The mail's links use BASE_URL; here the app answers on 127.0.0.1, so the path is opened on it.
    await page.goto(new URL(href).pathname);
    await page.getByText(/verified/i).first().waitFor();
    await page.goto('/senders');
    await page.getByText('Verified', { exact: true }).waitFor();
    expect(b.problems).toEqual([]);
  });
});
