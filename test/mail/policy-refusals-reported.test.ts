import { insertId, nowValue } from '../../src/db/dialect';
import { BounceListener, startBounceListener } from '../../src/workers/bounce-listener';
import { useHarness, TestAccount } from '../support/harness';
import { addContactType, header, sendingFixtures, testWorker } from '../support/fixtures';
import { bounceFixture, deliverRaw } from '../support/bounce-fixtures';
import { useSmtpSink } from '../support/smtp';

/**
 * A smarthost (or the receiving side) that accepted a message and then reports in a DSN that it
 * was refused for the sender's authentication: the same refusal the worker meets at SMTP time,
 * read the same way (see policy-refusals.test.ts).
 */
describe('policy refusals reported after delivery', () => {
  const h = useHarness({ BOUNCE_DOMAIN: 'bounces.campaigns.test', BOUNCE_SMTP_PORT: '0' });
  const f = sendingFixtures(h);
  // The smarthost takes every message but one address's, which it asks to try later: the send
  // keeps a queued message, so it is still running when the report comes back.
  const relay = useSmtpSink({ onRecipient: (address) => (address.startsWith('later') ? { code: 451, message: '4.3.0 Try again later' } : undefined) });
  let alice: TestAccount;
  let sender: number;
  let group: number;
  let listener: BounceListener;

  beforeAll(async () => {
    alice = await h.account();
    sender = await f.sender(alice.user_id);
    group = await f.group(alice.user_id);
    await insertId(h.runtime.db, 'notification_recipients', {
      user_id: alice.user_id, email_address: 'boss@example.org', email_key: 'boss@example.org', email_owner: 'Boss', created_at: nowValue(), updated_at: nowValue(),
    });
    listener = await startBounceListener({ config: { ...h.runtime.config, bounceMaxBytes: 64 * 1024 }, feedback: h.runtime.services.feedback, logger: h.runtime.logger });
  });
  afterAll(() => listener.close());

  const pauseNotices = async (sendName: string) =>
    (await h.runtime.db('send_messages').where({ kind: 3, email: 'boss@example.org' }).orderBy('id').select('payload'))
      .map((r) => JSON.parse(String(r.payload)) as { subject: string; text: string })
      .filter((m) => m.subject === `Single send paused: ${sendName} is refused as unauthenticated`);
  const suppressed = async () => (await h.runtime.services.suppressions.list({ userId: alice.user_id })).rows.map((r) => r.email_address);

  test.each([
    ['postfix-gmail-unauthenticated.eml', 'reader@gmail.test', '5.7.26'],
    ['outlook-unauthenticated.eml', 'reader@outlook.test', '5.7.515'],
  ])('when %s reports a refusal for the sender\'s authentication then nobody is suppressed, the message fails as policy and the running send pauses with one notice', async (fixture, email, status) => {
    const type = await addContactType(h, alice, `Readers of ${fixture}`);
    await f.contact(alice.user_id, type, email);
    await f.contact(alice.user_id, type, `later-${email}`);
    const sendId = await f.singleSend(alice.user_id, { senderId: sender, groupId: group, to: [{ contactType: type }] });
    await h.runtime.db('single_sends').where({ id: sendId }).update({ single_send_name: `News ${status}` });
    relay.messages.splice(0);
    const { worker, close } = testWorker(h, relay.url);
    await worker.runOnce().finally(close);
    expect(await f.send(sendId)).toMatchObject({ status: 2, delivered: 1, failed: 0 });

    const m = relay.messages.find((r) => r.to[0] === email)!;
    const message = { verp: m.from, token: header(m.raw, 'X-Campaign-Message')!, recipient: email, messageId: header(m.raw, 'Message-ID')! };
    await deliverRaw(listener.port, message.verp, bounceFixture(fixture, message));

    expect(await suppressed()).not.toContain(email);
    const ledger = await f.ledger(sendId);
    const refused = ledger.find((r) => r.email === email)!;
    expect(refused).toMatchObject({ state: 3, failure_reason: 'policy' });
    expect(String(refused.last_error)).toContain(status);
    // The message that was waiting for its retry waits for the send to be resumed.
    expect(ledger.find((r) => r.email === `later-${email}`)).toMatchObject({ state: 6 });
    expect(await f.send(sendId)).toMatchObject({ status: 4, delivered: 0, bounces: 0, failed: 1 });
    const notices = await pauseNotices(`News ${status}`);
    expect(notices).toHaveLength(1);
    expect(notices[0].text).toContain('No address was suppressed');
    expect(notices[0].text).toContain(status);

    // The address is mailed by the next send: the refusal was never the address's.
    const next = await f.singleSend(alice.user_id, { senderId: sender, groupId: group, to: [{ contactType: type }] });
    relay.messages.splice(0);
    const again = testWorker(h, relay.url);
    await again.worker.runOnce().finally(again.close);
    expect(relay.messages.map((r) => r.to[0])).toContain(email);
    expect(await f.send(next)).toMatchObject({ delivered: 1 });
  });

  test('when a DSN reports that an address does not exist then it is still a bounce that suppresses it', async () => {
    const type = await addContactType(h, alice, 'Gone');
    await f.contact(alice.user_id, type, 'gone@example.org');
    const sendId = await f.singleSend(alice.user_id, { senderId: sender, groupId: group, to: [{ contactType: type }] });
    relay.messages.splice(0);
    const { worker, close } = testWorker(h, relay.url);
    await worker.runOnce().finally(close);
    const m = relay.messages.find((r) => r.to[0] === 'gone@example.org')!;
    await deliverRaw(listener.port, m.from, bounceFixture('postfix-user-unknown.eml', { verp: m.from, token: header(m.raw, 'X-Campaign-Message')!, recipient: 'gone@example.org' }));
    expect(await suppressed()).toContain('gone@example.org');
    expect(await f.send(sendId)).toMatchObject({ delivered: 0, bounces: 1, failed: 0 });
  });
});
