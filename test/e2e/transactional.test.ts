import { readFileSync } from 'node:fs';
import { sendingFixtures, testWorker } from '../support/fixtures';
import { useHarness } from '../support/harness';
import { useSmtpSink } from '../support/smtp';
import { useBrowser, widths } from './browser';

const AXE_SOURCE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

/** The Transactional page on a phone, with the keyboard, under the CSP. */
describe('dashboard transactional mail in Chromium', () => {
  // The first attempt of every message is refused: the log then shows a failed one to retry.
  let refusing = true;
  const sink = useSmtpSink({ onRecipient: () => (refusing ? { code: 550, message: '5.1.1 no such user' } : undefined) });
  const h = useHarness({ SUBMISSION_PORT: '2587' });
  const f = sendingFixtures(h);
  const b = useBrowser(h);

  test('when a message failed then the log filtered by status finds it 390 px wide, its timeline says why, Try again queues it, and the setup tab shows the account\'s settings', async () => {
    const { account, page } = await b.newcomer();
    const sender = await f.sender(account.user_id);
    await h.api(account).post('/transactional/send').send({ to: 'pat@shop.test', sender_id: sender, subject: 'Your receipt', text: 'Thanks.', tags: ['receipt'] }).expect(200);
    await h.api(account).post('/transactional/send').send({ to: 'quinn@shop.test', sender_id: sender, subject: 'Password reset', text: 'Reset it.' }).expect(200);
    refusing = true;
    const w = testWorker(h, sink.url);
    await w.worker.runOnce();
    await w.close();
    refusing = false;

    await page.setViewportSize({ width: 390, height: 844 });
    await b.signIn(page, account);
    await page.goto('/transactional');
    await page.getByLabel('Status').selectOption('bounced');
    await page.getByLabel('Tag').fill('receipt');
    await page.getByRole('button', { name: 'Filter' }).press('Enter');
    await page.getByRole('link', { name: 'quinn@shop.test' }).waitFor({ state: 'detached' });
    await page.getByRole('link', { name: 'pat@shop.test' }).waitFor();
    expect(page.url()).toContain('status=bounced');
    const { scroll, inner } = await widths(page);
    expect(scroll).toBeLessThanOrEqual(inner);
    await page.evaluate(AXE_SOURCE);
    const axe = (await page.evaluate('window.axe.run(document, { resultTypes: ["violations"] })')) as { violations: Array<{ id: string }> };
    expect(axe.violations.map((v) => v.id)).toEqual([]);

    await page.getByRole('link', { name: 'pat@shop.test' }).press('Enter');
    await page.getByRole('heading', { name: 'Timeline' }).waitFor();
    await page.getByText('5.1.1 no such user').first().waitFor();
    await page.getByText('No such address', { exact: true }).waitFor();
    // A bounce is not retried: the address is refused for good.
    expect(await page.getByRole('button', { name: 'Try again' }).count()).toBe(0);

    // A failed message (given up after its attempts) is.
    const quinn = await h.runtime.db('send_messages').where({ user_id: account.user_id, email: 'quinn@shop.test' }).first('id');
    await h.runtime.db('send_messages').where({ id: quinn.id }).update({ state: 3, last_error: '4.3.0 try again later', smtp_code: 451 });
    await page.goto(`/transactional/messages/${quinn.id}`);
    await page.getByRole('button', { name: 'Try again' }).press('Enter');
    await page.getByText('The message is queued again.').waitFor();
    await page.getByText('Queued', { exact: true }).first().waitFor();

    await page.getByRole('link', { name: 'Setup' }).press('Enter');
    const curl = await page.getByLabel('Example request').inputValue();
    expect(curl).toContain(`PublicKey: ${account.public_key}`);
    expect(curl).not.toContain(account.secret_key);
    await page.getByText('2587', { exact: true }).waitFor();
    await page.getByText(account.public_key, { exact: true }).waitFor();
    expect(b.problems).toEqual([]);
  });

  test('when a template is written with sample data then the preview fills it in, and it is saved for the API', async () => {
    const { account, page } = await b.newcomer();
    await b.signIn(page, account);
    await page.goto('/transactional/templates');
    await page.getByRole('link', { name: 'New template' }).click();
    await page.getByLabel('Name of this template').fill('Order shipped');
    await page.getByLabel('Subject', { exact: true }).fill('Order {{ data.order_id }} is on its way');
    // The account's own templates' editor: designed visually, or written as HTML.
    await page.locator('.designer-canvas iframe.gjs-frame').waitFor();
    await page.getByRole('button', { name: 'HTML', exact: true }).click();
    const html = page.locator('#field-template_html');
    await html.waitFor({ state: 'visible' });
    await html.fill('<p>Hello {{ data.name }}, your parcel left today.</p>');
    await page.getByLabel('Sample data (JSON)').fill('{"order_id": "A-17", "name": "Robin"}');
    await page.getByRole('button', { name: 'Preview', exact: true }).click();
    await page.getByText('Order A-17 is on its way').waitFor();
    expect(await page.frameLocator('#tx-preview iframe').getByText('Hello Robin, your parcel left today.').count()).toBe(1);
    await page.getByRole('button', { name: 'Save template' }).click();
    await page.getByText('Template “Order shipped” saved.').waitFor();
    const templates = (await h.api(account).get('/transactional/templates').expect(200)).body.message.templates;
    expect(templates).toMatchObject([{ name: 'Order shipped', subject: 'Order {{ data.order_id }} is on its way' }]);
    expect(templates[0].html).toContain('{{ data.name }}');
    expect(b.problems).toEqual([]);
  });
});
