import { readFileSync } from 'node:fs';
import { createHookDeliverer } from '../../src/workers/hook-deliverer';
import { useHarness } from '../support/harness';
import { startWebhookReceiver, WebhookReceiver } from '../support/webhook-receiver';
import { eventually, useBrowser, widths } from './browser';

const AXE_SOURCE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

/** The Webhooks page on a phone, with the keyboard, under the CSP. */
describe('dashboard webhooks in Chromium', () => {
  const h = useHarness({ WEBHOOK_ALLOW_PRIVATE: '1' });
  const b = useBrowser(h);
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    receiver = await startWebhookReceiver();
  });
  afterAll(() => receiver.close());

  test('when a webhook is added 390 px wide then its secret shows once, its log shows the delivery, and Send again posts it again', async () => {
    const { account, page } = await b.newcomer();
    await page.setViewportSize({ width: 390, height: 844 });
    await b.signIn(page, account);
    await page.goto('/webhook-endpoints');

    await page.getByLabel('Address (URL) of your endpoint').fill(receiver.url);
    await page.getByLabel('Description').fill('Orders system');
    await page.getByLabel('A contact was added').check();
    await page.getByLabel('A contact import finished').press('Space');
    await page.getByRole('button', { name: 'Add webhook' }).press('Enter');
    const secretBox = page.getByLabel('Signing secret');
    await secretBox.waitFor();
    receiver.secret = await secretBox.inputValue();
    expect(receiver.secret).toMatch(/^whsec_/);

    const hook = (await h.runtime.services.outgoingWebhooks.list({ userId: account.user_id })).rows[0];
    expect(hook.events).toEqual(['contact.created', 'import.finished']);
    await h.api(account).post('/contacts-type/add').field('name', 'Shop').expect(200);
    const type = await h.runtime.db('contact_types').where({ user_id: account.user_id }).first('id');
    await h.api(account).post('/contacts/add').send({ contact_type_id: type.id, email: 'buyer@example.org', country: 1 }).expect(200);
    const deliverer = createHookDeliverer({ db: h.runtime.db, config: { webhookAllowPrivate: true }, logger: h.runtime.logger, secret: h.runtime.secret });
    await deliverer.runOnce();

    await page.getByRole('link', { name: 'Done' }).click();
    await page.getByText('Delivered', { exact: true }).first().waitFor();
    expect(await page.content()).not.toContain(receiver.secret);
    const { scroll, inner } = await widths(page);
    expect(scroll).toBeLessThanOrEqual(inner);
    await page.evaluate(AXE_SOURCE);
    const axe = (await page.evaluate('window.axe.run(document, { resultTypes: ["violations"] })')) as { violations: Array<{ id: string }> };
    expect(axe.violations.map((v) => v.id)).toEqual([]);

    await page.getByRole('button', { name: /^Send again: contact\.created / }).click();
    await page.getByText('The event will be sent again in a moment.').waitFor();
    await deliverer.runOnce();
    await eventually('the event arrives twice', async () => receiver.events().length === 2);
    expect(new Set(receiver.events().map((e) => e.id)).size).toBe(1);
    expect(receiver.forged).toBe(0);
    expect(b.problems).toEqual([]);
  });
});
