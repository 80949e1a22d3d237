import { useHarness } from '../support/harness';
import { useBrowser } from './browser';
import { walkedPages } from './page-walk';
import { phoneProblems, spacesBeforePunctuation } from './targets';

/** The page's globals these checks read (the suite compiles without the DOM library). */
interface PageGlobals {
  document: { documentElement: { scrollWidth: number }; activeElement: { id: string; textContent: string | null } | null };
  innerWidth: number;
  getComputedStyle(element: unknown): { outlineStyle: string };
}

/** Phone and keyboard: every page at 390 px without sideways scrolling, a skip link, a folding menu. */
describe('dashboard in Chromium on a phone and with a keyboard', () => {
  const h = useHarness({ RELAY_ALLOW_PRIVATE: '1' });
  const b = useBrowser(h);

  test('when every page is opened 390 px wide then none scrolls sideways, every target is at least 24 px, no sentence has a space before its stop, the menu folds and opens, and no script or CSP error occurs', async () => {
    const account = await h.account();
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

    const paths = await walkedPages(h, account, page);
    const form = (await h.runtime.services.signupForms.list({ userId: account.user_id }))[0];
    const found: string[] = [];
    for (const path of [...paths, `/subscribe/${form.public_id}`]) {
      const res = await page.goto(path);
      if (!res || res.status() >= 400) {
        found.push(`${path}: ${res?.status()}`);
        continue;
      }
      found.push(...(await phoneProblems(page)).map((problem) => `${path}: ${problem}`));
      found.push(...(await spacesBeforePunctuation(page)).map((words) => `${path}: a space before the stop in ${words}`));
    }
    expect(found).toEqual([]);
    expect(paths.length).toBeGreaterThan(25);

    // The audit log's filters stand one under another, each the width of the list.
    await page.goto('/audit-log');
    const boxes = await Promise.all(['Who', 'What', 'Since'].map(async (label) => (await page.getByLabel(label, { exact: true }).boundingBox())!));
    expect(boxes[1].y).toBeGreaterThan(boxes[0].y + boxes[0].height);
    expect(boxes[2].y).toBeGreaterThan(boxes[1].y + boxes[1].height);
    expect(boxes.map((box) => box.width >= 300)).toEqual([true, true, true]);
    expect(b.problems).toEqual([]);
  }, 300_000);

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
