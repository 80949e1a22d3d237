import { addCustomField, sendingFixtures, testWorker } from '../support/fixtures';
import { useHarness } from '../support/harness';
import { useSmtpSink } from '../support/smtp';
import { axeViolations } from './axe';
import { eventually, useBrowser, widths } from './browser';

/** A double opt-in signup works end to end (form → mail → link → contact → welcome mail). */
describe('signup form with double opt-in in Chromium', () => {
  const sink = useSmtpSink();
  const h = useHarness({ SMTP_URL: () => sink.url });
  const b = useBrowser(h);
  const f = sendingFixtures(h);

  test('when a visitor signs up and confirms the emailed link then the confirmation comes from the chosen sender, the contact appears with its consent and the welcome automation mails them', async () => {
    const account = await h.account();
    const ctx = { userId: account.user_id };
    await h.runtime.services.contactTypes.add(ctx, { name: 'Newsletter readers' });
    await addCustomField(h, account, 'company', 'text');
    const france = await h.runtime.db('countries').where({ iso2: 'FR' }).first('id', 'name');
    const type = Number((await h.runtime.db('contact_types').where({ user_id: account.user_id }).first('id')).id);
    const news = await f.group(account.user_id, 'Product news', 1);
    const automation = await f.automation(account.user_id, { type: 'welcome', contactType: type, groupId: news });
    await f.schedule(account.user_id, automation, { senderId: await f.sender(account.user_id), subject: 'Welcome aboard, ((first_name))', waitingPeriod: 1, waitingType: 'instantly' });
    const { utr } = await h.runtime.db('automations').where({ id: automation }).first('utr');
    await h.api(account).get(`/automations/set-live?utr=${utr}`).expect(200);

    // The owner creates the form in the dashboard.
    const owner = await b.page();
    await b.signIn(owner, account);
    await owner.getByRole('navigation').getByRole('link', { name: 'Signup forms' }).click();
    await owner.getByRole('link', { name: 'New signup form' }).first().click();
    await owner.getByLabel('Name', { exact: true }).fill('Monthly letter');
    await owner.getByLabel('Contact type').selectOption({ label: 'Newsletter readers' });
    // It also asks the country (required) and the account's "company" field, ticked from the keyboard.
    const asked = owner.getByRole('group', { name: 'Fields to ask' });
    await asked.getByLabel('Country').focus();
    await owner.keyboard.press('Space');
    await asked.getByLabel('company (custom field)').check();
    await owner.getByRole('group', { name: 'Required fields' }).getByLabel('Country').check();
    // The confirmation comes from the account's verified sender, not the service's address.
    await owner.getByLabel('Confirmation email from').selectOption({ label: 'Acme News — news@acme.test' });
    await owner.getByLabel('Thank-you text').fill('Thank you for confirming!');
    await owner.getByRole('button', { name: 'Save signup form' }).click();
    await owner.getByText('Signup form created.').waitFor();
    const axe = await axeViolations(owner);
    const snippet = await owner.getByLabel('HTML to embed').inputValue();
    expect(snippet).toContain('method="post"');
    const publicUrl = (await owner.getByRole('link', { name: /\/subscribe\// }).first().getAttribute('href')) ?? '';
    expect(snippet).toContain(`action="${publicUrl}"`);
    expect(b.problems).toEqual([]);

    // A visitor fills in the public page (its links use BASE_URL; the app answers on 127.0.0.1, so the path is opened on it).
    const visitor = await b.page();
    await visitor.goto(new URL(publicUrl).pathname);
    await visitor.getByRole('heading', { name: 'Monthly letter' }).waitFor();
    axe.push(...(await axeViolations(visitor)));
    await visitor.getByLabel('Email address').fill('lena@example.org');
    await visitor.getByLabel('First name').fill('Lena');
    await visitor.getByLabel('Last name').fill('Moreau');
    expect(await visitor.getByLabel('Product news').isChecked()).toBe(true);
    // Without the required country the form comes back, saying so next to the list, and keeps what was typed.
    await visitor.getByRole('button', { name: 'Subscribe' }).click();
    await visitor.getByText('Choose your country.').waitFor();
    expect(await visitor.getByLabel('First name').inputValue()).toBe('Lena');
    axe.push(...(await axeViolations(visitor)));
    // On a phone the form fits; the country is chosen from the keyboard.
    await visitor.setViewportSize({ width: 390, height: 844 });
    const { scroll, inner } = await widths(visitor);
    expect(scroll).toBeLessThanOrEqual(inner);
    await visitor.getByLabel('Country').focus();
    await visitor.getByLabel('Country').selectOption({ label: String(france.name) });
    await visitor.getByLabel('company').fill('Atelier Moreau');
    await visitor.getByRole('button', { name: 'Subscribe' }).click();
    await visitor.getByRole('heading', { name: 'Check your inbox' }).waitFor();
    expect(await h.runtime.db('contacts').where({ email_key: 'lena@example.org' })).toEqual([]);

    const [mail] = await sink.waitFor(1);
    expect(mail.to).toEqual(['lena@example.org']);
    expect(mail.parsed.from?.value).toEqual([{ name: 'Acme News', address: 'news@acme.test' }]);
    const link = /http:\/\/campaigns\.test(\/subscribe\/confirm\/[\w-]+)/.exec(mail.parsed.text ?? '')![1];
    await visitor.goto(link);
    await visitor.getByRole('heading', { name: 'Confirm your subscription' }).waitFor();
    axe.push(...(await axeViolations(visitor)));
    expect(await h.runtime.db('contacts').where({ email_key: 'lena@example.org' })).toEqual([]);
    await visitor.getByRole('button', { name: 'Confirm subscription' }).click();
    await visitor.getByRole('heading', { name: 'Subscription confirmed' }).waitFor();
    await visitor.getByText('Thank you for confirming!').waitFor();
    axe.push(...(await axeViolations(visitor)));
    // The dashboard's form page and the public pages pass axe (the list is walked by the accessibility test).
    await owner.goto('/signup-forms/new');
    axe.push(...(await axeViolations(owner)));
    expect(axe).toEqual([]);
    expect(b.problems).toEqual([]);

    // The owner finds the contact, with its consent.
    await owner.getByRole('navigation').getByRole('link', { name: 'Contacts' }).click();
    await owner.getByRole('link', { name: /Lena Moreau/ }).first().click();
    await owner.getByRole('heading', { name: 'Consent' }).waitFor();
    await owner.getByText(/Signed up through the form Monthly letter/).waitFor();
    await owner.getByText(/Chose: Product news\./).waitFor();
    const contact = await h.runtime.db('contacts').where({ user_id: account.user_id, email_key: 'lena@example.org' }).first('id', 'country');
    expect(Number(contact.country)).toBe(Number(france.id));
    const saved = await h.runtime.services.contacts.get(ctx, Number(contact.id));
    expect(Object.values(saved.custom_field ?? {}).map((v) => `${v.field_name}: ${v.field_value}`)).toEqual(['company: Atelier Moreau']);

    // The welcome automation's worker tick mails the new contact.
    const { worker, close } = testWorker(h, sink.url);
    await worker.runOnce().finally(close);
    await eventually('the welcome mail arrives', async () => sink.messages.length >= 2);
    expect(sink.messages.map((m) => `${m.to[0]}: ${m.parsed.subject}`)).toEqual([
      'lena@example.org: Confirm your subscription: Monthly letter',
      'lena@example.org: Welcome aboard, Lena',
    ]);
    expect(b.problems).toEqual([]);
  });
});
