import { insertId, nowValue } from '../../src/db/dialect';
import { useHarness } from '../support/harness';
import { addContactType, sendingFixtures, testWorker, useSendingSetup } from '../support/fixtures';
import { useSmtpSink } from '../support/smtp';

describe('bounce and complaint rate notifications', () => {
  const h = useHarness();
  const f = sendingFixtures(h);
  const setup = useSendingSetup(h);
  const alice = setup.account;
  const sink = useSmtpSink({ onRecipient: (address) => (address.startsWith('refused') ? { code: 550, message: '5.1.1 No such user' } : undefined) });

  beforeAll(async () => {
    await insertId(h.runtime.db, 'notification_recipients', {
      user_id: alice.user_id, email_address: 'boss@example.org', email_key: 'boss@example.org', email_owner: 'Boss', created_at: nowValue(), updated_at: nowValue(),
    });
  });

  /** A completed send to `count` addresses `<prefix>-<i>@example.org`; its ledger ids by address. */
  async function sendTo(prefix: string, count: number, refused = 0) {
    const type = await addContactType(h, alice, prefix);
    for (let i = 0; i < count; i += 1) await f.contact(alice.user_id, type, `${i < refused ? 'refused-' : ''}${prefix}-${i}@example.org`);
    const sendId = await f.singleSend(alice.user_id, { senderId: setup.sender, groupId: setup.group, to: [{ contactType: type }] });
    const { worker, close } = testWorker(h, sink.url);
    await worker.runOnce().finally(close);
    const ledger = await f.ledger(sendId);
    return { sendId, ids: ledger.map((r) => Number(r.id)) };
  }

  /** Subjects of the rate notifications queued for the boss. */
  const alerts = async () =>
    (await h.runtime.db('send_messages').where({ kind: 3, email: 'boss@example.org' }).orderBy('id').select('payload'))
      .map((r) => JSON.parse(String(r.payload)).subject as string)
      .filter((s) => /^(High bounce rate|Spam complaints):/.test(s));

  const bounce = (id: number) => h.runtime.services.feedback.record(id, { event: 'bounce', permanent: true, status: '5.1.1', diagnostic: '550 5.1.1 unknown', source: 'dsn' });

  test('when bounces come back then the notification recipients are told once, when the rate passes 5%', async () => {
    const { ids, sendId } = await sendTo('rate', 20);
    await h.runtime.db('single_sends').where({ id: sendId }).update({ single_send_name: 'Winter sale' });
    await bounce(ids[0]); // 1 of 20 = 5%: not past it
    expect(await alerts()).toEqual([]);
    await bounce(ids[1]); // 10%
    await bounce(ids[2]);
    expect(await alerts()).toEqual(['High bounce rate: Winter sale']);
    const mail = await h.runtime.db('send_messages').where({ kind: 3, email: 'boss@example.org' }).orderBy('id', 'desc').first('payload');
    expect(JSON.parse(String(mail.payload)).text).toContain('has bounced for 2 of 20 recipients (10.0%)');
  });

  test('when spam complaints pass 0.1% of a send then the notification recipients are told once', async () => {
    const { ids, sendId } = await sendTo('complaints', 12);
    const name = String((await f.send(sendId)).single_send_name);
    await h.runtime.services.feedback.record(ids[0], { event: 'complaint', diagnostic: 'abuse report', source: 'arf' });
    await h.runtime.services.feedback.record(ids[1], { event: 'complaint', diagnostic: 'abuse report', source: 'arf' });
    expect((await alerts()).filter((s) => s.startsWith('Spam complaints'))).toEqual([`Spam complaints: ${name}`]);
  });

  test('when a send completes with more than 5% refused at SMTP time then the alert goes out with the completion mail', async () => {
    const before = (await alerts()).length;
    const { sendId } = await sendTo('sync', 10, 1); // 10%
    expect(await f.send(sendId)).toMatchObject({ status: 3, bounces: 1 });
    expect((await alerts()).slice(before)).toEqual([`High bounce rate: ${String((await f.send(sendId)).single_send_name)}`]);
  });
});
