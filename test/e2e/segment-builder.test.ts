import { insertId } from '../../src/db/dialect';
import { MESSAGE_KIND, MESSAGE_STATE, SINGLE_SEND_STATUS } from '../../src/lib/constants';
import { sendingFixtures } from '../support/fixtures';
import { useHarness } from '../support/harness';
import { axeViolations } from './axe';
import { eventually, useBrowser } from './browser';

const DAY = 86_400_000;

/** The segment builder by keyboard on a phone: relative dates and engagement, rolling forward as the (test's) clock moves. */
describe('dashboard in Chromium: a "last 30 days and opened" segment', () => {
  const h = useHarness();
  const b = useBrowser(h);
  afterAll(() => h.runtime.services.segments.setClock(() => new Date()));

  test('when a segment is built by keyboard at 390 px then every key counts, and it rolls forward as the clock moves and opens arrive', async () => {
    const account = await h.account();
    const { services } = h.runtime;
    const fx = sendingFixtures(h);
    const start = Date.now();
    let now = start;
    services.segments.setClock(() => new Date(now));
    const type = await services.contactTypes.add({ userId: account.user_id }, { name: 'Readers' });
    const ago = (days: number) => new Date(start - days * DAY).toISOString();
    const people = { ada: 5, bea: 28, cy: 20, dan: 60 } as const;
    const contactIds: Record<string, number> = {};
    for (const [name, days] of Object.entries(people)) {
      contactIds[name] = await fx.contact(account.user_id, type, `${name}@example.com`, { first_name: name, created_at: ago(days), updated_at: ago(days) });
    }
    const send = await fx.singleSend(account.user_id, { senderId: await fx.sender(account.user_id), groupId: await fx.group(account.user_id), to: [{ contactType: type }], status: SINGLE_SEND_STATUS.completed });
    const messageIds: Record<string, number> = {};
    for (const name of Object.keys(people)) {
      messageIds[name] = await insertId(h.runtime.db, 'send_messages', {
        user_id: account.user_id,
        kind: MESSAGE_KIND.single,
        single_send_id: send,
        contact_id: contactIds[name],
        email: `${name}@example.com`,
        email_key: `${name}@example.com`,
        state: MESSAGE_STATE.sent,
        sent_at: ago(1),
        created_at: ago(1),
        updated_at: ago(1),
      });
    }
    for (const name of ['ada', 'bea', 'dan']) await services.tracking.recordOpen(fx.token(messageIds[name]));

    const page = await b.page();
    await page.setViewportSize({ width: 390, height: 844 });
    await b.signIn(page, account);
    await page.goto('/segments/new');
    const activeId = () => page.evaluate('document.activeElement && document.activeElement.id');
    const count = page.locator('#segment-count');

    await page.getByLabel('Name', { exact: true }).focus();
    await page.keyboard.type('Recent openers');
    await page.keyboard.press('Tab');
    await page.keyboard.type('Readers');
    await count.getByText('4 contacts match now').waitFor();
    await page.getByRole('button', { name: 'Add condition' }).focus();
    await page.keyboard.press('Enter');
    await eventually('the new condition takes the focus', async () => (await activeId()) === 'cond-0-field');
    // The fields by their words, never the columns' names.
    const fieldWords = (await page.locator('#cond-0-field option').allTextContents()).map((t) => t.trim());
    expect(fieldWords).toEqual(expect.arrayContaining(['First name', 'State, province or region', 'Date added', 'Postal code']));
    for (const machine of ['first_name', 'state_province_region', 'created_at', 'postal_code', 'address_line1']) expect(fieldWords).not.toContain(machine);
    // Type-ahead on the field, then the operator, then the days: nothing is swapped under the keys.
    await page.keyboard.type('Date added');
    await page.keyboard.press('Tab');
    await page.keyboard.type('in the');
    await page.keyboard.press('Tab');
    expect(await activeId()).toBe('cond-0-value');
    await page.keyboard.type('30');
    await count.getByText('3 contacts match now').waitFor();
    expect(await page.locator('#cond-0-field').inputValue()).toBe('created_at');
    expect(await page.locator('#cond-0-operator').inputValue()).toBe('in the last');

    await page.getByRole('button', { name: 'Add condition' }).focus();
    await page.keyboard.press('Enter');
    await eventually('the second condition takes the focus', async () => (await activeId()) === 'cond-1-field');
    await page.keyboard.type('Email activity');
    await page.keyboard.press('Tab');
    expect(await page.locator('#cond-1-operator').inputValue()).toBe('opened');
    // Two quick ArrowDowns move two options, then two ArrowUps come back to "opened".
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('ArrowDown');
    expect(await page.locator('#cond-1-operator').inputValue()).toBe('clicked');
    await page.keyboard.press('ArrowUp');
    await page.keyboard.press('ArrowUp');
    expect(await page.locator('#cond-1-operator').inputValue()).toBe('opened');
    await page.keyboard.press('Tab');
    await page.keyboard.type('November');
    expect(await page.getByLabel('Send of condition 2').inputValue()).not.toBe('any');
    await count.getByText('2 contacts match now').waitFor();
    expect(await axeViolations(page)).toEqual([]);

    await page.getByRole('button', { name: 'Save segment' }).focus();
    await page.keyboard.press('Enter');
    await page.getByText('Segment saved; its matching contacts are its recipients.').waitFor();
    const recipients = page.locator('#segment-recipient-list');
    const listed = async () => (await recipients.locator('tbody tr td:nth-child(3)').allTextContents()).sort();
    expect(await listed()).toEqual(['ada@example.com', 'bea@example.com']);
    await page.getByText('Date added in the last 30 days and opened “November news').waitFor();

    // Three days on, Bea joined 31 days ago: she leaves at the next reading.
    now = start + 3 * DAY;
    await page.reload();
    await recipients.waitFor();
    expect(await listed()).toEqual(['ada@example.com']);

    // Cy opens: the open itself brings her in.
    await services.tracking.recordOpen(fx.token(messageIds.cy));
    const stored = await h.runtime.db('segment_recipients').where({ user_id: account.user_id }).pluck('email');
    expect(stored.sort()).toEqual(['ada@example.com', 'cy@example.com']);
    await page.reload();
    await recipients.waitFor();
    expect(await listed()).toEqual(['ada@example.com', 'cy@example.com']);
    expect(await axeViolations(page)).toEqual([]);
    const { scroll, inner } = await page.evaluate(() => {
      const w = globalThis as unknown as { document: { documentElement: { scrollWidth: number } }; innerWidth: number };
      return { scroll: w.document.documentElement.scrollWidth, inner: w.innerWidth };
    });
    expect(scroll).toBeLessThanOrEqual(inner);
    expect(b.problems).toEqual([]);
  });
});
