import { useHarness } from '../support/harness';
import { addContactType, sendingFixtures, testWorker, useSendingSetup } from '../support/fixtures';
import { SmtpSink, startSmtpSink, useSmtpSink } from '../support/smtp';
import { ProviderEmulator, ProviderKind, startProviderEmulator } from '../support/provider-emulators';

const MAY_HAVE_GONE = 'The relay stopped answering after taking the message; it may have been delivered';

describe('a relay that goes silent after taking a message', () => {
  // The instance's own server: nothing of an account with relays serving its domain goes here.
  const instance = useSmtpSink();
  const h = useHarness({ SMTP_URL: () => instance.url, RELAY_ALLOW_PRIVATE: '1' });
  const f = sendingFixtures(h);
  const setup = useSendingSetup(h);
  const alice = setup.account;
  let first: SmtpSink;
  let second: SmtpSink;

  beforeAll(async () => {
    // The first relay takes three messages as usual; from then on it keeps each message it is
    // given and drops the connection before its final reply (a crash, a network failure).
    first = await startSmtpSink({ parse: false, dropAfterData: () => first.messages.length >= 3 });
    second = await startSmtpSink({ parse: false });
  });

  afterAll(async () => {
    await first.close();
    await second.close();
  });

  /** A send to `count` new addresses, run by a worker until nothing is due. */
  async function send(prefix: string, count: number) {
    const type = await addContactType(h, alice, prefix);
    await f.contacts(alice.user_id, type, count, `${prefix}.test`);
    const sendId = await f.singleSend(alice.user_id, { senderId: setup.sender, groupId: setup.group, to: [{ contactType: type }] });
    const { worker, close } = testWorker(h, instance.url);
    await worker.runOnce().finally(close);
    return sendId;
  }

  test('when the first relay drops the connection after the message data then each recipient gets at most one message, the unanswered ones fail as unconfirmed, nobody is suppressed and the relay is down', async () => {
    const api = h.api(alice);
    const a = (await api.post('/relays/save').send({ name: 'Primary', kind: 'smtp', url: first.url, priority: 10, domains: ['acme.test'] }).expect(200)).body.message.relay;
    const b = (await api.post('/relays/save').send({ name: 'Backup', kind: 'smtp', url: second.url, priority: 5 }).expect(200)).body.message.relay;

    const sendId = await send('silent', 40);

    const received = [...first.messages, ...second.messages].map((m) => m.to[0]);
    expect(new Set(received).size).toBe(received.length);
    const dropped = first.messages.filter((m) => m.dropped).map((m) => m.to[0]).sort();
    expect(dropped.length).toBeGreaterThan(0);
    expect(second.messages.length).toBeGreaterThan(0);
    expect(instance.messages).toHaveLength(0);

    const rows = await f.ledger(sendId);
    const failed = rows.filter((r) => Number(r.state) === 3);
    const delivered = rows.filter((r) => Number(r.state) === 2);
    // Exactly the messages the relay took without answering failed; every other recipient got one.
    expect(failed.map((r) => String(r.email)).sort()).toEqual(dropped);
    expect(failed.every((r) => r.failure_reason === 'unconfirmed' && Number(r.relay_id) === a.id)).toBe(true);
    expect(delivered.map((r) => String(r.email)).sort()).toEqual(received.filter((to) => !dropped.includes(to)).sort());
    expect(delivered.length + failed.length).toBe(40);
    expect(await f.send(sendId)).toMatchObject({ status: 3, delivered: delivered.length, bounces: 0, failed: failed.length });

    // The recipients' report says what happened in plain words.
    const utr = String((await f.send(sendId)).utr);
    const report = (await api.get(`/single-send/recipients?utr=${utr}&status=failed`).expect(200)).body.message.recipients;
    expect(report.map((r: { email: string }) => r.email).sort()).toEqual(dropped);
    expect(report.every((r: { reason: string }) => r.reason.startsWith(MAY_HAVE_GONE))).toBe(true);

    expect(await h.runtime.db('suppressed_addresses').where({ user_id: alice.user_id })).toEqual([]);
    const relays = (await api.get('/relays').expect(200)).body.message.relays;
    expect(relays.find((r: { id: number }) => r.id === a.id)).toMatchObject({ health: 'down', last_error: expect.stringContaining(MAY_HAVE_GONE) });
    expect(relays.find((r: { id: number }) => r.id === b.id)).toMatchObject({ health: 'up' });

    // Retrying the failed ones is the account's choice; the worker never sent them again by itself.
    const { worker, close } = testWorker(h, instance.url);
    await worker.runOnce().finally(close);
    expect([...first.messages, ...second.messages]).toHaveLength(received.length);
    await api.delete(`/relays/delete?id=${a.id}`).expect(200);
    await api.delete(`/relays/delete?id=${b.id}`).expect(200);
  });

  describe.each<ProviderKind>(['ses', 'sendgrid', 'postmark', 'mailgun'])('through %s\'s API', (kind) => {
    let emulator: ProviderEmulator;
    beforeAll(async () => {
      emulator = await startProviderEmulator(kind);
    });
    afterAll(() => emulator.close());

    test('when the API reads the request and hangs up then the message fails as unconfirmed and is not handed to the next relay, while a refused connection still fails over', async () => {
      const api = h.api(alice);
      const primary = (await api.post('/relays/save').send({ name: `${kind} relay`, kind, api_key: emulator.key, endpoint: emulator.url, region: 'us-east-1', priority: 10, domains: ['acme.test'] }).expect(200)).body.message.relay;
      const backup = (await api.post('/relays/save').send({ name: 'Backup', kind: 'smtp', url: second.url, priority: 5 }).expect(200)).body.message.relay;
      const before = second.messages.length;

      emulator.behaviour = 'hang-up';
      const sendId = await send(`${kind}-hangup`, 1);
      expect(emulator.hungUp).toHaveLength(1);
      expect(second.messages).toHaveLength(before);
      const [row] = await f.ledger(sendId);
      expect(row).toMatchObject({ state: 3, failure_reason: 'unconfirmed', relay_id: primary.id });
      expect(String(row.last_error)).toContain(MAY_HAVE_GONE);
      const relays = (await api.get('/relays').expect(200)).body.message.relays;
      expect(relays.find((r: { id: number }) => r.id === primary.id)).toMatchObject({ health: 'down' });

      // Before any request is written (the API is gone): the next relay takes the message.
      await api.post(`/relays/update?id=${primary.id}`).send({ name: `${kind} relay`, kind, endpoint: 'http://127.0.0.1:1', region: 'us-east-1', priority: 10, domains: ['acme.test'] }).expect(200);
      await h.runtime.db('relays').where({ id: primary.id }).update({ down_until: null, failures: 0 });
      const next = await send(`${kind}-refused`, 1);
      expect(await f.ledger(next)).toEqual([expect.objectContaining({ state: 2, relay_id: backup.id })]);
      expect(second.messages).toHaveLength(before + 1);

      await api.delete(`/relays/delete?id=${primary.id}`).expect(200);
      await api.delete(`/relays/delete?id=${backup.id}`).expect(200);
    });
  });
});
