import { addContactType, sendingFixtures } from '../support/fixtures';
import { useHarness } from '../support/harness';
import { axeViolations } from './axe';
import { eventually, useBrowser } from './browser';

const DAY = 24 * 3600_000;

describe('dashboard in Chromium: the Maintenance page', () => {
  const h = useHarness();
  const b = useBrowser(h);
  const f = sendingFixtures(h);

  test('when contacts that unsubscribed long ago are counted on a phone then the count shows first, and the confirm button (by keyboard) deletes them', async () => {
    const account = await h.account();
    const type = await addContactType(h, account, 'Everyone');
    for (const email of ['left@example.org', 'stays@example.org']) await f.contact(account.user_id, type, email);
    await f.globalUnsubscribe(account.user_id, 'left@example.org');
    await h.runtime.db('global_unsubscribes').where({ user_id: account.user_id }).update({ created_at: new Date(Date.now() - 200 * DAY).toISOString() });
    const live = async () => (await h.runtime.db('contacts').where({ user_id: account.user_id }).whereNull('deleted_at').orderBy('email').pluck('email')) as string[];

    const page = await b.page();
    await page.setViewportSize({ width: 390, height: 844 });
    await b.signIn(page, account);
    await page.goto('/maintenance');
    await page.getByRole('heading', { name: 'Maintenance', level: 1 }).waitFor();

    await page.getByLabel('For more than this many days').fill('90');
    await page.getByRole('button', { name: 'Count contacts' }).click();
    await page.getByText('1 contact unsubscribed or bounced more than 90 days ago.').waitFor();
    expect(await live()).toEqual(['left@example.org', 'stays@example.org']);
    // Nothing wider than the phone's screen.
    expect(await page.evaluate(() => (globalThis as unknown as { document: { documentElement: { scrollWidth: number } } }).document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);

    const confirm = page.getByRole('button', { name: 'Delete 1 contact' });
    await confirm.focus();
    await page.keyboard.press('Enter');
    await page.getByText('1 contact deleted.').waitFor();
    await eventually('the page is Maintenance again', async () => new URL(page.url()).pathname === '/maintenance');
    expect(await live()).toEqual(['stays@example.org']);
    expect(b.problems).toEqual([]);
  });

  test('when an owner on a phone looks for the service’s health and backup then Maintenance shows what /healthz and /readyz answer now and opens the operations guide by keyboard', async () => {
    const { account, page } = await b.newcomer();
    await page.setViewportSize({ width: 390, height: 844 });
    await b.signIn(page, account);
    await page.getByRole('button', { name: 'Menu' }).click();
    await page.getByRole('link', { name: 'Maintenance' }).click();
    const health = page.getByRole('region', { name: 'Service health' });
    await health.getByText('Ready: the database answers', { exact: false }).waitFor();
    // The page shows exactly what the probes answer.
    for (const probe of ['/healthz', '/readyz']) {
      const answer = await page.request.get(probe);
      const shown = await health.locator('dd', { has: page.locator('code') }).nth(probe === '/healthz' ? 0 : 1).innerText();
      const [status, ...json] = shown.trim().split(' ');
      expect([Number(status), JSON.parse(json.join(' '))]).toEqual([answer.status(), await answer.json()]);
    }
    const operations = page.getByRole('region', { name: 'Backup, restore and metrics' });
    await operations.getByText('npm run --silent cli -- backup --out campaigns.backup.gz').waitFor();
    await operations.getByText('open to anyone who reaches them', { exact: false }).waitFor();
    expect(await page.evaluate(() => (globalThis as unknown as { document: { documentElement: { scrollWidth: number } } }).document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    expect(await axeViolations(page)).toEqual([]);
    expect(b.problems).toEqual([]);

    await operations.getByRole('link', { name: 'Read the operations guide' }).focus();
    await page.keyboard.press('Enter');
    await page.waitForURL(/\/maintenance\/operations\.md$/);
    await page.getByText('## Backup and restore', { exact: false }).waitFor();
  });

  test('when an owner follows Maintenance to how long old data is kept then Settings says it in plain words, and the configuration\'s names only in the technical note opened by keyboard', async () => {
    const { account, page } = await b.newcomer();
    await b.signIn(page, account);
    await page.goto('/maintenance');
    await page.getByRole('link', { name: 'Settings' }).last().click();
    const retention = page.getByRole('region', { name: 'Data retention' });
    await retention.getByText('Who opened and clicked each message', { exact: true }).waitFor();
    // What a person reads: no configuration variable among the words.
    expect(await retention.innerText()).not.toMatch(/[A-Z]+_[A-Z_]+/);
    // The technical note, opened from the keyboard, names them for whoever runs the service.
    const note = retention.getByText('For whoever runs the service: how to change these times');
    await note.focus();
    await page.keyboard.press('Enter');
    await retention.getByText('RETENTION_EVENTS_DAYS', { exact: true }).waitFor();
    expect(await retention.innerText()).toContain('Who opened and clicked each message: RETENTION_EVENTS_DAYS');
    expect(await axeViolations(page)).toEqual([]);
    expect(b.problems).toEqual([]);
  });
});
