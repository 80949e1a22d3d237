import { MESSAGE_STATE, SINGLE_SEND_STATUS } from '../../src/lib/constants';
import { sendingFixtures } from '../support/fixtures';
import { useHarness } from '../support/harness';
import { axeViolations } from './axe';
import { useBrowser } from './browser';

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/i;

/** The audit log read by the owner after a marketer's morning: each entry names the thing by its name and the action by what was done. */
describe('dashboard in Chromium: the audit log says what', () => {
  const h = useHarness();
  const b = useBrowser(h);
  const f = sendingFixtures(h);

  test('when a marketer adds a date field, sends, duplicates and retries the failed then the log names each send and says what was done, with no ids or machine words', async () => {
    const account = await h.account();
    const { db } = h.runtime;
    const { type, sender, group } = await f.basics(account, 'Readers');
    await f.contact(account.user_id, type, 'ann@readers.example');
    const draft = await f.singleSend(account.user_id, { senderId: sender, groupId: group, to: [{ contactType: type }], status: SINGLE_SEND_STATUS.initiate });
    await db('single_sends').where({ id: draft }).update({ single_send_name: 'Spring sale', due_at: null });
    const sent = await f.singleSend(account.user_id, { senderId: sender, groupId: group, to: [{ contactType: type }], status: SINGLE_SEND_STATUS.completed });
    await db('single_sends').where({ id: sent }).update({ single_send_name: 'Autumn letter', triggered: 1, failed: 1 });
    const at = new Date().toISOString();
    await db('send_messages').insert({
      kind: 1, user_id: account.user_id, single_send_id: sent, email: 'full@readers.example', email_key: 'full@readers.example', state: MESSAGE_STATE.failed,
      attempts: 3, last_error: '452 4.2.2 Mailbox full', created_at: at, updated_at: at,
    });
    const utrOf = async (id: number) => String((await db('single_sends').where({ id }).first('utr')).utr);

    const page = await b.page();
    await b.signIn(page, account);

    await page.goto('/custom-fields');
    await page.getByLabel('Name').fill('Signup_date');
    await page.getByLabel('Type').selectOption({ label: 'Date and time' });
    await page.getByRole('button', { name: 'Add field' }).click();
    await page.getByRole('cell', { name: 'Signup_date', exact: true }).waitFor();

    await page.goto(`/single-sends/${await utrOf(draft)}`);
    await page.getByRole('link', { name: 'Send now…' }).click();
    await page.getByRole('button', { name: 'Send to 1 recipient' }).click();
    await page.getByRole('heading', { name: 'Spring sale', level: 1 }).waitFor();

    await page.goto('/single-sends');
    await page.getByRole('row', { name: /Spring sale/ }).getByRole('button', { name: 'Duplicate' }).click();
    await page.getByRole('link', { name: 'Copy of Spring sale' }).waitFor();

    await page.goto(`/single-sends/${await utrOf(sent)}`);
    await page.getByRole('button', { name: 'Retry failed' }).click();
    await page.getByText('1 failed message is being sent again.').waitFor();

    await page.goto('/audit-log');
    const entries = page.getByRole('table', { name: 'Entries of the audit log' });
    const row = (what: string, details: string) => entries.getByRole('row').filter({ has: page.getByRole('cell', { name: what, exact: true }) }).filter({ has: page.getByRole('cell', { name: details, exact: true }) });
    await row('Added a custom field', 'Signup_date (date and time)').waitFor();
    await row('Started a single send', 'Spring sale, sent at once').waitFor();
    await row('Created a single send', 'Copy of Spring sale, copied from “Spring sale”').waitFor();
    await row('Retried the failed messages', 'Autumn letter: 1 message').waitFor();
    const text = await entries.innerText();
    expect(text).not.toMatch(UUID);
    expect(text).not.toContain('datetime-local');
    expect(text).not.toContain('Resumed');
    expect(await axeViolations(page)).toEqual([]);
    expect(b.problems).toEqual([]);
  });
});
