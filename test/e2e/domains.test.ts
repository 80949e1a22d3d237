import { useHarness } from '../support/harness';
import { startDnsServer, TestDnsServer } from '../support/dns';
import { axeViolations } from './axe';
import { useBrowser, widths } from './browser';

/** The Domains page on a phone, with the keyboard, under the CSP. */
describe('dashboard sending domains in Chromium', () => {
  let dns: TestDnsServer;
  beforeAll(async () => {
    dns = await startDnsServer();
  });
  afterAll(() => dns.close());
  const h = useHarness({ DNS_SERVERS: () => dns.address });
  const b = useBrowser(h);

  test('when a domain is added 390 px wide then its records can be copied, and Check now verifies it once they are published', async () => {
    const { account, page } = await b.newcomer();
    await page.setViewportSize({ width: 390, height: 844 });
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write']);
    await b.signIn(page, account);
    await page.goto('/domains');
    await page.getByLabel('Domain').fill('phone.example');
    await page.getByRole('button', { name: 'Add domain' }).press('Enter');
    await page.getByText('Waiting for DNS').first().waitFor();

    const domain = (await h.runtime.services.sendingDomains.list({ userId: account.user_id })).rows[0];
    const dkim = domain.records.find((r) => r.purpose === 'dkim')!;
    await page.getByRole('button', { name: 'Copy the value of the DKIM record' }).press('Enter');
    await page.getByRole('status').filter({ hasText: 'Copied.' }).waitFor({ state: 'attached' });
    expect(await page.evaluate('navigator.clipboard.readText()')).toBe(dkim.value);

    const { scroll, inner } = await widths(page);
    expect(scroll).toBeLessThanOrEqual(inner);
    expect(await axeViolations(page)).toEqual([]);

    for (const record of domain.records) dns.set(record.host, record.type as 'TXT', [record.value]);
    await page.getByRole('button', { name: 'Check now' }).press('Enter');
    await page.getByText('Verified: mail from this domain is now signed with its own key.').waitFor();
    expect(b.problems).toEqual([]);
  });
});
