import request from 'supertest';
import { addContactType, sendingFixtures, testWorker } from '../support/fixtures';
import { useHarness } from '../support/harness';
import { useSmtpSink } from '../support/smtp';
import { useTwoAccounts } from '../support/web';

const DAY = 24 * 3600_000;
const CHROME = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/140.0 Safari/537.36';

describe('dashboard maintenance and retention settings', () => {
  const h = useHarness({ RETENTION_EVENTS_DAYS: '90', RETENTION_MESSAGES_DAYS: '0' });
  const t = useTwoAccounts(h);
  const f = sendingFixtures(h);
  const sink = useSmtpSink();
  const ago = (days: number) => new Date(Date.now() - days * DAY).toISOString();
  const liveEmails = async (userId: number) => (await h.runtime.db('contacts').where({ user_id: userId }).whereNull('deleted_at').orderBy('email').pluck('email')) as string[];

  test('when the settings page is opened then it says how long each kind of old data is kept', async () => {
    const page = (await t.web.get('/settings').expect(200)).text;
    expect(page).toContain('Data retention');
    expect(page).toMatch(/Who opened and clicked each message<\/dt>\s*<dd><strong>Deleted after 90 days<\/strong>/);
    expect(page).toMatch(/finished single send, and the service&#39;s own mail<\/dt>\s*<dd><strong>Kept for ever<\/strong>/);
    expect(page).toMatch(/Webhook deliveries that arrived or were given up<\/dt>\s*<dd><strong>Deleted after 30 days<\/strong>/);
    // The configuration's names are only in the technical note, not among the words of each row.
    const [words, note] = page.slice(page.indexOf('id="retention"')).split('<details class="technical">');
    expect(words).not.toMatch(/RETENTION_/);
    expect(note).toContain('<code>RETENTION_EVENTS_DAYS</code>');
  });

  test('when contacts unsubscribed or bounced long ago are counted then the page shows how many, and only the confirmation deletes them, in this account only', async () => {
    const type = await addContactType(h, t.alice, 'Lapsed');
    for (const email of ['old-unsub@example.org', 'old-bounce@example.org', 'new-unsub@example.org', 'old-complaint@example.org', 'fine@example.org']) {
      await f.contact(t.alice.user_id, type, email);
    }
    const bobType = await addContactType(h, t.bob, 'Bob');
    await f.contact(t.bob.user_id, bobType, 'old-unsub@example.org');
    await f.globalUnsubscribe(t.alice.user_id, 'old-unsub@example.org');
    await f.globalUnsubscribe(t.alice.user_id, 'new-unsub@example.org');
    await f.globalUnsubscribe(t.bob.user_id, 'old-unsub@example.org');
    const suppress = (email: string, category: string) =>
      ({ user_id: t.alice.user_id, email_key: email, email_address: email, reason: '550 gone', category, source: 'smtp', created_at: ago(400) });
    await h.runtime.db('suppressed_addresses').insert([suppress('old-bounce@example.org', 'hard_bounce'), suppress('old-complaint@example.org', 'complaint')]);
    await h.runtime.db('global_unsubscribes').whereIn('email_key', ['old-unsub@example.org']).update({ created_at: ago(400) });
    await h.runtime.db('global_unsubscribes').where({ email_key: 'new-unsub@example.org' }).update({ created_at: ago(10) });

    const page = (await t.web.get('/maintenance').expect(200)).text;
    expect(page).toContain('<form method="get" action="/maintenance/contacts">');
    const counted = (await t.web.get('/maintenance/contacts?days=365').expect(200)).text;
    expect(counted).toContain('<strong>2 contacts</strong> unsubscribed or bounced more than 365 days ago.');
    expect(counted).toContain('<input type="hidden" name="days" value="365">');
    expect(counted).toContain('Delete 2 contacts</button>');
    // Counting deleted nothing; a post without the form's token is refused.
    expect(await liveEmails(t.alice.user_id)).toHaveLength(5);
    await t.web.postWithoutToken('/maintenance/contacts', { days: '365' }).expect(403);
    expect(await liveEmails(t.alice.user_id)).toHaveLength(5);

    const done = await t.web.post('/maintenance/contacts', { days: '365' }).expect(303);
    expect(done.headers.location).toBe('/maintenance');
    expect((await t.web.get('/maintenance').expect(200)).text).toContain('2 contacts deleted.');
    expect(await liveEmails(t.alice.user_id)).toEqual(['fine@example.org', 'new-unsub@example.org', 'old-complaint@example.org']);
    expect(await liveEmails(t.bob.user_id)).toEqual(['old-unsub@example.org']);
    // Their opt-outs stay, so they are never mailed again.
    expect(await h.runtime.db('global_unsubscribes').where({ user_id: t.alice.user_id, email_key: 'old-unsub@example.org' }).first('id')).toBeDefined();
    expect((await t.web.get('/maintenance/contacts?days=365').expect(200)).text).toContain('Nothing to delete.');

    for (const days of ['abc', '0', '1.5', '']) {
      const refused = await t.web.get(`/maintenance/contacts?days=${days}`).expect(422);
      expect(refused.text).toContain('Enter a whole number of days from 1 to 36500.');
    }
    expect((await t.web.post('/maintenance/contacts', { days: '-3' }).expect(422)).text).toContain('Enter a whole number of days');
  });

  test('when opens and clicks before a date are counted and deleted then the people lists empty and the totals stay', async () => {
    const type = await addContactType(h, t.alice, 'Readers');
    await f.contact(t.alice.user_id, type, 'reader@example.org');
    const sender = await f.sender(t.alice.user_id);
    const group = await f.group(t.alice.user_id);
    const sendId = await f.singleSend(t.alice.user_id, { senderId: sender, groupId: group, to: [{ contactType: type }] });
    const { worker, close } = testWorker(h, sink.url);
    await worker.runOnce().finally(close);
    const [message] = await f.ledger(sendId);
    await request(h.runtime.app).get(`/open/${f.token(Number(message.id))}.gif`).set('User-Agent', CHROME).expect(200);
    const totals = async () => (await f.send(sendId)) as Record<string, unknown>;
    const before = await totals();
    expect(before).toMatchObject({ unique_opens: 1, total_opens: 1 });

    const yesterday = new Date(Date.now() - DAY).toISOString().slice(0, 10);
    const tomorrow = new Date(Date.now() + DAY).toISOString().slice(0, 10);
    expect((await t.web.get(`/maintenance/engagement?before=${yesterday}`).expect(200)).text).toContain('Nothing to delete.');
    const counted = (await t.web.get(`/maintenance/engagement?before=${tomorrow}`).expect(200)).text;
    expect(counted).toContain(`<strong>1 message</strong> sent before ${tomorrow} has opens or clicks.`);
    const done = await t.web.post('/maintenance/engagement', { before: tomorrow }).expect(303);
    expect(done.headers.location).toBe('/maintenance');
    expect((await t.web.get('/maintenance').expect(200)).text).toContain('The opens and clicks of 1 message were deleted.');
    const opened = await h.runtime.services.engagement.people({ userId: t.alice.user_id }, { singleSendId: sendId }, 'opened', { page: 1, perPage: 10 });
    expect(opened.rows).toEqual([]);
    expect(await totals()).toEqual(before);

    for (const value of ['2026-02-30', 'soon', new Date(Date.now() + 3 * DAY).toISOString().slice(0, 10)]) {
      const refused = await t.web.get(`/maintenance/engagement?before=${value}`).expect(422);
      expect(refused.text).toMatch(/Enter a date (such as 2026-01-31|no later than tomorrow)\./);
    }
  });
});
