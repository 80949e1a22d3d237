import type { Page } from 'playwright-core';
import { MESSAGE_STATE, SINGLE_SEND_STATUS } from '../../src/lib/constants';
import { sendingFixtures } from '../support/fixtures';
import { useHarness } from '../support/harness';
import { axeViolations } from './axe';
import { useBrowser } from './browser';

interface PageGlobals {
  document: { documentElement: { scrollWidth: number } };
}

/**
 * Every download of the dashboard, clicked as a person clicks it: each gives a file (and leaves
 * the page where it was), never the file's text in place of the dashboard. And a sent send's
 * page lists who it went to, filtered by what happened, so "who failed and why" needs no file.
 */
describe('dashboard in Chromium: downloads and a send’s recipients', () => {
  const h = useHarness();
  const b = useBrowser(h);
  const f = sendingFixtures(h);

  /** Clicks the link or button and answers the downloaded file's name and text; the page stays the one it was. */
  async function download(page: Page, click: () => Promise<void>): Promise<{ name: string; text: string }> {
    const before = page.url();
    const [file] = await Promise.all([page.waitForEvent('download'), click()]);
    const stream = await file.createReadStream();
    const chunks: Buffer[] = [];
    for await (const chunk of stream) chunks.push(chunk as Buffer);
    expect(page.url()).toBe(before);
    await page.locator('main h1').first().waitFor();
    return { name: file.suggestedFilename(), text: Buffer.concat(chunks).toString('utf8') };
  }

  test('when a marketer clicks each download then each gives its file, and the send’s page shows the failed with their reason, page by page', async () => {
    const account = await h.account();
    const { db } = h.runtime;
    const { type, sender, group } = await f.basics(account, 'Readers');
    await f.contact(account.user_id, type, 'ann@readers.example');
    await f.globalUnsubscribe(account.user_id, 'left@readers.example');
    await f.groupUnsubscribe(account.user_id, group, 'quiet@readers.example');
    const sendId = await f.singleSend(account.user_id, { senderId: sender, groupId: group, to: [{ contactType: type }], status: SINGLE_SEND_STATUS.completed });
    const { utr } = await db('single_sends').where({ id: sendId }).first('utr');
    const at = new Date().toISOString();
    const message = (email: string, state: number, over: Record<string, unknown> = {}) => ({
      kind: 1, user_id: account.user_id, single_send_id: sendId, email, email_key: email, state, attempts: 1, created_at: at, updated_at: at, ...over,
    });
    const delivered = Array.from({ length: 30 }, (_, i) => message(`reader${String(i).padStart(2, '0')}@readers.example`, MESSAGE_STATE.sent, { sent_at: at }));
    await db('send_messages').insert([
      message('full@readers.example', MESSAGE_STATE.failed, { last_error: '452 4.2.2 Mailbox full' }),
      message('gone@readers.example', MESSAGE_STATE.bounced, { last_error: '550 5.1.1 <gone@readers.example>: user unknown' }),
      ...delivered,
    ]);
    await db('single_sends').where({ id: sendId }).update({ triggered: 32, delivered: 30, failed: 1, bounces: 1, sent_at: at });

    const page = await b.page();
    await page.setViewportSize({ width: 390, height: 844 });
    await b.signIn(page, account);
    await page.goto(`/single-sends/${utr}`);

    // Who failed and why, on the page: the filter of the API's report, and pages of 25.
    const recipients = page.getByRole('region', { name: 'Recipients', exact: true });
    await recipients.getByText('1–25 of 32').waitFor();
    await recipients.getByLabel('Show').selectOption({ label: 'Failed' });
    await recipients.getByRole('button', { name: 'Show' }).click();
    await recipients.getByRole('row', { name: 'full@readers.example Failed 452 4.2.2 Mailbox full' }).waitFor();
    await recipients.getByText('1–1 of 1').waitFor();
    expect(await recipients.getByRole('row').count()).toBe(2);
    await recipients.getByLabel('Show').selectOption({ label: 'Everyone' });
    await recipients.getByRole('button', { name: 'Show' }).click();
    await recipients.getByText('1–25 of 32').waitFor();
    await recipients.getByRole('link', { name: 'Next' }).click();
    await recipients.getByText('26–32 of 32').waitFor();
    expect(await page.evaluate(() => (globalThis as unknown as PageGlobals).document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    expect(await axeViolations(page)).toEqual([]);

    // The send's three downloads.
    await page.goto(`/single-sends/${utr}`);
    const all = await download(page, () => page.getByRole('link', { name: 'Download recipients (CSV)' }).click());
    expect(all.name).toBe(`recipients-${utr}.csv`);
    expect(all.text.split('\n').filter(Boolean)).toHaveLength(33);
    const failed = await download(page, () => page.getByRole('link', { name: 'Download the failed (CSV)' }).click());
    expect(failed.name).toBe(`recipients-${utr}-failed.csv`);
    expect(failed.text).toContain('full@readers.example,failed,452 4.2.2 Mailbox full');
    const bounced = await download(page, () => page.getByRole('link', { name: 'Download the bounced (CSV)' }).click());
    expect(bounced.text).toContain('gone@readers.example,bounced');

    // Who opened (the engagement page's download).
    await page.goto(`/single-sends/${utr}/people?kind=opened`);
    expect((await download(page, () => page.getByRole('link', { name: 'Download CSV' }).click())).name).toBe(`opened-${utr}.csv`);

    // The audience's downloads.
    await page.goto('/contacts');
    expect((await download(page, () => page.getByRole('link', { name: 'Export CSV' }).click())).text).toContain('ann@readers.example');
    await page.goto('/global-unsubscribes');
    expect((await download(page, () => page.getByRole('link', { name: 'Export CSV' }).click())).text).toContain('left@readers.example');
    await page.goto(`/unsubscribe-groups/${group}`);
    expect((await download(page, () => page.getByRole('link', { name: 'Export CSV' }).click())).text).toContain('quiet@readers.example');
    await page.goto('/contacts/import');
    expect((await download(page, () => page.getByRole('link', { name: 'Download a sample file' }).click())).name).toBe('contacts-sample.csv');
    await page.goto('/contacts/privacy');
    await page.getByLabel('Email address').first().fill('ann@readers.example');
    const privacy = await download(page, () => page.getByRole('button', { name: 'Download (JSON)' }).click());
    expect(JSON.parse(privacy.text)).toMatchObject({ email: 'ann@readers.example' });

    // An import's skipped rows.
    await page.goto('/contacts/import');
    await page.getByLabel('Import into contact type').selectOption({ label: 'Readers' });
    await page.getByLabel('CSV file').setInputFiles({ name: 'two.csv', mimeType: 'text/csv', buffer: Buffer.from('email\nbea@readers.example\nnot an address\n') });
    await page.getByRole('button', { name: 'Upload and choose columns' }).click();
    await page.getByRole('heading', { name: 'Columns of two.csv' }).waitFor();
    await page.getByRole('button', { name: 'Import', exact: true }).click();
    await page.locator('#import-progress').getByText('Done', { exact: true }).waitFor();
    const skipped = await download(page, () => page.getByRole('link', { name: 'Download all 1 skipped rows (CSV)' }).click());
    expect(skipped.text).toContain('not an address');
    expect(b.problems).toEqual([]);
  });
});
