import { isPostgres } from '../../src/db';
import { MESSAGE_KIND, MESSAGE_STATE } from '../../src/lib/constants';
import { IN_DOUBT_TWICE } from '../../src/services/delivery/ledger';
import { sendingFixtures, testWorker, useSendingSetup } from '../support/fixtures';
import { useHarness } from '../support/harness';
import { ServiceProcess, until, useServiceProcesses } from '../support/processes';
import { useSmtpSink } from '../support/smtp';

describe('transactional mail on the ledger: ahead of bulk sends, and crash safe', () => {
  const sink = useSmtpSink({ emptyBeforeEach: true, parse: false, beforeAccept: () => new Promise((resolve) => setTimeout(resolve, 2)) });
  const h = useHarness();
  const f = sendingFixtures(h);
  const setup = useSendingSetup(h, 'Everyone');
  const processes = useServiceProcesses(h, 'tx-crash');

  const receipt = (to: string | string[]) => ({ to, sender_id: setup.sender, subject: 'Receipt', text: 'Thanks for your order.' });

  test('when a transactional message is sent while a bulk send is going out then it overtakes the queued bulk messages', async () => {
    const bulk = 3000;
    const type = await f.contacts(setup.account.user_id, setup.type, bulk, 'bulk-a.test').then(() => setup.type);
    const sendId = await f.singleSend(setup.account.user_id, { senderId: setup.sender, groupId: setup.group, to: [{ contactType: type }] });
    const w = testWorker(h, sink.url, { pollMs: 50 });
    w.worker.start();
    try {
      await until(() => sink.messages.length >= 300, 60_000, 'the bulk send to be going out');
      const res = await h.api(setup.account).post('/transactional/send').send(receipt('urgent@shop.test')).expect(200);
      const answeredAt = sink.messages.length;
      await until(() => sink.messages.some((m) => m.to[0] === 'urgent@shop.test'), 30_000, 'the transactional message to arrive');
      const arrivedAt = sink.messages.findIndex((m) => m.to[0] === 'urgent@shop.test');
      // Bulk messages still arriving after the answer were claimed before it (a batch in hand), not queued ones.
      console.info(`transactional overtaking (${isPostgres(h.runtime.db) ? 'PostgreSQL' : 'SQLite'}): ${arrivedAt - answeredAt} bulk messages arrived between the answer and it, of ${bulk - answeredAt} still to go`);
      expect(arrivedAt - answeredAt).toBeLessThan(200);
      expect(arrivedAt).toBeLessThan(bulk - 500);
      expect(res.body.message.messages[0].status).toBe('queued');
      await until(async () => Number((await f.send(sendId)).status) === 3, 120_000, 'the bulk send to complete');
    } finally {
      await w.close();
    }
  }, 240_000);

  test('when worker processes are killed while sending a batch of transactional mail then everyone gets it, nobody three times, and each kill sends at most what was in flight twice', async () => {
    const count = 1500;
    const SMTP_MAX_CONNECTIONS = 5;
    // Every lane, the urgent one too, sends within the transport's permits; twice that for a margin.
    const IN_FLIGHT = SMTP_MAX_CONNECTIONS * 2;
    for (let i = 0; i < count; i += 50) {
      const to = Array.from({ length: 50 }, (_, j) => `tx${i + j}@crash.test`);
      await h.api(setup.account).post('/transactional/send').send({ ...receipt(to), tags: ['crash'] }).expect(200);
    }
    const start = (): ServiceProcess => processes.start(['--role=worker'], { SMTP_URL: sink.url, SMTP_MAX_CONNECTIONS: String(SMTP_MAX_CONNECTIONS), SEND_LEASE_SECONDS: '3' });
    const isSending = async (worker: ServiceProcess) =>
      (await h.runtime.db('send_messages').where('lease_owner', 'like', `${worker.child.pid}-%`).where({ state: MESSAGE_STATE.sending, kind: MESSAGE_KIND.transactional }).where('unconfirmed', '>', 0).first('id')) !== undefined;
    const receivedAtKill: number[] = [];
    let worker = start();
    for (let kill = 1; kill <= 2; kill += 1) {
      const threshold = (receivedAtKill.at(-1) ?? 0) + 300;
      await until(async () => sink.messages.length >= threshold && (await isSending(worker)), 60_000, `kill ${kill}: the worker sending`);
      worker.child.kill('SIGKILL');
      expect(await worker.exited).toBe('SIGKILL');
      await sink.settled();
      receivedAtKill.push(sink.messages.length);
      worker = start();
    }
    const open = () => h.runtime.db('send_messages').where({ user_id: setup.account.user_id, kind: MESSAGE_KIND.transactional }).whereIn('state', [MESSAGE_STATE.queued, MESSAGE_STATE.sending]).first('id');
    await until(async () => (await open()) === undefined, 120_000, 'every transactional message to be final');
    worker.child.kill('SIGTERM');
    expect(await worker.exited).toBe(0);
    await sink.settled();

    const copies = new Map<string, number>();
    for (const m of sink.messages) copies.set(m.to[0], (copies.get(m.to[0]) ?? 0) + 1);
    const inDoubt = await h.runtime.db('send_messages').where({ user_id: setup.account.user_id, kind: MESSAGE_KIND.transactional, state: MESSAGE_STATE.failed }).select('email', 'last_error');
    for (const row of inDoubt) expect(row.last_error).toBe(IN_DOUBT_TWICE);
    const doubted = new Set(inDoubt.map((r: { email: string }) => r.email));
    for (let i = 0; i < count; i += 1) if (!doubted.has(`tx${i}@crash.test`)) expect(copies.get(`tx${i}@crash.test`) ?? 0).toBeGreaterThanOrEqual(1);
    expect(Math.max(...copies.values())).toBeLessThanOrEqual(2);
    const duplicates = [...copies.values()].filter((n) => n === 2).length;
    console.info(`transactional crash (${isPostgres(h.runtime.db) ? 'PostgreSQL' : 'SQLite'}): ${duplicates} sent twice over 2 kills, ${inDoubt.length} in doubt`);
    expect(duplicates).toBeLessThanOrEqual(2 * IN_FLIGHT);
    const log = (await h.api(setup.account).get('/transactional/messages?status=delivered&tag=crash&limit=1').expect(200)).body.message;
    expect(log.total).toBe(count - inDoubt.length);
  }, 360_000);
});
