import { emailKey } from '../../src/lib/email-key';
import { MESSAGE_STATE } from '../../src/lib/constants';
import { useHarness } from '../support/harness';
import { addContactType, addSender, berlin, manualClock, sendingFixtures, testWorker, useSendingSetup } from '../support/fixtures';
import { useSmtpSink } from '../support/smtp';

const MAY_HAVE_GONE = 'The relay stopped answering after taking the message; it may have been delivered';

/** The number in an address of the fixtures' contacts (`r7@silent.test` is 7). */
const index = (address: string) => Number(/^r(\d+)@/.exec(address)?.[1] ?? -1);

describe('the instance\'s own SMTP server going silent after taking a message (no relay)', () => {
  /** Addresses at early.test whose connection was dropped once already. */
  const cutOnce = new Set<string>();
  // The instance's server keeps every odd-numbered message to silent.test (and every message to
  // a sender at silent.example) and drops the connection before its final reply; it drops the
  // connection to early.test at the recipient, the first time only, before any of the message.
  const instance = useSmtpSink({
    parse: false,
    dropAfterData: (session) => session.envelope.rcptTo.some(({ address }) =>
      address.endsWith('@silent.example') || (address.endsWith('@silent.test') && index(address) % 2 === 1)),
    dropAtRecipient: (address) => {
      if (!address.endsWith('@early.test') || cutOnce.has(address)) return false;
      cutOnce.add(address);
      return true;
    },
  });
  const h = useHarness({ SMTP_URL: () => instance.url });
  const f = sendingFixtures(h);
  const setup = useSendingSetup(h);
  const alice = setup.account;

  const received = (domain: string) => instance.messages.map((m) => m.to[0]).filter((to) => to.endsWith(`@${domain}`));

  /** A send to `count` new addresses at `domain`. */
  async function sendTo(domain: string, count: number) {
    const type = await addContactType(h, alice, domain);
    await f.contacts(alice.user_id, type, count, domain);
    return f.singleSend(alice.user_id, { senderId: setup.sender, groupId: setup.group, to: [{ contactType: type }] });
  }

  /** One worker pass, at `at` (later passes find every retry due). */
  async function workerPass(at = new Date()) {
    const { worker, close } = testWorker(h, instance.url, { now: manualClock(at).now });
    await worker.runOnce().finally(close);
  }

  test('when the server drops the connection after the message data then each recipient gets at most one message, exactly those fail as unconfirmed, nobody is suppressed and a second pass sends nothing', async () => {
    const sendId = await sendTo('silent.test', 20);
    await workerPass();

    const got = received('silent.test');
    expect(new Set(got).size).toBe(got.length);
    expect(got).toHaveLength(20);
    const dropped = instance.messages.filter((m) => m.dropped && m.to[0].endsWith('@silent.test')).map((m) => m.to[0]).sort();
    expect(dropped).toEqual(got.filter((to) => index(to) % 2 === 1).sort());

    const rows = await f.ledger(sendId);
    const failed = rows.filter((r) => Number(r.state) === MESSAGE_STATE.failed);
    const delivered = rows.filter((r) => Number(r.state) === MESSAGE_STATE.sent);
    expect(failed.map((r) => String(r.email)).sort()).toEqual(dropped);
    expect(failed.every((r) => r.failure_reason === 'unconfirmed' && r.relay_id === null && String(r.last_error).startsWith(MAY_HAVE_GONE))).toBe(true);
    expect(delivered.map((r) => String(r.email)).sort()).toEqual(got.filter((to) => !dropped.includes(to)).sort());
    expect(await f.send(sendId)).toMatchObject({ status: 3, delivered: 10, bounces: 0, failed: 10 });

    // The recipients' report says what happened in plain words.
    const utr = String((await f.send(sendId)).utr);
    const report = (await h.api(alice).get(`/single-send/recipients?utr=${utr}&status=failed`).expect(200)).body.message.recipients;
    expect(report.map((r: { email: string }) => r.email).sort()).toEqual(dropped);
    expect(report.every((r: { reason: string }) => r.reason.startsWith(MAY_HAVE_GONE))).toBe(true);
    expect(await h.runtime.db('suppressed_addresses').where({ user_id: alice.user_id })).toEqual([]);

    // Retrying the failed ones is the account's choice: a later pass, with every retry due, sends nothing.
    await workerPass(new Date(Date.now() + 3_600_000));
    expect(received('silent.test')).toHaveLength(20);
  });

  test('when the server drops the connection before the message was sent then the message is retried and arrives once', async () => {
    const sendId = await sendTo('early.test', 6);
    await workerPass();
    expect(cutOnce.size).toBe(6);
    expect(received('early.test')).toEqual([]);
    const waiting = await f.ledger(sendId);
    expect(waiting.every((r) => Number(r.state) === MESSAGE_STATE.queued && r.failure_reason === null)).toBe(true);

    await workerPass(new Date(Date.now() + 3_600_000));
    expect(received('early.test').sort()).toEqual(Array.from({ length: 6 }, (_, i) => `r${i}@early.test`).sort());
    expect(instance.messages.filter((m) => m.to[0].endsWith('@early.test') && m.dropped)).toEqual([]);
    expect(await f.send(sendId)).toMatchObject({ status: 3, delivered: 6, bounces: 0, failed: 0 });
    expect(await h.runtime.db('suppressed_addresses').where({ user_id: alice.user_id })).toEqual([]);
  });

  test('when the server goes silent after taking a sender verification mail then the mail is not sent again', async () => {
    const address = 'desk@silent.example';
    const id = await addSender(h, alice, await berlin(h), { from_email: address });
    expect(id).toEqual(expect.any(Number));
    expect(instance.messages.filter((m) => m.to.includes(address))).toEqual([expect.objectContaining({ dropped: true })]);
    const rows = await h.runtime.db('send_messages').where({ email_key: emailKey(address) });
    expect(rows).toEqual([expect.objectContaining({ state: MESSAGE_STATE.failed, failure_reason: 'unconfirmed' })]);

    await workerPass(new Date(Date.now() + 3_600_000));
    expect(instance.messages.filter((m) => m.to.includes(address))).toHaveLength(1);
  });
});
