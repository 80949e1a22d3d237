import { addVerifiedSender, berlin } from '../support/campaign';
import { useHarness } from '../support/harness';
import { useBrowser } from './browser';

describe('debug', () => {
  const h = useHarness();
  const b = useBrowser(h);
  test('look', async () => {
    const account = await h.account();
    const ctx = { userId: account.user_id };
    await addVerifiedSender(h, account, await berlin(h), { nickname: 'News', from_email: 'news@acme.example' });
    await h.runtime.services.contactTypes.add(ctx, { name: 'Customers' });
    const page = await b.page();
    page.on('console', (m) => console.log('CONSOLE', m.type(), m.text()));
    await b.signIn(page, account);
    const res = await page.goto('/single-sends/new');
    console.log(res?.headers()['content-security-policy']);
    await new Promise((r) => setTimeout(r, 5000));
    console.log(b.problems);
    console.log((await page.locator('.designer').innerHTML()).slice(0, 3000));
    await page.screenshot({ path: '/tmp/ed/composer.png', fullPage: true });
  }, 60000);
});
