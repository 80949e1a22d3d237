import { isPostgres } from '../../src/db';
import { MESSAGE_STATE } from '../../src/lib/constants';
import { IN_DOUBT_TWICE } from '../../src/services/delivery/ledger';
import { useHarness } from '../support/harness';
import { addContactType, sendingFixtures } from '../support/fixtures';
import { ServiceProcess, until, useServiceProcesses } from '../support/processes';
import { useSmtpSink } from '../support/smtp';

const RECIPIENTS = 2500;
const KILLS = 5;
/** A kill once this many more messages arrived since the last one (and the victim is sending). */
const STEP = 300;
const SMTP_MAX_CONNECTIONS = 5;
/** The most a worker has handed to the server and not yet recorded: what a crash may send twice. */
const IN_FLIGHT = SMTP_MAX_CONNECTIONS * 2;

describe('worker processes killed in the middle of a send', () => {
  const h = useHarness();
  const f = sendingFixtures(h);
  const sink = useSmtpSink();
  const processes = useServiceProcesses(h, 'crash');

  function startWorker(): ServiceProcess {
    return processes.start(['--role=worker'], {
      SMTP_URL: sink.url,
      SMTP_MAX_CONNECTIONS: String(SMTP_MAX_CONNECTIONS),
      // Short, so the killed workers' claimed messages come back within the test.
      SEND_LEASE_SECONDS: '3',
    });
  }

  /** True while the worker holds messages it began to hand to the SMTP server. */
  async function isSending(worker: ServiceProcess): Promise<boolean> {
    const row = await h.runtime.db('send_messages')
      .where('lease_owner', 'like', `${worker.child.pid}-%`)
      .where({ state: MESSAGE_STATE.sending })
      .where('unconfirmed', '>', 0)
      .first('id');
    return row !== undefined;
  }

  test(`when ${KILLS} workers are killed with SIGKILL one after another then everyone gets the message, a kill sends at most ${IN_FLIGHT} twice, nobody gets it three times, and the send completes`, async () => {
    const alice = await h.account();
    const sender = await f.sender(alice.user_id);
    const group = await f.group(alice.user_id);
    const type = await addContactType(h, alice, 'Everyone');
    await f.contacts(alice.user_id, type, RECIPIENTS);
    const sendId = await f.singleSend(alice.user_id, { senderId: sender, groupId: group, to: [{ contactType: type }] });

    // On PostgreSQL two workers share the send; the older one is killed each time.
    const workers = isPostgres(h.runtime.db) ? [startWorker(), startWorker()] : [startWorker()];
    // How many messages the sink had received when each kill was over.
    const receivedAtKill: number[] = [];
    for (let kill = 1; kill <= KILLS; kill += 1) {
      const victim = workers.shift()!;
      const threshold = (receivedAtKill.at(-1) ?? 0) + STEP;
      await until(async () => sink.messages.length >= threshold && (await isSending(victim)), 60_000, `kill ${kill}: the victim sending`);
      victim.child.kill('SIGKILL');
      expect(await victim.exited).toBe('SIGKILL');
      // The victim's last messages may still sit unread in the sink's sockets: counted after the
      // kill, their copies sent again would be charged to the next kill.
      await sink.settled();
      receivedAtKill.push(sink.messages.length);
      expect((await f.send(sendId)).status).toBe(2);
      workers.push(startWorker());
    }
    expect(receivedAtKill.at(-1)).toBeLessThan(RECIPIENTS);

    await until(async () => Number((await f.send(sendId)).status) === 3, 60_000, 'the send to complete');
    for (const survivor of workers) survivor.child.kill('SIGTERM');
    for (const survivor of workers) expect(await survivor.exited).toBe(0);

    // Copies per recipient, and the duplicates of each kill: the recipients whose first copy
    // arrived before that kill (and after the one before) and who got a second one later.
    const copies = new Map<string, number>();
    const duplicatesPerKill = receivedAtKill.map(() => 0);
    sink.messages.forEach((m) => {
      const to = m.to[0];
      copies.set(to, (copies.get(to) ?? 0) + 1);
      if (copies.get(to) === 2) {
        const first = sink.messages.findIndex((other) => other.to[0] === to);
        const kill = receivedAtKill.findIndex((count) => first < count);
        duplicatesPerKill[kill === -1 ? KILLS - 1 : kill] += 1;
      }
    });
    const maxCopies = Math.max(...copies.values());
    // A message begun at two crashes and accepted by the server neither time that the worker
    // saw is in doubt: it may have been delivered twice (a server can accept after its client
    // died), so it is failed and counted, never sent a third time (IN_DOUBT_TWICE; docs/sending-and-tracking.md).
    const inDoubt = await h.runtime.db('send_messages').where({ single_send_id: sendId, state: MESSAGE_STATE.failed }).select('email', 'last_error');
    // Printed so each run shows how its kills compare with the bound.
    console.info(`crash (${isPostgres(h.runtime.db) ? 'PostgreSQL, two workers' : 'SQLite'}): duplicates per kill ${duplicatesPerKill.join(', ')}; max copies per recipient ${maxCopies}; in doubt after two crashes ${inDoubt.length}`);

    for (const row of inDoubt) expect(row.last_error).toBe(IN_DOUBT_TWICE);
    const doubted = new Set(inDoubt.map((row: { email: string }) => row.email));
    for (let i = 0; i < RECIPIENTS; i += 1) {
      const to = `r${i}@bulk.test`;
      if (!doubted.has(to)) expect(copies.get(to) ?? 0).toBeGreaterThanOrEqual(1);
    }
    expect(inDoubt.length).toBeLessThanOrEqual(IN_FLIGHT);
    expect(maxCopies).toBeLessThanOrEqual(2);
    for (const duplicates of duplicatesPerKill) expect(duplicates).toBeLessThanOrEqual(IN_FLIGHT);

    const states = await h.runtime.db('send_messages').where({ single_send_id: sendId }).groupBy('state').orderBy('state').select('state').count({ n: '*' });
    const expected = [{ state: MESSAGE_STATE.sent, n: RECIPIENTS - inDoubt.length }, ...(inDoubt.length ? [{ state: MESSAGE_STATE.failed, n: inDoubt.length }] : [])];
    expect(states.map((s: Record<string, unknown>) => ({ state: Number(s.state), n: Number(s.n) }))).toEqual(expected);
    expect(await f.send(sendId)).toMatchObject({ status: 3, triggered: RECIPIENTS, delivered: RECIPIENTS - inDoubt.length, failed: inDoubt.length });
  }, 360_000);
});
