import path from 'node:path';
import { isPostgres } from '../../src/db';
import { MESSAGE_STATE } from '../../src/lib/constants';
import { useHarness } from '../support/harness';
import { sendingFixtures } from '../support/fixtures-sending';
import { startServiceProcess, ServiceProcess, until } from '../support/processes';
import { startSmtpSink, SmtpSink } from '../support/smtp';
import { TMP_DIR } from '../support/test-db';

const RECIPIENTS = 2000;

describe('a worker process killed in the middle of a send', () => {
  const h = useHarness();
  const f = sendingFixtures(h);
  let sink: SmtpSink;
  const children: ServiceProcess[] = [];

  beforeAll(async () => {
    sink = await startSmtpSink();
  });
  afterAll(async () => {
    for (const c of children) if (c.child.exitCode === null && c.child.signalCode === null) c.child.kill('SIGKILL');
    await Promise.all(children.map((c) => c.exited));
    await sink.close();
  });

  function startWorker(): ServiceProcess {
    const { config } = h.runtime;
    const worker = startServiceProcess(['--role=worker'], {
      ...(config.databaseUrl ? { DATABASE_URL: config.databaseUrl } : { SQLITE_FILE: config.sqliteFile }),
      DATA_DIR: path.join(TMP_DIR, `crash-${process.pid}`),
      BASE_URL: config.baseUrl,
      SMTP_URL: sink.url,
      APP_SECRET: h.runtime.secret,
      // Short, so the killed worker's claimed messages come back within the test.
      SEND_LEASE_SECONDS: '3',
    });
    children.push(worker);
    return worker;
  }

  test('when it is killed with SIGKILL and a new worker starts then everyone gets the message, none more than twice, and the send completes', async () => {
    const alice = await h.account();
    const sender = await f.sender(alice.user_id);
    const group = await f.group(alice.user_id);
    const type = await f.contactType(alice.user_id, 'Everyone');
    await f.contacts(alice.user_id, type, RECIPIENTS);
    const sendId = await f.singleSend(alice.user_id, { senderId: sender, groupId: group, to: [{ contactType: type }] });

    // On PostgreSQL two workers share the send; one of them is killed.
    const victim = startWorker();
    const partner = isPostgres(h.runtime.db) ? startWorker() : undefined;
    await until(() => sink.messages.length >= 300, 30_000, 'the first messages');
    victim.child.kill('SIGKILL');
    expect(await victim.exited).toBe('SIGKILL');
    expect(sink.messages.length).toBeLessThan(RECIPIENTS);
    expect((await f.send(sendId)).status).toBe(2);

    const replacement = startWorker();
    await until(async () => Number((await f.send(sendId)).status) === 3, 45_000, 'the send to complete');
    for (const survivor of [replacement, partner]) survivor?.child.kill('SIGTERM');
    expect(await replacement.exited).toBe(0);
    if (partner) expect(await partner.exited).toBe(0);

    const received = new Map<string, number>();
    for (const m of sink.messages) received.set(m.to[0], (received.get(m.to[0]) ?? 0) + 1);
    expect(received.size).toBe(RECIPIENTS);
    for (let i = 0; i < RECIPIENTS; i += 1) expect(received.get(`r${i}@bulk.test`)).toBeGreaterThanOrEqual(1);
    expect(Math.max(...received.values())).toBeLessThanOrEqual(2);

    const states = await h.runtime.db('send_messages').where({ single_send_id: sendId }).groupBy('state').select('state').count({ n: '*' });
    expect(states.map((s: Record<string, unknown>) => ({ state: Number(s.state), n: Number(s.n) }))).toEqual([{ state: MESSAGE_STATE.sent, n: RECIPIENTS }]);
    expect(await f.send(sendId)).toMatchObject({ status: 3, triggered: RECIPIENTS, delivered: RECIPIENTS });
  }, 90_000);
});
