import type { Page } from 'playwright-core';
import { addVerifiedSender, berlin, sendingFixtures } from '../support/fixtures';
import { useHarness } from '../support/harness';
import { useBrowser } from './browser';

const canvas = (page: Page) => page.frameLocator('.designer-canvas iframe.gjs-frame');

describe('probe', () => {
  const h = useHarness();
  const b = useBrowser(h);
  test('probe', async () => {
    const account = await h.account();
    const ctx = { userId: account.user_id };
    const { services } = h.runtime;
    await addVerifiedSender(h, account, await berlin(h), { nickname: 'News', from_email: 'news@acme.example', from_name: 'Acme News' });
    await services.unsubscribeGroups.add(ctx, { group_name: 'Newsletter', description: 'News', is_display: 1 });
    const type = await services.contactTypes.add(ctx, { name: 'Customers' });
    await sendingFixtures(h).contact(account.user_id, type, 'ann@example.org', { first_name: 'Ann' });
    const page = await b.page();
    await b.signIn(page, account);
    await page.goto('/single-sends/new');
    await canvas(page).locator('body').waitFor();
    await page.getByLabel('Welcome').check();
    await canvas(page).getByText('Welcome aboard').first().waitFor();
    await page.screenshot({ path: '/tmp/probe/1.png', fullPage: true });
    const t = canvas(page).getByText('Thanks for joining us', { exact: false }).first();
    await t.dblclick();
    const editable = canvas(page).locator('[contenteditable="true"]').first();
    await editable.waitFor();
    await page.keyboard.press('End');
    await page.keyboard.type(' X1');
    await page.getByRole('button', { name: '((first_name))' }).first().click();
    await page.keyboard.type(' X2');
    await page.waitForTimeout(1500);
    console.log('STATUS', await page.locator('[data-designer-status]').textContent(), await page.locator('[data-designer-status]').isHidden());
    console.log('CANVAS', await canvas(page).locator('body').innerText());
    const sizes = await page.evaluate(() => { const d = (globalThis as any).document; const c = d.querySelector('.designer-canvas'); return { cw: c.clientWidth, sw: c.scrollWidth, ow: c.offsetWidth, parent: c.parentElement.clientWidth, doc: d.documentElement.scrollWidth, win: (globalThis as any).innerWidth, gjs: d.querySelector('.gjs-editor')?.offsetWidth }; });
    console.log('SIZES', JSON.stringify(sizes));
    await page.screenshot({ path: '/tmp/probe/2.png', fullPage: true });
    console.log(b.problems);
  });
});
