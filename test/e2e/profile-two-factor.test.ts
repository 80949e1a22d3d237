import { generate } from 'otplib';
import { useHarness } from '../support/harness';
import { useSmtpSink } from '../support/smtp';
import { addMember } from '../support/team';
import { PASSWORD } from '../support/web';
import { axeViolations } from './axe';
import { useBrowser } from './browser';

const PHONE = { width: 390, height: 844 };

/** An editor (who cannot open Settings) finds two-step sign-in on their profile, turns it on, and keeps the recovery codes by copying and downloading them. */
describe('dashboard in Chromium: two-step sign-in from Your profile', () => {
  const sink = useSmtpSink();
  const h = useHarness({ SMTP_URL: () => sink.url });
  const b = useBrowser(h);

  test('when an editor opens Your profile on a phone then two-step sign-in is there, and the recovery codes can be copied and downloaded as a text file', async () => {
    const account = await h.account();
    const editor = await addMember(h, sink, account, 'editor');
    const page = await b.page();
    await page.setViewportSize(PHONE);
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: b.baseUrl });
    await page.goto('/login');
    await page.getByLabel('Email').fill(editor.email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${b.baseUrl}/`);

    await page.getByRole('button', { name: 'Menu' }).click();
    await page.getByRole('link', { name: 'Your profile' }).click();
    const section = page.getByRole('region', { name: 'Two-step sign-in' });
    await section.getByText('It is off.', { exact: false }).waitFor();
    expect(await axeViolations(page)).toEqual([]);
    await section.getByRole('link', { name: 'Set up two-step sign-in' }).click();
    await page.getByRole('button', { name: 'Set up two-step sign-in' }).focus();
    await page.keyboard.press('Enter');
    const secret = (await page.locator('code.secret-key').innerText()).trim();
    await page.getByLabel('The six-digit code your app shows now').fill(await generate({ secret }));
    await page.getByLabel('The six-digit code your app shows now').press('Enter');
    await page.getByRole('heading', { name: 'Your recovery codes' }).waitFor();
    const codes = (await page.locator('ul.recovery-codes li').allInnerTexts()).map((c) => c.trim());
    expect(codes).toHaveLength(10);
    expect(await axeViolations(page)).toEqual([]);
    expect(await page.evaluate('document.documentElement.scrollWidth <= window.innerWidth')).toBe(true);

    // Copy, by keyboard.
    await page.getByRole('button', { name: 'Copy the codes' }).focus();
    await page.keyboard.press('Enter');
    await page.getByRole('status').getByText('Copied.').waitFor();
    expect(String(await page.evaluate('navigator.clipboard.readText()')).split('\n').map((c) => c.trim()).filter(Boolean)).toEqual(codes);

    // Download.
    const [file] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: 'Download them (.txt)' }).click()]);
    expect(file.suggestedFilename()).toBe('recovery-codes.txt');
    const chunks: Buffer[] = [];
    for await (const chunk of await file.createReadStream()) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    for (const code of codes) expect(text).toContain(code);
    expect(text).toContain(editor.email);

    // Back on the profile, it says it is on.
    await page.getByRole('link', { name: 'Done' }).click();
    await page.getByRole('region', { name: 'Two-step sign-in' }).getByText('It is on', { exact: false }).waitFor();
    await page.getByText('You have 10 unused recovery codes left.', { exact: false }).waitFor();
    expect(b.problems).toEqual([]);
  });
});
