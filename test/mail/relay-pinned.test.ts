import { useHarness, TestAccount } from '../support/harness';
import { addContactType, manualClock, sendingFixtures, testWorker } from '../support/fixtures';
import { useSmtpSink } from '../support/smtp';

describe('a send pinned to a relay', () => {
  const instance = useSmtpSink();
  const primary = useSmtpSink();
  const pinnedSink = useSmtpSink();
  const h = useHarness({ SMTP_URL: () => instance.url, RELAY_ALLOW_PRIVATE: '1' });
  const f = sendingFixtures(h);
  let alice: TestAccount;
  let sender: number;
  let group: number;

  beforeAll(async () => {
    alice = await h.account();
    sender = await f.sender(alice.user_id);
    group = await f.group(alice.user_id);
  });

  const sendTo = async (email: string, relayId: number | null) => {
    const type = await addContactType(h, alice, `For ${email}`);
    await f.contact(alice.user_id, type, email);
    const sendId = await f.singleSend(alice.user_id, { senderId: sender, groupId: group, to: [{ contactType: type }] });
    await h.runtime.db('single_sends').where({ id: sendId }).update({ relay_id: relayId });
    return sendId;
  };

  test('when the relay was made right after the worker read the account\'s relays then the send still goes through it, not through the highest-priority one', async () => {
    const api = h.api(alice);
    const first = (await api.post('/relays/save').send({ name: 'Primary', kind: 'smtp', url: primary.url, priority: 10 }).expect(200)).body.message.relay;
    // The worker's clock stands still (a minute ahead, so the sends made below are due): what it
    // read of the relays is as fresh as can be.
    const clock = manualClock(new Date(Date.now() + 60_000));
    const { worker, close } = testWorker(h, instance.url, { now: clock.now });
    try {
      const before = await sendTo('before@example.org', null);
      await worker.runOnce();
      expect(primary.messages.map((m) => m.to[0])).toEqual(['before@example.org']);

      const made = (await api.post('/relays/save').send({ name: 'Pinned', kind: 'smtp', url: pinnedSink.url, priority: 1 }).expect(200)).body.message.relay;
      const pinned = await sendTo('pinned@example.org', made.id);
      await worker.runOnce();

      expect(pinnedSink.messages.map((m) => m.to[0])).toEqual(['pinned@example.org']);
      expect(primary.messages.map((m) => m.to[0])).toEqual(['before@example.org']);
      expect(instance.messages).toHaveLength(0);
      expect((await f.ledger(pinned))[0]).toMatchObject({ state: 2, relay_id: made.id });
      expect((await f.ledger(before))[0]).toMatchObject({ state: 2, relay_id: first.id });
    } finally {
      await close();
    }
  });

  test('when the relay a send names is not one of the account\'s, even read again, then its message goes nowhere and waits with the reason', async () => {
    const sendId = await sendTo('orphan@example.org', 2_000_000_000);
    const sent = primary.messages.length + pinnedSink.messages.length + instance.messages.length;
    const { worker, close } = testWorker(h, instance.url, { now: manualClock(new Date(Date.now() + 60_000)).now });
    await worker.runOnce().finally(close);

    expect(primary.messages.length + pinnedSink.messages.length + instance.messages.length).toBe(sent);
    const [row] = await f.ledger(sendId);
    expect(row).toMatchObject({ state: 0, attempts: 1 });
    expect(String(row.last_error)).toBe(
      "the relay this message is to go through (id 2000000000) is not one of the account's relays any more; the message waits and is tried again with the send's current choice",
    );
    expect(await f.send(sendId)).toMatchObject({ status: 2, delivered: 0, failed: 0 });
  });
});
