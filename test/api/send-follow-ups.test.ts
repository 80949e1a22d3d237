import request from 'supertest';
import { FEEDBACK_EVENT } from '../../src/lib/constants';
import { useHarness, TestAccount } from '../support/harness';
import { addContactType, addSegment, manualClock, sendingFixtures, singleSendBody, testWorker, UUID } from '../support/fixtures';
import { useSmtpSink } from '../support/smtp';

/** A mail client a person reads with, and the bare agent of Apple's privacy proxy (an automated open). */
const PERSON = 'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_0) AppleWebKit/605.1.15 (KHTML, like Gecko) Thunderbird/128.0';
const MACHINE = 'Mozilla/5.0';

describe('a single send\'s recipients: the report, a retry of the failed and a resend to non-openers', () => {
  // Full mailboxes answer 451 until `mailboxesFull` is false; `gone@` does not exist.
  let mailboxesFull = true;
  const sink = useSmtpSink({
    onRecipient: (address) => {
      if (address.startsWith('gone@')) return { code: 550, message: '5.1.1 No such user' };
      if (address.startsWith('full') && mailboxesFull) return { code: 451, message: '4.2.2 Mailbox full, try again later' };
      return undefined;
    },
    emptyBeforeEach: true,
  });
  // Two attempts, a minute apart: the test moves its clock instead of waiting.
  const h = useHarness({ SMTP_URL: () => sink.url, SEND_MAX_ATTEMPTS: '2', SEND_RETRY_SECONDS: '60' });
  const f = sendingFixtures(h);
  let alice: TestAccount;
  // Ahead of the real clock, so rows queued "now" by a request are due for the test's worker.
  const clock = manualClock(new Date(Date.now() + 3_600_000));

  // Each test its own account: its addresses, bounces and unsubscribes are its own.
  beforeEach(async () => {
    alice = await h.account();
  });

  /** A send to `emails` created through the API (due at once); answers its utr and id. */
  async function sendTo(emails: string[], name: string): Promise<{ utr: string; id: number }> {
    const { sender, group } = await f.basics(alice);
    const type = await addContactType(h, alice, name);
    for (const email of emails) await f.contact(alice.user_id, type, email, { first_name: email.split('@')[0] });
    const body = singleSendBody({ senderId: sender, groupId: group, contactTypeId: type, segmentId: 0 }, {
      single_send_name: name,
      recipient_id: [`contacts_${type}`],
      template_html: '<html><body><p>Hi ((first_name))</p><p><a href="https://acme.test/offer">Offer</a></p></body></html>',
    });
    const utr = (await h.api(alice).post('/single/send/create').send(body).expect(200)).body.message.utr as string;
    const row = await h.runtime.db('single_sends').where({ utr }).first('id');
    return { utr, id: Number(row.id) };
  }

  async function run(): Promise<void> {
    const { worker, close } = testWorker(h, sink.url, { now: clock.now });
    await worker.runOnce().finally(close);
  }

  const details = async (utr: string) => (await h.api(alice).get(`/single-send/details?utr=${utr}`).expect(200)).body.message.singleSend[0];
  const recipients = async (utr: string, query = '') => {
    const res = await h.api(alice).get(`/single-send/recipients?utr=${utr}${query}`);
    if (res.status !== 200) throw new Error(`${res.status} ${res.text}`);
    return res.body.message;
  };
  const tokenOf = async (sendId: number, email: string) => f.token(Number((await f.ledger(sendId)).find((r) => r.email === email)!.id));
  const open = async (token: string, agent: string) => request(h.runtime.app).get(`/open/${token}.gif`).set('User-Agent', agent).expect(200);

  test('when a mailbox answered 451 until the attempts ran out then retry-failed queues it again, the send runs and completes with it delivered', async () => {
    mailboxesFull = true;
    const send = await sendTo(['fine@example.org', 'full@example.org', 'full-left@example.org', 'gone@example.org'], 'Retried');

    await run();
    expect(await details(send.utr)).toMatchObject({ status: 2, delivered: 1, bounces: 1, failed: 0 });
    expect((await recipients(send.utr, '&status=queued')).recipients.map((r: { email: string }) => r.email).sort()).toEqual(['full-left@example.org', 'full@example.org']);
    clock.advance(60_000);
    await run();
    // SEND_MAX_ATTEMPTS is 2: given up at the second refusal.
    expect(await details(send.utr)).toMatchObject({ status: 3, triggered: 4, delivered: 1, bounces: 1, failed: 2 });
    const failed = (await recipients(send.utr, '&status=failed')).recipients;
    expect(failed).toHaveLength(2);
    expect(failed[0]).toMatchObject({ status: 'failed', bounce_class: 'mailbox_full', sent_at: null, opened_at: null, clicked_at: null });
    expect(failed[0].reason).toBe('451 4.2.2 Mailbox full, try again later');

    // One of them unsubscribes meanwhile: it stays failed. The bounced address is never retried.
    await h.api(alice).post('/global-unsubscribes/save').send({ email_address: 'full-left@example.org' }).expect(200);
    mailboxesFull = false;
    sink.messages.splice(0);
    expect((await h.api(alice).get(`/single/send/retry-failed?utr=${send.utr}`).expect(200)).body).toEqual({ status: 'success', message: { retried: 1 } });
    expect(await details(send.utr)).toMatchObject({ status: 2, failed: 1 });
    expect((await recipients(send.utr, '&status=queued')).recipients).toMatchObject([{ email: 'full@example.org', status: 'queued', reason: null, bounce_class: null }]);

    await run();
    expect(sink.messages.map((m) => m.to[0])).toEqual(['full@example.org']);
    expect(await details(send.utr)).toMatchObject({ status: 3, triggered: 4, delivered: 2, bounces: 1, failed: 1 });
    const statuses = Object.fromEntries((await recipients(send.utr)).recipients.map((r: { email: string; status: string }) => [r.email, r.status]));
    expect(statuses).toEqual({ 'fine@example.org': 'delivered', 'full@example.org': 'delivered', 'full-left@example.org': 'failed', 'gone@example.org': 'bounced' });

    // Nothing failed is left that may be retried: nothing changes.
    expect((await h.api(alice).get(`/single/send/retry-failed?utr=${send.utr}`).expect(200)).body.message).toEqual({ retried: 0 });
    expect(await details(send.utr)).toMatchObject({ status: 3, failed: 1 });
  });

  test('when retry-failed names a draft, another account\'s send or nothing then it answers 409, 404 and 422', async () => {
    const draft = await sendTo(['someone@example.org'], 'Not yet');
    await h.runtime.db('single_sends').where({ id: draft.id }).update({ status: 0, due_at: null });
    expect((await h.api(alice).get(`/single/send/retry-failed?utr=${draft.utr}`).expect(409)).body).toEqual({
      status: 'failed',
      errors: 'Only a sending or sent single send can retry its failed messages.',
    });
    const bob = await h.account();
    expect((await h.api(bob).get(`/single/send/retry-failed?utr=${draft.utr}`).expect(404)).body).toEqual({ status: 'failed', errors: 'Record Not Found' });
    expect((await h.api(alice).get('/single/send/retry-failed').expect(422)).body).toEqual({ status: 'failed', errors: { utr: ['The utr field is required.'] } });
  });

  test('when a send is resent to non-openers then exactly those delivered and not opened by a person get it, less the unsubscribed and bounced since', async () => {
    mailboxesFull = false;
    const people = ['reader@example.org', 'scanned@example.org', 'left@example.org', 'quiet@example.org', 'bounced-later@example.org', 'soft@example.org', 'gone@example.org'];
    const original = await sendTo(people, 'Original');
    // Not completed yet: nothing to resend.
    expect((await h.api(alice).post('/single/send/resend').send({ utr: original.utr }).expect(409)).body).toEqual({
      status: 'failed',
      errors: 'Only a sent single send can be resent to those who did not open it; wait until it has completed.',
    });
    await run();
    expect(await details(original.utr)).toMatchObject({ status: 3, delivered: 6, bounces: 1 });

    // A person reads one; a privacy proxy fetches another's pixel (an automated open);
    // one unsubscribes through the link in the mail; one bounces later.
    await open(await tokenOf(original.id, 'reader@example.org'), PERSON);
    await open(await tokenOf(original.id, 'scanned@example.org'), MACHINE);
    await request(h.runtime.app).post(`/unsubscribe/${await tokenOf(original.id, 'left@example.org')}`).type('form').send('List-Unsubscribe=One-Click').expect(200);
    const later = (await f.ledger(original.id)).find((r) => r.email === 'bounced-later@example.org')!;
    await h.runtime.services.feedback.record(Number(later.id), { event: FEEDBACK_EVENT.bounce, permanent: false, status: '4.2.2', diagnostic: 'Mailbox full', source: 'test' });
    expect(await details(original.utr)).toMatchObject({ unique_opens: 2, unsubscribes: 1 });
    // Another send since: one soft bounce (not enough to suppress the address) keeps it out too.
    const type = await addContactType(h, alice, 'Segment base');
    const segment = await addSegment(h, alice, type, 'Soft', [{ email: 'soft@example.org' }]);
    const other = await sendTo([], 'Elsewhere');
    await h.runtime.db('single_sends').where({ id: other.id }).update({ recipient_id: JSON.stringify([{ id: String(segment), table: 'segments_' }]) });
    await run();
    const softRow = (await f.ledger(other.id)).find((r) => r.email === 'soft@example.org')!;
    clock.advance(60_000);
    await h.runtime.services.feedback.record(Number(softRow.id), { event: FEEDBACK_EVENT.bounce, permanent: false, status: '4.2.2', diagnostic: 'Mailbox full', source: 'test' }, clock.now());
    expect(await h.runtime.db('suppressed_addresses').where({ user_id: alice.user_id, email_key: 'soft@example.org' }).first()).toBeUndefined();

    // A draft first: same content and settings, another subject.
    const draftUtr = (await h.api(alice).post('/single/send/resend').send({ utr: original.utr, subject: 'In case you missed it' }).expect(200)).body.message.utr;
    expect(draftUtr).toMatch(UUID);
    const draft = await details(draftUtr);
    const first = await details(original.utr);
    expect(draft).toMatchObject({
      status: 0, resend_of: original.utr, subject: 'In case you missed it', single_send_name: 'Resend of Original',
      template_html: first.template_html, sender_id: first.sender_id, unsubscribe_group_id: first.unsubscribe_group_id,
      recipient_id: first.recipient_id, triggered: 0, schedule_type: 0,
    });
    expect(first.resend_of).toBeNull();

    // One resend per send: another is refused while the draft lives, and allowed once it is deleted.
    expect((await h.api(alice).post('/single/send/resend').send({ utr: original.utr, schedule_type: 0 }).expect(409)).body).toEqual({
      status: 'failed',
      errors: `This single send already has a resend to those who did not open it: ${draftUtr}.`,
    });
    await h.api(alice).delete(`/single/send/delete?utr=${draftUtr}`).expect(200);

    // Sent at once: the quiet one and the one only a machine opened.
    sink.messages.splice(0);
    const nowUtr = (await h.api(alice).post('/single/send/resend').send({ utr: original.utr, schedule_type: 0 }).expect(200)).body.message.utr;
    expect(await details(nowUtr)).toMatchObject({ status: 1, subject: first.subject, resend_of: original.utr });
    await run();
    expect(sink.messages.map((m) => m.to[0]).sort()).toEqual(['quiet@example.org', 'scanned@example.org']);
    expect(await details(nowUtr)).toMatchObject({ status: 3, triggered: 2, delivered: 2 });
    // The deleted draft never started: nothing of it was sent.
    const resend = await h.runtime.db('single_sends').where({ utr: draftUtr }).first('id');
    expect(await f.ledger(Number(resend.id))).toEqual([]);
  });

  test('when five resends of one send are asked for at once then one is made and the others answer 409 naming it', async () => {
    mailboxesFull = false;
    const original = await sendTo(['one@example.org', 'two@example.org'], 'Asked five times');
    await run();
    const answers = await Promise.all(Array.from({ length: 5 }, () => h.api(alice).post('/single/send/resend').send({ utr: original.utr, schedule_type: 0 })));
    expect(answers.map((res) => res.status).sort()).toEqual([200, 409, 409, 409, 409]);
    const utr = answers.find((res) => res.status === 200)!.body.message.utr as string;
    for (const res of answers.filter((r) => r.status === 409)) {
      expect(res.body).toEqual({ status: 'failed', errors: `This single send already has a resend to those who did not open it: ${utr}.` });
    }
    expect(await h.runtime.db('single_sends').where({ user_id: alice.user_id, resend_of: original.id }).pluck('utr')).toEqual([utr]);

    // It goes out once: each non-opener gets one copy.
    sink.messages.splice(0);
    await run();
    expect(sink.messages.map((m) => m.to[0]).sort()).toEqual(['one@example.org', 'two@example.org']);
    expect((await h.api(alice).post('/single/send/resend').send({ utr: original.utr }).expect(409)).body.errors).toContain(utr);
  });

  test('when a resend is scheduled then its date is checked as a send\'s: required, well-formed and not past', async () => {
    mailboxesFull = false;
    const original = await sendTo(['one@example.org'], 'Scheduled resend');
    await run();
    const resend = (body: Record<string, unknown>) => h.api(alice).post('/single/send/resend').send({ utr: original.utr, ...body });
    expect((await resend({ schedule_type: 1 }).expect(422)).body).toEqual({
      status: 'failed',
      errors: { schedule_date: ['The schedule date field is required when schedule type is 1.'], schedule_time: ['The schedule time field is required when schedule type is 1.'] },
    });
    expect((await resend({ schedule_type: 1, schedule_date: '2020-01-01', schedule_time: '09:00' }).expect(422)).body).toEqual({
      status: 'failed',
      errors: { schedule_date: ['The schedule date must be a date after now.'] },
    });
    expect((await resend({ schedule_type: 3, subject: ['a'] }).expect(422)).body.errors).toMatchObject({ subject: expect.any(Array), schedule_type: expect.any(Array) });
    const utr = (await resend({ schedule_type: 1, schedule_date: '2099-05-01', schedule_time: '09:30' }).expect(200)).body.message.utr;
    expect(await details(utr)).toMatchObject({ status: 1, schedule_type: 1, schedule_date: '2099-05-01', schedule_time: '09:30:00' });
    expect((await h.api(alice).post('/single/send/resend').send({ utr: '00000000-0000-4000-8000-000000000000' }).expect(404)).body).toEqual({ status: 'failed', errors: 'Record Not Found' });
  });

  test('when the recipients report is asked for then each status filters, pages and downloads as CSV', async () => {
    mailboxesFull = false;
    const send = await sendTo(['opener@example.org', 'clicker@example.org', 'plain@example.org', 'gone@example.org', 'quitter@example.org', 'angry@example.org'], 'Reported');
    await run();
    await open(await tokenOf(send.id, 'opener@example.org'), PERSON);
    await request(h.runtime.app).get(`/c/${await tokenOf(send.id, 'clicker@example.org')}/1`).set('User-Agent', PERSON).expect(302);
    await request(h.runtime.app).post(`/unsubscribe/${await tokenOf(send.id, 'quitter@example.org')}`).type('form').send('List-Unsubscribe=One-Click').expect(200);
    const angry = (await f.ledger(send.id)).find((r) => r.email === 'angry@example.org')!;
    await h.runtime.services.feedback.record(Number(angry.id), { event: FEEDBACK_EVENT.complaint, diagnostic: 'abuse report', source: 'test' });

    const all = (await recipients(send.utr)).recipients;
    expect(Object.fromEntries(all.map((r: { email: string; status: string }) => [r.email, r.status]))).toEqual({
      'opener@example.org': 'opened',
      'clicker@example.org': 'clicked',
      'plain@example.org': 'delivered',
      'gone@example.org': 'bounced',
      'quitter@example.org': 'unsubscribed',
      'angry@example.org': 'complained',
    });
    const opener = all.find((r: { email: string }) => r.email === 'opener@example.org');
    const contact = await h.runtime.db('contacts').where({ user_id: alice.user_id, email: 'opener@example.org' }).first('id');
    expect(opener).toEqual({ contact_id: Number(contact.id), email: 'opener@example.org', status: 'opened', reason: null, bounce_class: null, sent_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/), opened_at: expect.stringMatching(/^\d{4}-/), clicked_at: null });
    expect((await recipients(send.utr, '&status=bounced')).recipients).toMatchObject([{ email: 'gone@example.org', reason: expect.stringContaining('No such user'), bounce_class: 'hard', sent_at: null }]);
    expect((await recipients(send.utr, '&bounce_class=hard')).recipients.map((r: { email: string }) => r.email)).toEqual(['gone@example.org']);
    expect((await recipients(send.utr, '&bounce_class=policy&status=bounced')).recipients).toEqual([]);
    expect((await recipients(send.utr, '&status=clicked')).recipients.map((r: { email: string }) => r.email)).toEqual(['clicker@example.org']);
    expect((await recipients(send.utr, '&status=skipped')).recipients).toEqual([]);

    const page = await recipients(send.utr, '&page=2&per_page=4');
    expect(page.pagination).toEqual({ page: 2, per_page: 4, total: 6 });
    expect(page.recipients).toHaveLength(2);
    expect((await recipients(send.utr, '&status=delivered&page=1')).pagination).toEqual({ page: 1, per_page: 100, total: 1 });

    const csv = await h.api(alice).get(`/single-send/recipients?utr=${send.utr}&format=csv&status=opened`).expect(200);
    expect(csv.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(csv.headers['content-disposition']).toContain(`single-send-recipients-${send.utr}.csv`);
    const lines = csv.text.trim().split('\r\n');
    expect(lines[0]).toBe('contact_id,email,status,reason,bounce_class,sent_at,opened_at,clicked_at');
    expect(lines).toHaveLength(2);
    expect(lines[1]).toMatch(new RegExp(`^${contact.id},opener@example.org,opened,,,\\d{4}-\\d{2}-\\d{2} [\\d:]{8},\\d{4}-\\d{2}-\\d{2} [\\d:]{8},$`));

    expect((await h.api(alice).get(`/single-send/recipients?utr=${send.utr}&status=lost&format=xml&bounce_class=firm`).expect(422)).body).toEqual({
      status: 'failed',
      errors: { status: ['The selected status is invalid.'], bounce_class: ['The selected bounce class is invalid.'], format: ['The selected format is invalid.'] },
    });
    const bob = await h.account();
    expect((await h.api(bob).get(`/single-send/recipients?utr=${send.utr}`).expect(404)).body).toEqual({ status: 'failed', errors: 'Record Not Found' });
    expect((await h.api(bob).get(`/single-send/recipients?utr=${send.utr}&format=csv`).expect(404)).body).toEqual({ status: 'failed', errors: 'Record Not Found' });
  });

  test('when an automation email went out then its recipients report lists them the same way', async () => {
    mailboxesFull = false;
    const { sender, group, type } = await f.basics(alice, 'Journey');
    await f.contact(alice.user_id, type, 'walker@example.org');
    await f.contact(alice.user_id, type, 'gone@example.org');
    const automation = await f.automation(alice.user_id, { type: 'custom', contactType: type, groupId: group, status: 1 });
    const step = await f.schedule(alice.user_id, automation, { senderId: sender, subject: 'Step one', waitingPeriod: 0, waitingType: 'instantly' });
    const { utr } = await h.runtime.db('automation_schedules').where({ id: step }).first('utr');
    await run();
    const listed = (await h.api(alice).get(`/automations/schedule/recipients?utr=${utr}`).expect(200)).body.message.recipients;
    expect(Object.fromEntries(listed.map((r: { email: string; status: string }) => [r.email, r.status]))).toEqual({ 'walker@example.org': 'delivered', 'gone@example.org': 'bounced' });
    const csv = await h.api(alice).get(`/automations/schedule/recipients?utr=${utr}&format=csv&status=bounced`).expect(200);
    expect(csv.text.trim().split('\r\n')).toHaveLength(2);
    expect((await h.api(alice).get(`/automations/schedule/recipients?utr=${utr}&status=opened&page=1&per_page=10`).expect(200)).body.message).toEqual({
      recipients: [],
      pagination: { page: 1, per_page: 10, total: 0 },
    });
    const bob = await h.account();
    await h.api(bob).get(`/automations/schedule/recipients?utr=${utr}`).expect(404);
  });
});
