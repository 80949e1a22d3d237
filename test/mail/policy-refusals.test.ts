import { insertId, nowValue } from '../../src/db/dialect';
import { useHarness } from '../support/harness';
import { addContactType, sendingFixtures, testWorker, useSendingSetup } from '../support/fixtures';
import { useSmtpSink } from '../support/smtp';

describe('policy refusals', () => {
  // Gmail's answer to mail that is not DMARC-aligned, for every address at gmail.test.
  const sink = useSmtpSink({
    onRecipient: (address) =>
      address.endsWith('@gmail.test')
        ? { code: 550, message: '5.7.26 Unauthenticated email from acme.test is not accepted due to domain\'s DMARC policy.' }
        : address.startsWith('gone')
          ? { code: 550, message: '5.1.1 No such user' }
          : undefined,
  });
  const h = useHarness({ SMTP_URL: () => sink.url });
  const f = sendingFixtures(h);
  const setup = useSendingSetup(h);
  const alice = setup.account;

  beforeAll(async () => {
    await insertId(h.runtime.db, 'notification_recipients', {
      user_id: alice.user_id, email_address: 'boss@example.org', email_key: 'boss@example.org', email_owner: 'Boss', created_at: nowValue(), updated_at: nowValue(),
    });
  });

  const notices = async () =>
    (await h.runtime.db('send_messages').where({ kind: 3, email: 'boss@example.org' }).orderBy('id').select('payload'))
      .map((r) => JSON.parse(String(r.payload)) as { subject: string; text: string })
      .filter((m) => m.subject.startsWith('Single send paused'));

  test('when receivers refuse a send for its DMARC policy then nobody is suppressed, the messages fail as policy, the send pauses and the notification recipients are told once what to fix', async () => {
    const type = await addContactType(h, alice, 'Mixed');
    await f.contacts(alice.user_id, type, 30, 'gmail.test');
    await f.contacts(alice.user_id, type, 170, 'example.org');
    const sendId = await f.singleSend(alice.user_id, { senderId: setup.sender, groupId: setup.group, to: [{ contactType: type }] });
    // One message at a time, so the pause is seen as soon as it is due.
    const { worker, close } = testWorker(h, sink.url, { batchSize: 20, lanes: 1 });
    await worker.runOnce().finally(close);

    const send = await f.send(sendId);
    expect(send.status).toBe(4);
    const refused = await h.runtime.db('send_messages').where({ single_send_id: sendId, failure_reason: 'policy' }).select('state', 'email', 'last_error', 'smtp_code');
    expect(refused.length).toBeGreaterThanOrEqual(1);
    expect(refused.every((r) => Number(r.state) === 3 && String(r.email).endsWith('@gmail.test') && Number(r.smtp_code) === 550 && /5\.7\.26/.test(String(r.last_error)))).toBe(true);
    const [{ n: waiting }] = await h.runtime.db('send_messages').where({ single_send_id: sendId, state: 6 }).count({ n: '*' });
    expect(Number(waiting)).toBeGreaterThan(0);
    expect(Number(send.failed)).toBe(refused.length);

    const suppressed = await h.runtime.db('suppressed_addresses').where({ user_id: alice.user_id }).select('email_key');
    expect(suppressed.map((r) => String(r.email_key)).filter((e) => e.endsWith('@gmail.test'))).toEqual([]);

    const mail = await notices();
    expect(mail).toHaveLength(1);
    expect(mail[0].subject).toBe('Single send paused: November news is refused as unauthenticated');
    expect(mail[0].text).toContain('No address was suppressed');
    expect(mail[0].text).toContain('5.7.26');
    expect(mail[0].text).toContain('DMARC');

    // Resumed, it pauses again at the next refusals, without a second notification.
    await h.api(alice).get(`/single/send/resume?utr=${String(send.utr)}`).expect(200);
    const again = testWorker(h, sink.url, { batchSize: 20, lanes: 1 });
    await again.worker.runOnce().finally(again.close);
    expect(await notices()).toHaveLength(1);
  });

  test('when the service pauses a send for refusals then it keeps why, logs the pause as its own, explains it, and a resume or a pause by hand clears the reason; the API\'s record is unchanged', async () => {
    const carol = await h.account();
    const basics = await f.basics(carol, 'Gmail readers');
    await f.contacts(carol.user_id, basics.type, 20, 'gmail.test');
    const sendId = await f.singleSend(carol.user_id, { senderId: basics.sender, groupId: basics.group, to: [{ contactType: basics.type }] });
    const { worker, close } = testWorker(h, sink.url, { batchSize: 20, lanes: 1 });
    await worker.runOnce().finally(close);
    const { db, services } = h.runtime;
    const send = await f.send(sendId);
    expect(send).toMatchObject({ status: 4, pause_reason: 'policy' });

    const entries = await db('audit_log').where({ user_id: carol.user_id, record_type: 'single_send', record_id: String(send.utr), action: 'single_send.paused' }).select('actor_type', 'actor_id', 'summary');
    expect(entries).toEqual([{ actor_type: 'system', actor_id: null, summary: expect.stringMatching(/^November news: \d+ of \d+ messages refused by receiving mail servers for the sender's authentication or reputation$/) }]);

    const ctx = { userId: carol.user_id };
    const pause = await services.sendInsights.pauseOf(ctx, sendId);
    expect(pause).toMatchObject({ reason: 'policy', domain: null, notified: 0, example: expect.stringMatching(/^550 5\.7\.26 Unauthenticated email/) });
    expect(pause!.failed).toBeGreaterThan(0);
    expect(await services.sendInsights.pauseOf({ userId: carol.user_id + 1000 }, sendId)).toBeUndefined();
    expect((await services.sendInsights.failures(ctx, sendId)).map((r) => r.kind)).toEqual(['policy']);

    const [details] = (await h.api(carol).get(`/single-send/details?utr=${String(send.utr)}`).expect(200)).body.message.singleSend;
    expect(details).toMatchObject({ status: 4 });
    expect(details).not.toHaveProperty('pause_reason');

    await h.api(carol).get(`/single/send/resume?utr=${String(send.utr)}`).expect(200);
    expect(await f.send(sendId)).toMatchObject({ status: 2, pause_reason: null });
    await h.api(carol).get(`/single/send/pause?utr=${String(send.utr)}`).expect(200);
    expect(await services.sendInsights.pauseOf(ctx, sendId)).toMatchObject({ reason: 'by_hand', domain: null, failed: 0, example: null });
  });
});
