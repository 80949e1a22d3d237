import fs from 'node:fs';
import path from 'node:path';
import { PROJECT_ROOT } from '../../src/lib/paths';
import { createMailTransport } from '../../src/mail/transport';
import { useHarness } from '../support/harness';
import { useBrowser } from './browser';

/**
 * `npm run screenshots`: the main pages with a little data, saved under docs/screenshots/
 * for the README and docs/. Not part of `npm test` (it writes into the work tree).
 */
const OUT = path.join(PROJECT_ROOT, 'docs', 'screenshots');

describe('screenshots', () => {
  const h = useHarness();
  const b = useBrowser(h);

  test('main pages', async () => {
    fs.mkdirSync(OUT, { recursive: true });
    const account = await h.account('demo.owner@example.com');
    const ctx = { userId: account.user_id };
    const { services } = h.runtime;
    for (const name of ['Customers', 'Newsletter readers', 'Event guests']) await services.contactTypes.add(ctx, { name });
    const group = await services.unsubscribeGroups.add(ctx, { group_name: 'Product news', description: 'Launches and updates, about once a month.', is_display: 1 });
    await services.unsubscribeGroups.add(ctx, { group_name: 'Offers', description: 'Discounts and special offers.', is_display: 0 });
    await services.unsubscribeGroups.addRecipients(ctx, group, ['ana@example.org', 'li.wei@example.net', 'sam@example.com']);
    await services.globalUnsubscribes.add(ctx, ['no-mail@example.org', 'left@example.com']);
    await services.fields.addCustom(ctx, { field_name: 'company_name', field_type: 'text' });
    await services.fields.addCustom(ctx, { field_name: 'birth_date', field_type: 'datetime-local' });
    await services.notificationRecipients.save(ctx, { email_address: 'ops@example.com', email_owner: 'Operations' });
    const canada = (await services.geography.countries()).find((c) => c.iso2 === 'CA')!;
    const sender = { from_name: 'Acme News', reply_to_email: 'reply@acme.example', country_id: canada.id, state_id: null, city_id: null, zip_code: null, company_address: '1 Main Street', company_address2: null };
    await services.senders.add(ctx, { ...sender, nickname: 'Newsletter', from_email: 'news@acme.example' });
    const verified = await services.senders.add(ctx, { ...sender, nickname: 'Support', from_email: 'support@acme.example' });
    await h.runtime.db('senders').where({ id: verified }).update({ is_verified: 1 });
    const customers = (await services.contactTypes.list(ctx)).rows.find((r) => r.name === 'Customers')!.id;
    const welcome = (await services.designTemplates.list()).rows.find((r) => r.template_name === 'Welcome')!;
    const send = {
      template_id: welcome.id, template_json: null, template_html: welcome.html_code, sender_id: verified, unsubscribe_group_id: group,
      subject: 'Welcome to Acme, ((first_name))', preheader: 'Three steps to get started',
      recipient_id: [{ id: String(customers), table: 'contacts_' as const }], exclude_specific_recipient_id: [],
      schedule_type: 0 as const, schedule_date: '0000-00-00', schedule_time: '00:00:00',
    };
    const sentUtr = await services.singleSends.create(ctx, { ...send, single_send_name: 'October welcome' });
    await h.runtime.db('single_sends').where({ utr: sentUtr }).update({
      status: 3, triggered: 1240, delivered: 1198, bounces: 42, unique_opens: 611, total_opens: 903, unsubscribes: 9, sent_at: new Date().toISOString(),
    });
    const winterUtr = await services.singleSends.create(ctx, { ...send, single_send_name: 'Winter sale', subject: 'Winter sale starts Friday', schedule_type: 1, schedule_date: '2031-12-01', schedule_time: '09:00:00' });
    const onboarding = await services.automations.create(ctx, { automation_type: 1, automation_name: 'Onboarding', automation_for: { id: String(customers), table: 'contacts_' }, unsubscribe_group_id: group });
    for (const [subject, waiting_type, waiting_period] of [['Welcome aboard', 'instantly', 0], ['Three tips for your first week', 'days', 2], ['How is it going?', 'days', 7]] as const) {
      await services.automationSchedules.create(ctx, onboarding, { sender_id: verified, subject, waiting_type, waiting_period, template_id: welcome.id, preview_img: welcome.preview_image, template_json: null, template_html: null });
    }
    await services.automations.setLive(ctx, onboarding);
    await services.ownTemplates.create(ctx, { template_name: 'Spring newsletter', template_json: null, template_html: welcome.html_code });
    await services.ownTemplates.create(ctx, { template_name: 'Event follow-up', template_json: null, template_html: welcome.html_code });
    await services.automations.create(ctx, { automation_type: 2, automation_name: 'Win-back', automation_for: null, unsubscribe_group_id: null });
    // Contacts, an import with skipped rows, a segment, and opens over time for the sent send.
    const fr = (await services.geography.countries()).find((c) => c.iso2 === 'FR')!.id;
    const people = [['Ana', 'Silva', 'ana.silva@example.org'], ['Li', 'Wei', 'li.wei@example.net'], ['Sam', 'Okafor', 'sam@example.com'], ['Marie', 'Dupont', 'marie@example.fr'], ['Jonas', 'Berg', 'jonas@example.de'], ['Priya', 'Nair', 'priya@example.in']];
    for (const [first_name, last_name, email] of people) {
      await services.contacts.add(ctx, { contact_type_id: customers, email, country: fr, text: { first_name, last_name }, custom_field: { company_name: 'Acme' } });
    }
    const csvFile = path.join(h.runtime.config.dataDir, 'screenshot-import.csv');
    fs.mkdirSync(h.runtime.config.dataDir, { recursive: true });
    fs.writeFileSync(csvFile, ['email,first_name,last_name', ...Array.from({ length: 1200 }, (_, i) => `reader${i}@example.com,Reader,${i}`), 'not-an-email,Bad,Row', ',No,Email'].join('\n'));
    const importId = await services.importJobs.start(ctx, { contactTypeId: customers, file: csvFile, fileName: 'newsletter-readers.csv' });
    await services.importJobs.drain();
    // Two of the contacts opened the sent send (the segment builder's engagement condition).
    for (const email of ['ana.silva@example.org', 'sam@example.com']) {
      const at = new Date().toISOString();
      await h.runtime.db('send_messages').insert({ kind: 1, user_id: account.user_id, single_send_id: (await services.singleSends.get(ctx, sentUtr)).id, email, email_key: email, state: 2, attempts: 1, sent_at: at, opened_at: at, created_at: at, updated_at: at });
    }
    await services.segments.save(ctx, { segment_name: 'Acme at example.org', contact_type_id: customers, select_field: ['company_name', 'email'], select_operator: ['is', 'ends with'], value: ['Acme', '@example.org'], query_type: 'and' });
    const sentId = (await services.singleSends.get(ctx, sentUtr)).id;
    const opened = Array.from({ length: 60 }, (_, i) => {
      const at = new Date(Date.now() - 36 * 3600_000 + Math.floor(Math.sqrt(i) * 4.6) * 3600_000).toISOString();
      return { kind: 1, user_id: account.user_id, single_send_id: sentId, email: `o${i}@example.com`, email_key: `o${i}@example.com`, state: 3, attempts: 1, opened_at: at, created_at: at, updated_at: at };
    });
    await h.runtime.db('send_messages').insert(opened);
    const transport = createMailTransport(h.runtime.config);
    await transport.send({
      accountId: account.user_id,
      from: { name: 'Campaigns', address: 'no-reply@campaigns.test' },
      to: 'team@example.com',
      subject: 'Verify your sender address',
      html: '<div style="font-family:sans-serif;max-width:560px;margin:24px auto"><h1 style="color:#1d2330">Confirm team@example.com</h1>' +
        '<p>Open the link below to start sending from this address.</p>' +
        '<p><a style="background:#3451d1;color:#fff;padding:10px 16px;border-radius:6px;text-decoration:none" href="http://127.0.0.1/verify-sender/example">Verify sender</a></p></div>',
    });
    transport.close();

    const page = await b.page();
    const shot = async (name: string) => {
      await page.screenshot({ path: path.join(OUT, `${name}.png`), fullPage: false, caret: 'initial' });
    };
    /**
     * The README's feature shots: a wider window with the menu left out, so the choices' words
     * are shown whole (a 1280 px window cuts the long option labels) at the usual image width.
     */
    const featureShot = async (name: string) => {
      const main = (await page.locator('main').boundingBox())!;
      const card = (await page.locator('main .card').first().boundingBox())!;
      const height = Math.min(880, Math.ceil(card.y + card.height + 32));
      await page.screenshot({ path: path.join(OUT, `${name}.png`), clip: { x: main.x, y: 0, width: main.width, height }, caret: 'initial' });
    };
    await page.goto('/login');
    await shot('sign-in');
    await b.signIn(page, account);
    await shot('home');
    await page.goto('/contact-types');
    await shot('contact-types');
    await page.goto('/contact-types/new');
    await page.getByLabel('Name').fill('x');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByText('The name must be at least 2 characters.').waitFor();
    await shot('contact-type-invalid');
    await page.goto('/contacts');
    await shot('contacts');
    await page.getByLabel('Search contacts').fill('silva');
    await page.getByRole('link', { name: 'Ana Silva' }).click();
    await page.getByLabel('company_name').waitFor();
    await shot('contact-form');
    await page.goto(`/contacts/import/${importId}`);
    await page.getByRole('cell', { name: 'The email must be a valid email address.' }).waitFor();
    await shot('contact-import');
    // The mapping step of a Mailchimp export: unmapped columns become new custom fields.
    const mailchimp = path.join(h.runtime.config.dataDir, 'screenshot-mailchimp.csv');
    fs.copyFileSync(path.join(PROJECT_ROOT, 'test', 'fixtures', 'imports', 'subscribed_members_export_4f2a9c1b7e.csv'), mailchimp);
    const mappingId = await services.importJobs.upload(ctx, { contactTypeId: customers, file: mailchimp, fileName: 'subscribed_members_export.csv' });
    await page.setViewportSize({ width: 1560, height: 880 });
    await page.goto(`/contacts/import/${mappingId}/columns`);
    await page.getByLabel('MEMBER_RATING', { exact: true }).selectOption('new:number');
    await page.getByLabel('OPTIN_TIME', { exact: true }).selectOption('new:datetime-local');
    await page.getByLabel('Phone Number', { exact: true }).selectOption('new:text');
    await page.getByLabel('TAGS', { exact: true }).selectOption('new:text');
    await page.getByLabel('Phone Number', { exact: true }).scrollIntoViewIfNeeded();
    await featureShot('contact-import-mapping');
    await page.goto('/segments/new');
    await page.getByLabel('Name', { exact: true }).fill('Recent Acme openers');
    await page.getByLabel('Contacts of type').selectOption({ label: 'Customers' });
    const condition = async (n: number, field: string, operator: string) => {
      await page.getByRole('button', { name: 'Add condition' }).click();
      await page.getByLabel(`Field of condition ${n}`).selectOption(field);
      await page.getByLabel(`Operator of condition ${n}`).selectOption(operator);
      await page.getByLabel(`Operator of condition ${n}`).locator(`option[value="${operator}"][selected]`).waitFor({ state: 'attached' });
    };
    await condition(1, 'company_name', 'is');
    await page.getByLabel('Value of condition 1', { exact: true }).fill('Acme');
    await condition(2, 'created_at', 'in the last');
    await page.getByLabel('Days of condition 2').fill('30');
    await condition(3, 'engagement', 'opened');
    await page.getByLabel('Send of condition 3').selectOption({ label: 'October welcome (Welcome to Acme, ((first_name)))' });
    await page.locator('#segment-count').getByText('2 contacts match now').waitFor();
    await page.locator('main h1').click();
    await featureShot('segment-builder');
    await page.setViewportSize({ width: 1280, height: 800 });
    await page.goto('/segments');
    await shot('segments');
    await page.goto(`/unsubscribe-groups/${group}`);
    await shot('unsubscribe-group');
    await page.goto('/single-sends');
    await shot('single-sends');
    await page.goto(`/single-sends/${sentUtr}`);
    await page.frameLocator('iframe.message-frame').getByText('Welcome aboard').first().waitFor();
    await shot('single-send');
    await page.locator('svg.chart-columns').waitFor();
    await page.getByRole('heading', { name: 'Opens over time' }).evaluate((title) => (title as unknown as { scrollIntoView(): void }).scrollIntoView());
    await shot('single-send-opens');
    await page.getByLabel('Preview for a contact').fill('marie');
    await page.getByRole('button', { name: 'Preview', exact: true }).click();
    await page.locator('#send-preview').getByText('Welcome to Acme, Marie').waitFor();
    await shot('single-send-preview');
    await page.goto('/single-sends/new');
    await page.locator('.template-choice img').last().evaluate((img) => (img as unknown as { decode(): Promise<void> }).decode());
    await shot('single-send-composer');
    // The visual editor: the design in GrapesJS, then its live preview for a contact at phone width.
    await page.goto(`/single-sends/${winterUtr}/edit`);
    await page.frameLocator('.designer-canvas iframe.gjs-frame').getByText('Welcome aboard').first().waitFor();
    await page.locator('.designer-bar').evaluate((bar) => (bar as unknown as { scrollIntoView(): void }).scrollIntoView());
    await shot('single-send-editor');
    await page.getByRole('button', { name: 'Mobile' }).click();
    await page.frameLocator('#live-preview iframe.live-frame').getByText('Welcome aboard, Ana!').waitFor();
    await page.locator('.live-preview h2').evaluate((title) => (title as unknown as { scrollIntoView(): void }).scrollIntoView());
    await shot('single-send-editor-preview');
    const firstStep = (await services.automationSchedules.list(ctx, onboarding))[0];
    await page.goto(`/automations/${onboarding}/steps/${firstStep.utr}`);
    await page.frameLocator('.designer-canvas iframe.gjs-frame').getByText('Welcome aboard').first().waitFor();
    await page.locator('.designer-bar').evaluate((bar) => (bar as unknown as { scrollIntoView(): void }).scrollIntoView());
    await shot('automation-step-editor');
    await page.goto('/my-templates');
    await shot('own-templates');
    await page.goto('/automations');
    await shot('automations');
    await page.goto(`/automations/${onboarding}`);
    await shot('automation');
    await page.goto('/senders');
    await shot('senders');
    await page.goto('/design-templates');
    await page.locator(".template-card img").last().evaluate((img) => (img as unknown as { decode(): Promise<void> }).decode());
    await shot('design-templates');
    await page.goto('/custom-fields');
    await shot('custom-fields');
    await page.goto('/notification-recipients');
    await shot('notification-recipients');
    await page.goto('/global-unsubscribes');
    await shot('global-unsubscribes');
    await page.goto('/outbox');
    await page.getByRole('link', { name: 'Verify your sender address' }).click();
    await page.frameLocator('iframe.message-frame').getByRole('heading').waitFor();
    await shot('outbox-message');
    await page.goto('/api-keys');
    await page.getByRole('button', { name: 'Rotate secret key' }).click();
    await page.locator('#new-secret-key').waitFor();
    await shot('api-keys');
    await page.goto('/settings');
    await shot('settings');

    // A draft asks once before it goes, with its recipients counted.
    const draft = await services.singleSends.create(ctx, { ...send, single_send_name: 'November news', subject: 'What is new in November, ((first_name))' });
    await h.runtime.db('single_sends').where({ utr: draft }).update({ status: 0 });
    await page.goto(`/single-sends/${draft}/confirm?when=now`);
    await shot('single-send-confirm');

    // The same dashboard on a phone (390 px): the menu folds behind its button.
    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto('/');
    await shot('phone-home');
    await page.getByRole('button', { name: 'Menu' }).click();
    await shot('phone-menu');
    await page.goto(`/single-sends/${sentUtr}`);
    await shot('phone-single-send');
    await page.goto('/contacts');
    await shot('phone-contacts');
    expect(b.problems).toEqual([]);
  });
});
