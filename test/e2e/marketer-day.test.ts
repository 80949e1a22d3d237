import { MESSAGE_STATE, SINGLE_SEND_STATUS } from '../../src/lib/constants';
import type { Page } from 'playwright-core';
import { addVerifiedSender, berlin, newsDesk } from '../support/fixtures';
import { useHarness } from '../support/harness';
import { axeViolations } from './axe';
import { eventually, useBrowser, fillComposer } from './browser';

/** The page's globals these checks read (the suite compiles without the DOM library). */
interface Rect {
  width: number;
  height: number;
}
interface El {
  getBoundingClientRect(): Rect;
  outerHTML: string;
  offsetParent: unknown;
}
interface PageGlobals {
  document: { documentElement: { scrollWidth: number }; querySelector(s: string): El | null; querySelectorAll(s: string): El[]; activeElement: { id: string } | null };
  innerWidth: number;
  getComputedStyle(element: unknown): { fontSize: string; visibility: string; display: string };
}

/** What a 390 px page measures: its top bar's height, its sideways overflow, its small targets, its smallest chart text. */
function measure() {
  const g = globalThis as unknown as PageGlobals;
  const shown = (el: El) => el.offsetParent !== null && g.getComputedStyle(el).visibility !== 'hidden';
  const small = [...g.document.querySelectorAll('main input[type="checkbox"], main input[type="radio"], main .small')]
    .filter(shown)
    .filter((el) => el.getBoundingClientRect().width < 24 || el.getBoundingClientRect().height < 24)
    .map((el) => el.outerHTML.slice(0, 80));
  const chartText = [...g.document.querySelectorAll('main svg.chart text, main .bars dt, main .bar-value')]
    .filter(shown)
    .map((el) => {
      const svg = (el as unknown as { ownerSVGElement?: { viewBox: { baseVal: { width: number } }; getBoundingClientRect(): Rect } }).ownerSVGElement;
      const size = parseFloat(g.getComputedStyle(el).fontSize);
      return svg ? (size * svg.getBoundingClientRect().width) / svg.viewBox.baseVal.width : size;
    });
  const bar = g.document.querySelector('.sidebar');
  return {
    topBar: bar ? bar.getBoundingClientRect().height : 0,
    sideways: g.document.documentElement.scrollWidth - g.innerWidth,
    small,
    smallestChartText: chartText.length ? Math.min(...chartText) : undefined,
  };
}

const focusedId = (page: Page) => page.evaluate(() => (globalThis as unknown as PageGlobals).document.activeElement?.id ?? '');

