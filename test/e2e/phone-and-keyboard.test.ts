import { addVerifiedSender, berlin } from '../support/fixtures';
import { useHarness } from '../support/harness';
import { useBrowser, widths } from './browser';

/** The page's globals these checks read (the suite compiles without the DOM library). */
interface PageGlobals {
  document: { documentElement: { scrollWidth: number }; activeElement: { id: string; textContent: string | null } | null };
  innerWidth: number;
  getComputedStyle(element: unknown): { outlineStyle: string };
}

/** Phone and keyboard: every page at 390 px without sideways scrolling, a skip link, a folding menu. */
describe('dashboard in Chromium on a phone and with a keyboard', () => {
  const h = useHarness();
  const b = useBrowser(h);

  test('when every page is opened 390 px wide then none scrolls sideways, the menu folds and opens, and no script or CSP error occurs', async () => {
    const account = await h.account();
    const ctx = { userId: account.user_id };
    const { services } = h.runtime;
    await addVerifiedSender(h, account, await berlin(h), { nickname: 'News', from_email: 'news@acme.example' });
    await services.unsubscribeGroups.add(ctx, { group_name: 'Newsletter with a rather long name for a phone', description: 'News', is_display: 1 });
    const type = await services.contactTypes.add(ctx, { name: 'Customers' });
    await h.api(account).post('/contacts/add').send({ contact_type_id: type, email: 'a-very-long-address-for-a-small-screen@example.org', country: 1 }).expect(200);
    const formId = await services.signupForms.add(ctx, { name: 'Monthly letter', contact_type_id: type, fields: ['first_name', 'last_name'], group_ids: [], thank_you: '' });
    const form = await services.signupForms.get(ctx, formId);

    const page = await b.page();
    await page.setViewportSize({ width: 390, height: 844 });
    await b.signIn(page, account);

    // The menu is folded behind its button, and opens.
    const toggle = page.getByRole('button', { name: 'Menu' });
    await toggle.waitFor();
    expect(await page.getByRole('navigation').getByRole('link', { name: 'Contacts' }).isVisible()).toBe(false);
    await toggle.click();
    expect(await toggle.getAttribute('aria-expanded')).toBe('true');
    await page.getByRole('navigation').getByRole('link', { name: 'Contacts' }).waitFor({ state: 'visible' });

    const paths = (await page.locator('nav .nav-links a[href^="/"]').evaluateAll((links) => links.map((a) => (a as unknown as { getAttribute(name: string): string }).getAttribute('href'))))
      .concat(['/single-sends/new', '/automations/new', '/segments/new', '/contacts/new', '/contacts/import', '/senders/new', '/signup-forms/new', `/signup-forms/${formId}`, `/subscribe/${form.public_id}`]);
    const wide: string[] = [];
    for (const path of [...new Set(paths)]) {
      const res = await page.goto(path);
      if (!res || res.status() >= 400) continue;
      const { scroll, inner } = await widths(page);
      if (scroll > inner) wide.push(`${path}: ${scroll} > ${inner}`);
    }
    expect(wide).toEqual([]);
    expect(paths.length).toBeGreaterThan(15);
    expect(b.problems).toEqual([]);
  });

  test('when a keyboard user tabs into a page then the skip link comes first and takes them to the content', async () => {
    const account = await h.account();
    const page = await b.signedIn(account);
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => (globalThis as unknown as PageGlobals).document.activeElement?.textContent?.trim())).toBe('Skip to content');
    await page.keyboard.press('Enter');
    expect(await page.evaluate(() => (globalThis as unknown as PageGlobals).document.activeElement?.id)).toBe('main');
    // The focused control has a visible ring.
    await page.keyboard.press('Tab');
    const outline = await page.evaluate(() => {
      const w = globalThis as unknown as PageGlobals;
      return w.getComputedStyle(w.document.activeElement).outlineStyle;
    });
    expect(outline).not.toBe('none');
    expect(b.problems).toEqual([]);
  });
});
