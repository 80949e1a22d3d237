import { useHarness } from '../support/harness';
import { addContactType, sendingFixtures, testWorker } from '../support/fixtures';
import { SmtpSink, startSmtpSink, useSmtpSink } from '../support/smtp';

describe('failover between an account\'s relays', () => {
  // The instance's own server: nothing of an account with relays serving its domain goes here.
  const instance = useSmtpSink();
  const h = useHarness({ SMTP_URL: () => instance.url, RELAY_ALLOW_PRIVATE: '1' });
  const f = sendingFixtures(h);
  const [alice] = h.accounts(1);
  let first: SmtpSink;
  let second: SmtpSink;
  let stopped: Promise<void> | undefined;

  beforeAll(async () => {
    // The first relay stops part-way: once it has taken 600 messages it shuts down, as a server being restarted does.
    first = await startSmtpSink({
      parse: false,
      beforeAccept: async () => {
        if (first.messages.length >= 600 && !stopped) stopped = first.close();
      },
    });
    second = await startSmtpSink({ parse: false });
  });

  afterAll(async () => {
    await (stopped ?? first.close());
    await second.close();
  });

  test('when the first relay stops in the middle of a 2,000-recipient send then every recipient gets exactly one message, spread over the two, and the counts match', async () => {
    const api = h.api(alice);
    const a = (await api.post('/relays/save').send({ name: 'Primary', kind: 'smtp', url: first.url, priority: 10, domains: ['acme.test'] }).expect(200)).body.message.relay;
    const b = (await api.post('/relays/save').send({ name: 'Backup', kind: 'smtp', url: second.url, priority: 5 }).expect(200)).body.message.relay;

    const type = await addContactType(h, alice, 'Everyone');
    await f.contacts(alice.user_id, type, 2000, 'failover.test');
    const { sender, group } = await f.basics(alice);
    const sendId = await f.singleSend(alice.user_id, { senderId: sender, groupId: group, to: [{ contactType: type }] });

    const { worker, close } = testWorker(h, instance.url);
    await worker.runOnce().finally(close);
    await stopped;

    const received = [...first.messages, ...second.messages].map((m) => m.to[0]);
    expect(received).toHaveLength(2000);
    expect(new Set(received).size).toBe(2000);
    expect(first.messages.length).toBeGreaterThanOrEqual(600);
    expect(second.messages.length).toBeGreaterThan(0);
    expect(instance.messages).toHaveLength(0);

    expect(await f.send(sendId)).toMatchObject({ status: 3, delivered: 2000, bounces: 0, failed: 0 });
    const byRelay = await h.runtime.db('send_messages').where({ single_send_id: sendId, state: 2 }).groupBy('relay_id').select('relay_id', h.runtime.db.raw('count(*) as n'));
    expect(Object.fromEntries(byRelay.map((r) => [Number(r.relay_id), Number(r.n)]))).toEqual({ [a.id]: first.messages.length, [b.id]: second.messages.length });

    const relays = (await api.get('/relays').expect(200)).body.message.relays;
    expect(relays.find((r: { id: number }) => r.id === a.id)).toMatchObject({ health: 'down', last_error: expect.any(String) });
    expect(relays.find((r: { id: number }) => r.id === b.id)).toMatchObject({ health: 'up', last_error: null });
    // A ceiling, not a wait: 2,000 real SMTP transactions take longer than jest's 30 s on a busy machine (as the crash tests).
  }, 120_000);
});
