import type { Page } from 'playwright-core';

/** The smallest target a finger or a shaky pointer is given, in CSS pixels (WCAG 2.2, 2.5.8). */
export const MIN_TARGET_PX = 24;

/** What a person can click, tap or tab to. */
const INTERACTIVE = 'a[href], button, input:not([type="hidden"]), select, textarea, summary, [role="button"], [tabindex]:not([tabindex="-1"])';

/**
 * What keeps a phone from being used on the page as it is now, one line each: every visible
 * interactive element whose box is narrower or shorter than MIN_TARGET_PX ("small a 'Edit'
 * 60×20"), and the page or any box of it that scrolls sideways ("scrolls sideways: table.table
 * 612 > 350"). Elements shown only to a screen reader (a 1 px clip) and those not rendered are
 * not targets.
 */
export function phoneProblems(page: Page): Promise<string[]> {
  return page.evaluate(
    ({ selector, min }) => {
      // The suite compiles without the DOM library: the few parts read here, typed by hand.
      interface Box { width: number; height: number }
      interface El {
        tagName: string;
        id: string;
        className: unknown;
        textContent: string | null;
        parentElement: El | null;
        scrollWidth: number;
        clientWidth: number;
        getAttribute(name: string): string | null;
        getBoundingClientRect(): Box;
        getClientRects(): { length: number };
        querySelectorAll(selector: string): ArrayLike<El>;
      }
      const w = globalThis as unknown as {
        document: { documentElement: El; body: El };
        innerWidth: number;
        getComputedStyle(e: El): { visibility: string; display: string; overflowX: string; position: string; clip: string };
      };
      const name = (e: El) => {
        const words = (e.getAttribute('aria-label') ?? e.textContent ?? '').replace(/\s+/g, ' ').trim().slice(0, 40);
        const type = e.getAttribute('type');
        const cls = typeof e.className === 'string' && e.className ? `.${e.className.trim().split(/\s+/).join('.')}` : '';
        return `${e.tagName.toLowerCase()}${e.id ? `#${e.id}` : ''}${cls}${type ? `[type=${type}]` : ''}${words ? ` '${words}'` : ''}`;
      };
      /** Shown to a screen reader only: clipped to a pixel by itself or an ancestor. */
      const clipped = (e: El | null): boolean => {
        for (let at = e; at; at = at.parentElement) {
          const box = at.getBoundingClientRect();
          if (box.width <= 1 && box.height <= 1 && w.getComputedStyle(at).position === 'absolute') return true;
        }
        return false;
      };
      const problems: string[] = [];
      const all = Array.from(w.document.body.querySelectorAll(selector));
      for (const e of all) {
        const style = w.getComputedStyle(e);
        if (!e.getClientRects().length || style.visibility === 'hidden' || clipped(e)) continue;
        const box = e.getBoundingClientRect();
        if (box.width < min || box.height < min) problems.push(`small ${name(e)} ${Math.round(box.width)}×${Math.round(box.height)}`);
      }
      const root = w.document.documentElement;
      if (root.scrollWidth > w.innerWidth) problems.push(`scrolls sideways: the page ${root.scrollWidth} > ${w.innerWidth}`);
      for (const e of Array.from(w.document.body.querySelectorAll('*'))) {
        const overflow = w.getComputedStyle(e).overflowX;
        if ((overflow === 'auto' || overflow === 'scroll') && e.scrollWidth > e.clientWidth + 1 && e.getClientRects().length) {
          problems.push(`scrolls sideways: ${name(e).split(' ')[0]} ${e.scrollWidth} > ${e.clientWidth}`);
        }
      }
      return problems;
    },
    { selector: INTERACTIVE, min: MIN_TARGET_PX },
  );
}

/**
 * Words of the page (as rendered, `innerText`) with a space before a full stop, comma, colon,
 * semicolon or closing bracket ("add one .", "(UTC) ."), each with a few words before it: a
 * sentence broken by its markup (a link made a flex item, a line break before the stop).
 */
export async function spacesBeforePunctuation(page: Page): Promise<string[]> {
  const text = (await page.evaluate(() => (globalThis as unknown as { document: { body: { innerText: string } } }).document.body.innerText)) as string;
  // A flex item is a block to innerText: the break it puts before a stop shows as a space.
  return [...text.matchAll(/(\S+\s\S+)\s+([.,;:)])(?=\s|$)/g)].map((m) => `“${m[1].replace(/\s+/g, ' ')} ${m[2]}”`);
}
