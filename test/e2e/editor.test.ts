import type { Page } from 'playwright-core';
import { addVerifiedSender, berlin, sendingFixtures, testWorker, newsDesk } from '../support/fixtures';
import { useHarness } from '../support/harness';
import { useSmtpSink } from '../support/smtp';
import { eventually, useBrowser, fillComposer } from './browser';

/** The element globals these checks read (the suite compiles without the DOM library). */
interface Box {
  x: number;
  y: number;
  width: number;
  height: number;
}

/** The visual editor's canvas frame and the live preview's frame of the page. */
const canvas = (page: Page) => page.frameLocator('.designer-canvas iframe.gjs-frame');
const previewFrame = (page: Page) => page.frameLocator('#live-preview iframe.live-frame');

/** The parts of the DOM that `caretAtEnd` uses (the suite compiles without the DOM library). */
interface EditableText {
  focus(): void;
  ownerDocument: {
    createRange(): { selectNodeContents(node: unknown): void; collapse(toStart: boolean): void };
    getSelection(): { removeAllRanges(): void; addRange(range: unknown): void } | null;
  };
}

/** Focuses an editable text and puts the caret after its last character, as a click there would. */
function caretAtEnd(element: unknown): void {
  const el = element as EditableText;
  el.focus();
  const range = el.ownerDocument.createRange();
  range.selectNodeContents(el);
  range.collapse(false);
  const selection = el.ownerDocument.getSelection();
  selection?.removeAllRanges();
  selection?.addRange(range);
}

/**
 * Double-clicks a text of the design, waits until GrapesJS has made it editable (it does so
 * asynchronously), puts the caret at the end of that text and types, as a person would. The
 * caret is placed in the editable text itself: on a loaded machine GrapesJS may not have moved
 * the focus into the canvas when the double-click returns, and keys typed then went elsewhere.
 * If the typed text still does not show (the canvas was redrawn under the caret), the person
 * clicks and types again, at most three times. Where in the text the words land is not what
 * the tests check: on a loaded machine (one clean-clone CI run in four or so) GrapesJS has
 * moved the caret to the start of the text after it was put at the end.
 */
async function typeInto(page: Page, text: string, typed: string): Promise<void> {
  await canvas(page).getByText(text, { exact: false }).first().dblclick();
  const editable = canvas(page).locator('[contenteditable="true"]', { hasText: text }).first();
  await editable.waitFor();
  await editable.evaluate(caretAtEnd);
  await page.keyboard.type(typed);
  await canvas(page).getByText(typed.trim(), { exact: false }).first().waitFor();
  // Escape ends the edit: the design goes into the form then.
  await page.keyboard.press('Escape');
  await eventually('the edit ended', async () => (await canvas(page).locator('[contenteditable="true"]').count()) === 0);
}

