import request from 'supertest';
import { insertId, nowValue } from '../../src/db/dialect';
import { LIQUID_LIMITS } from '../../src/lib/constants';
import { addContactType, addCustomField, addGroup, addSegment, addVerifiedSender, Audience, berlin, manualClock, sendingFixtures, singleSendBody, testWorker } from '../support/fixtures';
import { TestAccount, useHarness } from '../support/harness';
import { useSmtpSink } from '../support/smtp';
import { signIn } from '../support/web';

/** A range larger than a render may build: it fails at once, whoever it is for. */
const HUGE_RANGE = '{% for i in (1..100000000) %}{{ i }}{% endfor %}';
/** Loops that would run for minutes: only the time a render may take stops them. */
const ENDLESS_LOOPS =
  `{% assign s = "${Array(60).fill('x').join(',')}" | split: "," %}` +
  '{% for a in s %}{% for b in s %}{% for c in s %}{% for d in s %}<p>{{ a }}{{ b }}{{ c }}{{ d }}</p>{% endfor %}{% endfor %}{% endfor %}{% endfor %}';

describe('templates whose Liquid does not render', () => {
  const sink = useSmtpSink({ emptyBeforeEach: true });
  const h = useHarness({ SMTP_URL: () => sink.url });
  const f = sendingFixtures(h);
  // Ahead of the real clock, so sends made "now" are due; moved to make retries due.
  const clock = manualClock(new Date(Date.now() + 3_600_000));
  let alice: TestAccount;
  let audience: Audience;
  let sender: string;

  beforeAll(async () => {
    alice = await h.account();
    const place = await berlin(h);
    const senderId = await addVerifiedSender(h, alice, place);
    sender = String((await h.runtime.db('senders').where({ id: senderId }).first('from_email')).from_email);
    const contactTypeId = await addContactType(h, alice);
    audience = { senderId, groupId: await addGroup(h, alice), contactTypeId, segmentId: await addSegment(h, alice, contactTypeId) };
    await addCustomField(h, alice, 'stars', 'text');
    await insertId(h.runtime.db, 'notification_recipients', {
      user_id: alice.user_id, email_address: 'boss@example.org', email_key: 'boss@example.org', email_owner: 'Boss', created_at: nowValue(), updated_at: nowValue(),
    });
  });

  const campaignMail = () => sink.messages.filter((m) => m.from === sender);
  const notices = async () =>
    (await h.runtime.db('send_messages').where({ kind: 3, user_id: alice.user_id, email: 'boss@example.org' }).orderBy('id').select('payload'))
      .map((r) => JSON.parse(String(r.payload)) as { subject: string; text: string })
      .filter((m) => m.subject.startsWith('Single send paused'));

  async function create(name: string, overrides: Record<string, unknown>, contactTypeId = audience.contactTypeId): Promise<string> {
    const body = singleSendBody(audience, { single_send_name: name, recipient_id: [`contacts_${contactTypeId}`], template_id: 1, ...overrides });
    return (await h.api(alice).post('/single/send/create').send(body).expect(200)).body.message.utr as string;
  }

  async function run(options: Parameters<typeof testWorker>[2] = {}): Promise<void> {
    const { worker, close } = testWorker(h, sink.url, { now: clock.now, ...options });
    await worker.runOnce().finally(close);
  }

  /**
   * Runs the worker until the send is no longer sending: a message whose render ran out of time
   * while the machine was busy is retried later (the clock moves to its retry), not failed.
   */
  async function settle(utr: string): Promise<void> {
    await run();
    for (let i = 0; i < 6 && (await details(utr)).status === 2; i += 1) {
      clock.advance(24 * 3_600_000);
      await run();
    }
  }

  const details = async (utr: string) => (await h.api(alice).get(`/single-send/details?utr=${utr}`).expect(200)).body.message.singleSend[0];
  const recipients = async (utr: string, status: string) =>
    (await h.api(alice).get(`/single-send/recipients?utr=${utr}&status=${status}`).expect(200)).body.message.recipients as Array<{ email: string; reason: string | null }>;

  test('when one recipient\'s values make the body run past its bounds then that message is not sent but failed as template_error, the others go, and a retry after the fix sends it', async () => {
    const type = await addContactType(h, alice, 'Stars');
    for (let i = 0; i < 30; i += 1) await f.contact(alice.user_id, type, `fan${i}@example.org`, { first_name: `Fan${i}`, custom_fields: { stars: '3' } });
    await f.contact(alice.user_id, type, 'greedy@example.org', { first_name: 'Greedy', custom_fields: { stars: '900000000' } });
    const utr = await create('Stars', { template_html: '<html><body><p>Hi {{ first_name }}</p><p>{% for i in (1..stars) %}*{% endfor %}</p></body></html>' }, type);

    await settle(utr);
    // 1 of 31 is not more than 5% of 20 or more: the send goes on and completes.
    expect(await details(utr)).toMatchObject({ status: 3, delivered: 30, failed: 1, template_errors: 0 });
    expect(campaignMail()).toHaveLength(30);
    expect(campaignMail().find((m) => m.to[0] === 'greedy@example.org')).toBeUndefined();
    expect(campaignMail().find((m) => m.to[0] === 'fan7@example.org')!.parsed.html).toContain('<p>Hi Fan7</p><p>***</p>');
    expect(await recipients(utr, 'failed')).toMatchObject([{
      email: 'greedy@example.org',
      reason: `template_error: The body could not be rendered: line 1: its Liquid built more than the ${LIQUID_LIMITS.memory} characters a render may build (a range or a filter too large).`,
    }]);
    expect(await notices()).toEqual([]);

    // The value is fixed; "retry failed" sends the message.
    await h.runtime.db('contacts').where({ email: 'greedy@example.org' }).update({ custom_fields: JSON.stringify({ stars: '5' }) });
    sink.messages.splice(0);
    expect((await h.api(alice).get(`/single/send/retry-failed?utr=${utr}`).expect(200)).body.message).toEqual({ retried: 1 });
    await settle(utr);
    expect(campaignMail().map((m) => m.to[0])).toEqual(['greedy@example.org']);
    expect(campaignMail()[0].parsed.html).toContain('<p>*****</p>');
    expect(await details(utr)).toMatchObject({ status: 3, delivered: 31, failed: 0 });
  });

  test('when the body fails for everyone then nobody gets a blank message, the send pauses after its first failures and the notification names the error', async () => {
    const type = await addContactType(h, alice, 'Everyone');
    await f.contacts(alice.user_id, type, 60, 'example.net');
    const utr = await create('Broken loop', { subject: 'Hello {{ first_name }}', template_html: `<html><body><p>Hi</p>${HUGE_RANGE}</body></html>` }, type);

    await run({ batchSize: 20, lanes: 1 });
    expect(campaignMail()).toEqual([]);
    const send = await details(utr);
    expect(send.status).toBe(4);
    expect(send.delivered).toBe(0);
    expect(send.failed).toBeGreaterThanOrEqual(1);
    // The rest wait for a fix: parked with the send, not failed.
    const failed = await recipients(utr, 'failed');
    expect(failed).toHaveLength(send.failed);
    expect(failed.length).toBeLessThan(60);
    expect(new Set(failed.map((r) => r.reason))).toEqual(new Set([`template_error: The body could not be rendered: line 1: its Liquid built more than the ${LIQUID_LIMITS.memory} characters a render may build (a range or a filter too large).`]));
    const [{ n: parked }] = await h.runtime.db('send_messages').where({ state: 6 }).whereIn('single_send_id', h.runtime.db('single_sends').where({ utr }).select('id')).count({ n: '*' });
    expect(Number(parked)).toBe(60 - failed.length);

    const mail = await notices();
    expect(mail).toHaveLength(1);
    expect(mail[0].subject).toBe('Single send paused: Broken loop has a template that does not render');
    expect(mail[0].text).toContain(`could not be rendered, so they were not sent`);
    expect(mail[0].text).toContain('The error: The body could not be rendered: line 1: its Liquid built more than');
    // The send's page is told why (its reason kept on the send), and the failures say they were not tried again.
    const row = await h.runtime.db('single_sends').where({ utr }).first('id', 'pause_reason');
    expect(row.pause_reason).toBe('template_error');
    expect(await h.runtime.services.sendInsights.pauseOf({ userId: alice.user_id }, Number(row.id))).toMatchObject({
      reason: 'template_error', failed: send.failed, example: expect.stringMatching(/^The body could not be rendered: line 1: /),
    });
    expect((await h.runtime.services.sendInsights.failures({ userId: alice.user_id }, Number(row.id))).map((r) => r.kind)).toEqual(['template_error']);
    const page = (await (await signIn(h, alice)).get(`/single-sends/${utr}`).expect(200)).text;
    expect(page).toContain('Why this send is paused');
    expect(page).toContain(`${send.failed} of the ${send.failed} messages sent so far could not be made from the template, so they were not sent`);
    expect(page).toContain('The message could not be made from the template, so it was not sent.');
    expect(page).not.toContain('tried again several times');
  });

  test('when loops would run for minutes then the time bound stops them and the message fails as template_error instead of going out empty', async () => {
    const type = await addContactType(h, alice, 'One');
    await f.contact(alice.user_id, type, 'ann@example.org', { first_name: 'Ann' });
    const utr = await create('Endless', { subject: `Hi ${ENDLESS_LOOPS}` }, type);
    await settle(utr);
    expect(campaignMail()).toEqual([]);
    const failed = await recipients(utr, 'failed');
    expect(failed.map((r) => r.email)).toEqual(['ann@example.org']);
    // On a machine so busy that the render got less than half its time as CPU, it was retried
    // until its attempts ran out instead (the template was not to blame for the time).
    const timedOut = `template_error: The subject could not be rendered: line 1: its Liquid took longer than the ${LIQUID_LIMITS.messageRenderMs} ms a message may take.`;
    for (const r of failed) expect([timedOut, 'The subject could not be rendered: the server was too busy to render it in time.']).toContain(r.reason);
  });

  test('when an automation step\'s body does not render then its message is not sent and the step\'s recipients report says template_error', async () => {
    const sender = await f.sender(alice.user_id);
    const group = await f.group(alice.user_id);
    const type = await addContactType(h, alice, 'Journey');
    await f.contact(alice.user_id, type, 'walker@example.org', { first_name: 'Walker' });
    const automation = await f.automation(alice.user_id, { type: 'custom', contactType: type, groupId: group, status: 1 });
    const step = await f.schedule(alice.user_id, automation, { senderId: sender, subject: 'Step one', waitingPeriod: 0, waitingType: 'instantly', html: `<p>Hi</p>${HUGE_RANGE}` });
    const { utr } = await h.runtime.db('automation_schedules').where({ id: step }).first('utr');
    const stepSender = String((await h.runtime.db('senders').where({ id: sender }).first('from_email')).from_email);
    await run();
    await run();
    expect(sink.messages.filter((m) => m.from === stepSender)).toEqual([]);
    const listed = (await h.api(alice).get(`/automations/schedule/recipients?utr=${utr}`).expect(200)).body.message.recipients;
    expect(listed).toMatchObject([{
      email: 'walker@example.org',
      status: 'failed',
      reason: `template_error: The body could not be rendered: line 1: its Liquid built more than the ${LIQUID_LIMITS.memory} characters a render may build (a range or a filter too large).`,
    }]);
  });

  test('when a test send or a preview has a template that does not render then it answers 422 naming the field and the error, and nothing is mailed', async () => {
    const utr = await create('Tested', { template_html: `<p>Hi</p>${HUGE_RANGE}`, schedule_type: 1, schedule_date: '2099-01-01', schedule_time: '09:00' });
    expect((await h.api(alice).post('/single/send/test').send({ utr, email_address: 'me@example.org' }).expect(422)).body).toEqual({
      status: 'failed',
      errors: { template_html: [`The body could not be rendered: line 1: its Liquid built more than the ${LIQUID_LIMITS.memory} characters a render may build (a range or a filter too large).`] },
    });
    expect(await h.runtime.db('send_messages').where({ user_id: alice.user_id, email: 'me@example.org' }).first()).toBeUndefined();

    const web = await signIn(h, alice);
    const page = await web.get(`/single-sends/${utr}/preview`).expect(422);
    expect(page.text).toContain('The body could not be rendered');
  });

  test('when a template has more Liquid than a template may have then saving it is refused with 422 saying the bound', async () => {
    const body = singleSendBody(audience, { template_id: 1, single_send_name: 'Too much' });
    const many = '<p>{{ first_name }}</p>'.repeat(LIQUID_LIMITS.tags + 1);
    expect((await h.api(alice).post('/single/send/create').send({ ...body, template_html: many }).expect(422)).body).toEqual({
      status: 'failed',
      errors: { template_html: [`The template html has a Liquid error: it has more than ${LIQUID_LIMITS.tags} Liquid tags and outputs.`] },
    });
  });

  test('when five previews of the heaviest template run at once then /healthz keeps answering while they run', async () => {
    const utr = await create('Heavy', {
      subject: `Hi ${ENDLESS_LOOPS}`,
      template_html: `<html><body>${ENDLESS_LOOPS}</body></html>`,
      schedule_type: 1,
      schedule_date: '2099-01-01',
      schedule_time: '09:00',
    });
    const web = await signIn(h, alice);
    await web.get(`/single-sends/${utr}/preview`);
    let previewing = true;
    const previews = Promise.all(Array.from({ length: 5 }, () => web.get(`/single-sends/${utr}/preview`).then((res) => res.status))).finally(() => {
      previewing = false;
    });
    // A monitor asks /healthz again and again and counts the answers that came back while the
    // previews were still running: a render that held the event loop would leave none. (How
    // long each answer takes is a figure for a benchmark, not an assertion here.)
    let answeredMeanwhile = 0;
    while (previewing) {
      await request(h.runtime.app).get('/healthz').expect(200);
      if (previewing) answeredMeanwhile += 1;
    }
    const statuses = await previews;
    expect(answeredMeanwhile).toBeGreaterThanOrEqual(2);
    // Each preview says the template does not render within its request's budget.
    expect(statuses).toEqual([422, 422, 422, 422, 422]);
  });
});
