import { readFileSync } from 'node:fs';
import { useHarness } from '../support/harness';
import { useSmtpSink } from '../support/smtp';
import { useBrowser, widths } from './browser';

const AXE_SOURCE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

/** The Relays page on a phone, with the keyboard, under the CSP. */
describe('dashboard relays in Chromium', () => {
  const relay = useSmtpSink();
  const h = useHarness({ RELAY_ALLOW_PRIVATE: '1' });
  const b = useBrowser(h);

  test('when a relay is added 390 px wide with the keyboard then it is listed as not tested yet, and Test says it connected and lists it as working', async () => {
    const { account, page } = await b.newcomer();
    await page.setViewportSize({ width: 390, height: 844 });
    await b.signIn(page, account);
    await page.goto('/relays');

    await page.getByLabel('Name').fill('Office Postfix');
    await page.getByLabel('Kind').selectOption('smtp');
    await page.getByLabel('Server address (SMTP only)').fill(relay.url);
    await page.getByLabel('Most messages a second').fill('5');
    await page.getByLabel('Sender domains it serves').fill('acme.test');
    await page.getByRole('button', { name: 'Add relay' }).press('Enter');
    await page.getByText('Relay “Office Postfix” added.').waitFor();
    expect(await page.getByText('Not tested yet', { exact: true }).count()).toBe(1);

    const { scroll, inner } = await widths(page);
    expect(scroll).toBeLessThanOrEqual(inner);
    await page.evaluate(AXE_SOURCE);
    const axe = (await page.evaluate('window.axe.run(document, { resultTypes: ["violations"] })')) as { violations: Array<{ id: string }> };
    expect(axe.violations.map((v) => v.id)).toEqual([]);

    await page.getByRole('button', { name: 'Test Office Postfix' }).press('Enter');
    await page.getByText('The relay connected and accepted the login. Nothing was sent.').waitFor();
    expect(await page.getByText('Working', { exact: true }).count()).toBe(1);
    expect(relay.messages).toHaveLength(0);
    expect(b.problems).toEqual([]);
  });
});