describe('dashboard in Chromium: the visual editor', () => {
  const h = useHarness();
  const b = useBrowser(h);
  const sink = useSmtpSink();

  test('when a send is designed in the editor, previewed for a contact at both widths, saved and sent then the mail holds the edited text', async () => {
    const account = await h.account();
    const { ctx, type } = await newsDesk(h, account, 'Customers', { from_name: 'Acme News' });
    const f = sendingFixtures(h);
    await f.contact(account.user_id, type, 'ann@example.org', { first_name: 'Ann <Lee>' });
    await f.contact(account.user_id, type, 'ben@example.org', {});
    const page = await b.signedIn(account);

    await page.getByRole('navigation').getByRole('link', { name: 'Single sends' }).click();
    await page.getByRole('link', { name: 'New single send' }).first().click();
    // GrapesJS comes from node_modules, under the editor page's own policy.
    await canvas(page).locator('body').waitFor();
    await fillComposer(page, { name: 'Editor news', subject: 'News for ((first_name))', preheader: 'Made in the editor' });
    await page.getByLabel('Customers').first().check();
    await page.getByLabel('Welcome').check();
    await canvas(page).getByText('Welcome aboard').first().waitFor();

    await typeInto(page, 'Thanks for joining us', ' Edited in the visual editor.');
    await eventually('the edit is exported into the form', async () => (await page.locator('#field-template_html').inputValue()).includes('Edited in the visual editor.'));

    // The HTML mode shows the exported, CSS-inlined HTML; back to the canvas, the edit is there.
    await page.getByRole('button', { name: 'HTML', exact: true }).click();
    const html = page.locator('#field-template_html');
    await html.waitFor({ state: 'visible' });
    // The welcome text carries its inlined style (the typed words may have landed before it).
    expect(await html.inputValue()).toMatch(/<p[^>]* style="[^"]+"[^>]*>[^<]*Thanks for joining us\. We are glad/);
    await page.getByRole('button', { name: 'Visual editor' }).click();
    await html.waitFor({ state: 'hidden' });
    await canvas(page).getByText('Edited in the visual editor.').waitFor();

    // The live preview: the first recipient's values, escaped, at desktop and phone width.
    await page.getByText('As ann@example.org gets it.').waitFor();
    await previewFrame(page).getByText('Welcome aboard, Ann <Lee>!').waitFor();
    await previewFrame(page).getByText('Edited in the visual editor.').waitFor();
    // The preview's frame is replaced when the width changes: between the two it has no box.
    const width = async () => (await page.locator('#live-preview iframe.live-frame').boundingBox())?.width ?? 0;
    await eventually('the preview is wide', async () => (await width()) > 500);
    await page.getByRole('button', { name: 'Mobile', exact: true }).click();
    await eventually('the preview is phone wide', async () => Math.round(await width()) === 375);
    await page.getByLabel('Preview for').fill('ben@');
    await page.getByText('As ben@example.org gets it.').waitFor();
    await page.getByRole('button', { name: 'Desktop', exact: true }).click();
    await eventually('the preview is wide again', async () => (await width()) > 500);
    // On a wide screen the preview sits beside the editor rather than after it.
    await page.setViewportSize({ width: 1680, height: 1000 });
    const editorBox = (await page.locator('[data-designer-canvas]').boundingBox()) as Box;
    const previewBox = (await page.locator('#live-preview').boundingBox()) as Box;
    expect(previewBox.x).toBeGreaterThanOrEqual(editorBox.x + editorBox.width);
    expect(previewBox.y).toBeLessThan(editorBox.y + editorBox.height);
    await page.setViewportSize({ width: 1280, height: 800 });

    await page.getByRole('button', { name: 'Save single send' }).click();
    await page.getByText('Draft saved.', { exact: false }).waitFor();
    const stored = await h.runtime.db('single_sends').where({ user_id: account.user_id }).first('template_html', 'template_json');
    expect(stored.template_html).toContain('Edited in the visual editor.');
    // CSS inlined: the welcome text carries its style, and the class rules of the canvas are gone.
    expect(stored.template_html).toMatch(/<p[^>]* style="[^"]+"[^>]*>[^<]*Thanks for joining us\./);
    // The stock design's way to the web view, and its footer line marked for recipients only
    // (the public archive leaves it out), come through the visual editor.
    expect(stored.template_html).toMatch(/<a [^>]*href="\(\(webview_url\)\)"[^>]*>View in your browser<\/a>/);
    expect(stored.template_html).toMatch(/<p [^>]*data-recipient-only[^>]*>You are receiving this email because/);
    const project = JSON.parse(stored.template_json);
    expect(Array.isArray(project.pages)).toBe(true);
    expect(JSON.stringify(project.pages)).toContain('Edited in the visual editor.');

    // Before sending, the page names the placeholder that is empty for some recipients.
    await page.getByRole('link', { name: 'Send now…' }).click();
    await page.getByText('It goes to 2 recipients now.').waitFor();
    await page.getByText('((first_name)) is empty for 50% of recipients (1 of 2).').waitFor();
    await page.getByRole('button', { name: 'Send to 2 recipients' }).click();
    await page.getByText('Sending has started.').waitFor();
    const { worker, close } = testWorker(h, sink.url);
    await worker.runOnce().finally(close);
    const ann = sink.messages.find((m) => m.to[0] === 'ann@example.org');
    expect(ann?.parsed.subject).toBe('News for Ann <Lee>');
    expect(String(ann?.parsed.html)).toContain('Edited in the visual editor.');
    expect(String(ann?.parsed.html)).toContain('Welcome aboard, Ann &lt;Lee&gt;!');
    expect(b.problems).toEqual([]);
  }, 60_000);

  test('when an automation step is edited in the visual editor then the step keeps the edited design and its project', async () => {
    const account = await h.account();
    const ctx = { userId: account.user_id };
    const { services } = h.runtime;
    const sender = await addVerifiedSender(h, account, await berlin(h), { nickname: 'Hello', from_email: 'hello@acme.example' });
    const type = await services.contactTypes.add(ctx, { name: 'Trials' });
    await sendingFixtures(h).contact(account.user_id, type, 'tia@example.org', { first_name: 'Tia' });
    const utr = await services.automations.create(ctx, { automation_type: 1, automation_name: 'Onboarding', automation_for: { id: String(type), table: 'contacts_' }, unsubscribe_group_id: null });
    const welcome = (await services.designTemplates.list()).rows.find((t) => t.template_name === 'Welcome')!;
    const step = await services.automationSchedules.create(ctx, utr, {
      sender_id: sender, subject: 'Hi ((first_name))', waiting_type: 'instantly', waiting_period: 1, template_id: welcome.id, preview_img: welcome.preview_image, template_json: null, template_html: null,
    });
    const page = await b.signedIn(account);
    await page.goto(`/automations/${utr}`);
    await page.getByRole('link', { name: 'Edit' }).click();
    // The step has no HTML of its own: the canvas starts from its design template.
    await canvas(page).getByText('Welcome aboard').first().waitFor();
    await previewFrame(page).getByText('Welcome aboard, Tia!').waitFor();
    await typeInto(page, 'Thanks for joining us', ' A step edited visually.');
    await eventually('the edit is exported into the form', async () => (await page.locator('#field-template_html').inputValue()).includes('A step edited visually.'));
    await previewFrame(page).getByText('A step edited visually.').waitFor();
    await page.getByRole('button', { name: 'Save step' }).click();
    await page.getByText('Step saved.', { exact: false }).waitFor();
    const saved = await services.automationSchedules.get(ctx, step);
    expect(saved.template_html).toContain('A step edited visually.');
    expect(JSON.stringify(JSON.parse(saved.template_json).pages)).toContain('A step edited visually.');
    expect(b.problems).toEqual([]);
  }, 60_000);
});
