import { createMailTransport } from '../../src/mail/transport';
import { useHarness } from '../support/harness';
import { eventually, useBrowser } from './browser';

describe('dashboard in Chromium', () => {
  const h = useHarness();
  const b = useBrowser(h);

  test('when a user signs in, adds, renames and deletes a contact type then every step shows, with no CSP or script error', async () => {
    const account = await h.account();
    const page = await b.page();

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
    const page = await b.page();
    await b.signIn(page, account);

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
    const page = await b.page();
    await b.signIn(page, account);

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

  test('when a group is created and addresses added, then one row and a selection are deleted in place', async () => {
    const account = await h.account();
    const page = await b.page();
    await b.signIn(page, account);

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
    const page = await b.page();
    await b.signIn(page, account);

    await page.getByRole('navigation').getByRole('link', { name: 'Outbox' }).click();
    await page.getByRole('link', { name: 'Verify your sender' }).click();
    await page.getByRole('link', { name: 'http://campaigns.test/verify-sender/t0ken' }).waitFor();
    await page.frameLocator('iframe.message-frame').getByRole('heading', { name: 'Almost there' }).waitFor();
    expect(b.problems).toEqual([]);
  });

  test('when a sender is created with the place pickers and its link followed from the Outbox then it shows verified', async () => {
    const account = await h.account();
    const page = await b.page();
    await b.signIn(page, account);

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

  test('when a single send is composed, picking a template and an audience, then its page shows it with the chart', async () => {
    const account = await h.account();
    const ctx = { userId: account.user_id };
    const { services, db } = h.runtime;
    const country = (await services.geography.countries())[0].id;
    const sender = await services.senders.add(ctx, {
      from_name: 'Acme', from_email: 'news@acme.example', reply_to_email: 'reply@acme.example', country_id: country,
      state_id: null, city_id: null, zip_code: null, company_address: '1 Main St', company_address2: null, nickname: 'News',
    });
    await db('senders').where({ id: sender }).update({ is_verified: 1 });
    await services.unsubscribeGroups.add(ctx, { group_name: 'Newsletter', description: 'News', is_display: 1 });
    await services.contactTypes.add(ctx, { name: 'Customers' });
    const page = await b.page();
    await b.signIn(page, account);

    await page.getByRole('navigation').getByRole('link', { name: 'Single sends' }).click();
    await page.getByRole('link', { name: 'New single send' }).first().click();
    await page.getByLabel('Name', { exact: true }).fill('Launch');
    await page.getByLabel('Subject').fill('Our launch');
    await page.getByLabel('Preheader').fill('Read all about it');
    await page.getByLabel('Sender').selectOption({ label: 'News — news@acme.example' });
    await page.getByLabel('Unsubscribe group').selectOption({ label: 'Newsletter' });
    await page.getByLabel('Welcome').check();
    // htmx refills the editor with the picked template's HTML.
    await eventually('the editor holds the template', async () => (await page.locator('#field-template_html').inputValue()).includes('Welcome aboard'));
    await page.getByLabel('Customers').first().check();
    await page.getByRole('button', { name: 'Save single send' }).click();
    await page.getByText('Single send saved.').waitFor();
    await page.getByRole('heading', { name: 'Launch' }).waitFor();
    await page.locator('svg.chart').waitFor();
    await page.frameLocator('iframe.message-frame').getByText('Welcome aboard').first().waitFor();
    expect(b.problems).toEqual([]);
  });

  test('when an automation is created, given a step and a group, then it goes live in place', async () => {
    const account = await h.account();
    const ctx = { userId: account.user_id };
    const { services, db } = h.runtime;
    const country = (await services.geography.countries())[0].id;
    const sender = await services.senders.add(ctx, {
      from_name: 'Acme', from_email: 'hello@acme.example', reply_to_email: 'reply@acme.example', country_id: country,
      state_id: null, city_id: null, zip_code: null, company_address: '1 Main St', company_address2: null, nickname: 'Hello',
    });
    await db('senders').where({ id: sender }).update({ is_verified: 1 });
    await services.unsubscribeGroups.add(ctx, { group_name: 'Onboarding', description: 'Tips', is_display: 1 });
    await services.contactTypes.add(ctx, { name: 'Trials' });
    const page = await b.page();
    await b.signIn(page, account);

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
