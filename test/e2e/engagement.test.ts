import request from 'supertest';
import { addContactType, sendingFixtures, testWorker } from '../support/fixtures';
import { useHarness } from '../support/harness';
import { useSmtpSink } from '../support/smtp';
import { useBrowser } from './browser';

const CHROME = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/140.0 Safari/537.36';

describe('dashboard in Chromium: engagement of a sent single send', () => {
  const h = useHarness();
  const b = useBrowser(h);
  const f = sendingFixtures(h);
  const sink = useSmtpSink();

  test('when recipients clicked then the send page shows the rates and the per-link table, and who clicked', async () => {
    const account = await h.account();
    const userId = account.user_id;
    const senderId = await f.sender(userId);
    const groupId = await f.group(userId);
    const type = await addContactType(h, account, 'Customers');
    await f.contact(userId, type, 'ann@example.org', { first_name: 'Ann' });
    await f.contact(userId, type, 'ben@example.org', { first_name: 'Ben' });
    const sendId = await f.singleSend(userId, {
      senderId, groupId, to: [{ contactType: type }],
      html: '<html><body><a href="https://shop.example/sale">Sale</a> <a href="https://blog.example/news">News</a></body></html>',
    });
    const { worker, close } = testWorker(h, sink.url);
    await worker.runOnce().finally(close);
    const ann = String(sink.messages.find((m) => m.to[0] === 'ann@example.org')!.parsed.html);
    const firstLink = new URL(/href="([^"]+\/c\/[^"]+\/1)"/.exec(ann)![1]).pathname;
    await request(h.runtime.app).get(firstLink).set('User-Agent', CHROME).expect(302);
    await request(h.runtime.app).get(firstLink).set('User-Agent', CHROME).expect(302);

    const page = await b.signedIn(account);
    await page.getByRole('navigation').getByRole('link', { name: 'Single sends' }).click();
    await page.getByRole('link', { name: 'November news' }).click();
    const engagement = page.locator('section.engagement');
    await engagement.getByRole('heading', { name: 'Engagement' }).waitFor();
    await engagement.locator('.stat', { hasText: 'Click rate' }).getByText('50.0%').waitFor();
    await engagement.locator('.stat', { hasText: 'Open rate' }).getByText('50.0%').waitFor();
    await engagement.locator('.stat', { hasText: 'Opens (excluding automated)' }).getByText('50.0%').waitFor();
    const rows = engagement.locator('table.links-table tbody tr');
    expect(await rows.count()).toBe(2);
    expect((await rows.nth(0).locator('td').allTextContents()).map((s) => s.trim())).toEqual(['https://shop.example/sale', '1', '2']);
    expect((await rows.nth(1).locator('td').allTextContents()).map((s) => s.trim())).toEqual(['https://blog.example/news', '0', '0']);
    await engagement.locator('svg[aria-label="Unique clicks per hour"]').waitFor();

    await engagement.getByRole('link', { name: 'Who clicked' }).click();
    await page.getByRole('heading', { name: /Who clicked/ }).waitFor();
    await page.getByRole('cell', { name: 'ann@example.org' }).waitFor();
    expect(await page.getByRole('cell', { name: 'ben@example.org' }).count()).toBe(0);
    await page.getByRole('link', { name: 'Download CSV' }).waitFor();
    expect(await f.send(sendId)).toMatchObject({ unique_clicks: 1, total_clicks: 2 });
    expect(b.problems).toEqual([]);
  });
});
