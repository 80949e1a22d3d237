import { useHarness } from '../support/harness';
import { useSmtpSink } from '../support/smtp';
import { axeViolations } from './axe';
import { useBrowser, widths } from './browser';

/** The Relays page on a phone, with the keyboard, under the CSP. */
describe('dashboard relays in Chromium', () => {
  const relay = useSmtpSink();
  const LOGIN = { user: 'news@acme.example', pass: 'p@ss:w/rd' };
  const provider = useSmtpSink({ login: LOGIN });
  const h = useHarness({ RELAY_ALLOW_PRIVATE: '1' });
  const b = useBrowser(h);

  test('when a relay is added 390 px wide with the keyboard then it is listed as not tested yet, and Test says it connected and lists it as working', async () => {
    const { account, page } = await b.newcomer();
    await page.setViewportSize({ width: 390, height: 844 });
    await b.signIn(page, account);
    await page.goto('/relays');

    await page.getByLabel('Name', { exact: true }).fill('Office Postfix');
    await page.getByLabel('Kind').selectOption('smtp');
    // The server's parts, each in its own field, as a person copies them from their provider.
    const sink = new URL(relay.url);
    await page.getByLabel('Server', { exact: true }).fill(sink.hostname);
    await page.getByLabel('Port').fill(sink.port);
    await page.getByLabel('Encryption').selectOption('starttls');
    expect(await page.getByLabel('Password').getAttribute('type')).toBe('password');
    await page.getByLabel('Most messages a second').fill('5');
    await page.getByLabel('Sender domains it serves').fill('acme.test');
    await page.getByRole('button', { name: 'Add relay' }).press('Enter');
    await page.getByText('Relay “Office Postfix” added.').waitFor();
    expect(await page.getByText('Not tested yet', { exact: true }).count()).toBe(1);
    // The list says where it sends in words, not as a URL.
    await page.getByText(`${sink.hostname}, port ${sink.port}`).waitFor();
    expect(await page.locator('body').textContent()).not.toContain('smtp://');

    const { scroll, inner } = await widths(page);
    expect(scroll).toBeLessThanOrEqual(inner);
    expect(await axeViolations(page)).toEqual([]);

    await page.getByRole('button', { name: 'Test Office Postfix' }).press('Enter');
    await page.getByText('The relay connected and accepted the login. Nothing was sent.').waitFor();
    expect(await page.getByText('Working', { exact: true }).count()).toBe(1);
    expect(relay.messages).toHaveLength(0);
    expect(b.problems).toEqual([]);
  });

  test('when a provider\'s SMTP login (a user name and a password with @, : and /) is typed into its own fields then Test logs in with it, and the password is never shown', async () => {
    const page = await b.signedIn(await h.account());
    await page.goto('/relays');
    const server = new URL(provider.url);
    await page.getByLabel('Name', { exact: true }).fill('Provider relay');
    await page.getByLabel('Server', { exact: true }).fill(server.hostname);
    await page.getByLabel('Port').fill(server.port);
    await page.getByLabel('User name').fill(LOGIN.user);
    await page.getByLabel('Password').fill(LOGIN.pass);
    await page.getByRole('button', { name: 'Add relay' }).click();
    await page.getByText('Relay “Provider relay” added.').waitFor();
    await page.getByText(`${server.hostname}, port ${server.port}, user ${LOGIN.user}`).waitFor();
    expect(await page.content()).not.toContain(LOGIN.pass);
    await page.getByRole('button', { name: 'Test Provider relay' }).click();
    await page.getByText('The relay connected and accepted the login. Nothing was sent.').waitFor();
    expect(b.problems).toEqual([]);
  });
});