describe('dashboard in Chromium: a marketer’s first day', () => {
  const h = useHarness();
  const b = useBrowser(h);

  test('when the composer is left by “Create a group” then coming back brings the typing back; a refused save keeps the focus on the refused field; the saved draft previews for a sample contact', async () => {
    const account = await h.account();
    const ctx = { userId: account.user_id };
    await addVerifiedSender(h, account, await berlin(h), { nickname: 'News', from_email: 'news@acme.example' });
    await h.runtime.services.contactTypes.add(ctx, { name: 'Readers' });
    const page = await b.signedIn(account);
    await page.goto('/single-sends/new');
    await page.getByLabel('Name', { exact: true }).fill('November news');
    await page.getByLabel('Subject').fill('{% iff first_name %}Hello');
    await page.getByLabel('Preheader').fill('What is new');
    await page.getByLabel('Readers').first().check();

    // No group yet: the link to create one leaves the page.
    await page.getByRole('link', { name: 'Create a group' }).click();
    await page.waitForURL('**/unsubscribe-groups/new');
    await page.getByLabel('Description').waitFor();
    await page.getByLabel('Name', { exact: true }).fill('Newsletter');
    await page.getByLabel('Description').fill('Monthly news');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByText('Unsubscribe group created.').waitFor();

    await page.goto('/single-sends/new');
    await page.getByText('What you typed here before leaving the page is back.').waitFor();
    expect(await page.getByLabel('Name', { exact: true }).inputValue()).toBe('November news');
    expect(await page.getByLabel('Subject').inputValue()).toBe('{% iff first_name %}Hello');
    expect(await page.getByLabel('Preheader').inputValue()).toBe('What is new');
    expect(await page.getByLabel('Readers').first().isChecked()).toBe(true);
    expect(await axeViolations(page)).toEqual([]);

    // The new group can be chosen now; the Liquid mistake is refused and the focus goes to it.
    await page.getByLabel('Sender').selectOption({ label: 'News — news@acme.example' });
    await page.getByLabel('Unsubscribe group').selectOption({ label: 'Newsletter' });
    await page.getByLabel('Welcome').check();
    await page.getByRole('button', { name: 'Save single send' }).click();
    await page.locator('#subject-error').waitFor();
    await eventually('the refused field has the focus', async () => (await focusedId(page)) === 'field-subject');
    expect(await axeViolations(page)).toEqual([]);

    // Saved: the kept typing is gone, so a new send starts empty.
    await page.getByLabel('Subject').fill('Hello {{ first_name }}');
    await page.getByRole('button', { name: 'Save single send' }).click();
    await page.getByText('Draft saved.', { exact: false }).waitFor();
    // Nobody is in the audience yet: the draft's preview is filled for a sample contact, never left empty.
    const preview = page.locator('#send-preview');
    await preview.getByText('Nobody in the audience yet: shown for a made-up sample contact.').waitFor();
    await preview.locator('.preview-subject', { hasText: 'Subject: Hello Alex' }).waitFor();
    await page.frameLocator('#send-preview iframe.message-frame').getByText('Welcome aboard, Alex!').waitFor();
    expect(await axeViolations(page)).toEqual([]);
    await page.goto('/single-sends/new');
    await page.getByLabel('Name', { exact: true }).waitFor();
    expect(await page.getByLabel('Name', { exact: true }).inputValue()).toBe('');
    expect(await page.getByText('What you typed here before leaving the page is back.').count()).toBe(0);
    expect(b.problems).toEqual([]);
  });

  test('when the pages are walked 390 px wide then the top bar stays short, targets are 24 px, chart text is 11 px or more, nothing scrolls sideways, the editor says it needs a wider screen, and the report’s bars are shares of the delivered with the bounced address listed', async () => {
    const account = await h.account();
    const { ctx } = await newsDesk(h, account, 'Customers');
    const { services } = h.runtime;
    const page = await b.page();
    await page.setViewportSize({ width: 390, height: 844 });
    await b.signIn(page, account);
    await page.goto('/single-sends/new');
    await fillComposer(page, { name: 'Phone send', subject: 'Hi', preheader: 'From a phone' });
    await page.getByLabel('Customers').first().check();
    await page.getByLabel('Welcome').check();
    // The editor says plainly it needs a wider screen, and the HTML is there to edit.
    await page.getByText('The visual editor needs a wider screen (700 px or more).', { exact: false }).waitFor();
    await page.getByLabel('Message (HTML)').waitFor({ state: 'visible' });
    expect(await page.locator('[data-designer-canvas]').isVisible()).toBe(false);
    await page.getByRole('button', { name: 'Save single send' }).click();
    await page.getByText('Draft saved.', { exact: false }).waitFor();
    const utr = /\/single-sends\/([\w-]+)$/.exec(page.url())![1];
    const send = await services.singleSends.get(ctx, utr);
    await h.runtime.db('single_sends').where({ id: send.id }).update({ status: SINGLE_SEND_STATUS.completed, triggered: 5, delivered: 4, unique_opens: 2, bounces: 1 });
    const at = new Date().toISOString();
    await h.runtime.db('send_messages').insert({
      kind: 1, user_id: account.user_id, single_send_id: send.id, email: 'gone@example.org', email_key: 'gone@example.org', state: MESSAGE_STATE.bounced, attempts: 1,
      last_error: '550 5.1.1 <gone@example.org>: user unknown', created_at: at, updated_at: at,
    });

    const paths = ['/', '/contacts', '/contact-types', '/segments', '/single-sends', `/single-sends/${utr}`, '/automations', '/senders', '/unsubscribe-groups', '/global-unsubscribes', '/settings'];
    for (const path of paths) {
      await page.goto(path);
      await page.locator('main h1').first().waitFor();
      const m = await page.evaluate(measure);
      expect({ path, ...m, topBarShort: m.topBar <= 80 }).toEqual({ path, ...m, topBarShort: true, sideways: 0, small: [] });
      if (m.smallestChartText !== undefined) expect(m.smallestChartText).toBeGreaterThanOrEqual(11);
      expect(await axeViolations(page)).toEqual([]);
    }

    // The report on the phone: bars are shares of the delivered mail, and the bounced address is listed with its reason.
    await page.goto(`/single-sends/${utr}`);
    await page.getByText('Shares of the 4 delivered.').waitFor();
    const barWidth = async (label: string) => (await page.locator('.bar-row', { has: page.locator('dt', { hasText: label }) }).locator('rect.chart-bar').boundingBox())!.width;
    const [delivered, opened] = [await barWidth('Delivered'), await barWidth('Unique opens')];
    expect(Math.abs(opened - delivered / 2)).toBeLessThanOrEqual(1);
    await page.getByRole('heading', { name: '1 address bounced' }).waitFor();
    await page.getByRole('row', { name: 'gone@example.org No such address 550 5.1.1 <gone@example.org>: user unknown' }).waitFor();
    expect(b.problems).toEqual([]);
  });
});
