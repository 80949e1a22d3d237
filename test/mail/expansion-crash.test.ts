import { isPostgres } from '../../src/db';
import { MESSAGE_STATE } from '../../src/lib/constants';
import { utcToZoned } from '../../src/lib/zoned-time';
import { useHarness } from '../support/harness';
import { sendingFixtures } from '../support/fixtures';
import { ServiceProcess, until, untilCount, useServiceProcesses } from '../support/processes';
import { useSmtpSink } from '../support/smtp';

const RECIPIENTS = 20_000;
const KILLS = 4;
/** Small batches, so the expansion is long enough to be killed in its middle several times. */
const BATCH = 400;

describe('worker processes killed while they write a send\'s ledger', () => {
  const h = useHarness();
  const f = sendingFixtures(h);
  const sink = useSmtpSink({ parse: false });
  const processes = useServiceProcesses(h, 'expansion-crash');

  function startWorker(): ServiceProcess {
    return processes.start(['--role=worker'], { SMTP_URL: sink.url, SEND_EXPAND_BATCH: String(BATCH), SEND_LEASE_SECONDS: '3' });
  }

  /** The rows the send's expansion has written, by its cursor; undefined once it has ended. */
  async function expanded(sendId: number): Promise<number | undefined> {
    const row = await h.runtime.db('single_sends').where({ id: sendId }).first('expand_cursor');
    return row.expand_cursor === null ? undefined : Number(JSON.parse(String(row.expand_cursor)).written);
  }

  test(`when ${KILLS} workers are killed with SIGKILL during the expansion of ${RECIPIENTS} recipients then each is written once and mailed once`, async () => {
    const alice = await h.account();
    const { sender, group, type } = await f.basics(alice, 'Everyone');
    await f.contacts(alice.user_id, type, RECIPIENTS);
    // Due tomorrow at nine on each recipient's clock: the rows are written now and wait, so the
    // kills land in the expansion and never in a message's hand-over.
    const sendId = await f.singleSend(alice.user_id, { senderId: sender, groupId: group, to: [{ contactType: type }] });
    const tomorrow = utcToZoned(new Date(Date.now() + 86_400_000), 'UTC').date;
    await h.runtime.db('single_sends').where({ id: sendId }).update({ schedule_type: 2, schedule_date: tomorrow, schedule_time: '09:00:00' });

    // On PostgreSQL two workers share the expansion; the older one is killed each time.
    const workers = isPostgres(h.runtime.db) ? [startWorker(), startWorker()] : [startWorker()];
    const writtenAtKill: number[] = [];
    for (let kill = 1; kill <= KILLS; kill += 1) {
      const threshold = (kill * RECIPIENTS) / (KILLS + 2);
      await until(async () => ((await expanded(sendId)) ?? 0) >= threshold, 120_000, `kill ${kill}: the expansion past ${threshold}`);
      const victim = workers.shift()!;
      victim.child.kill('SIGKILL');
      expect(await victim.exited).toBe('SIGKILL');
      const written = await expanded(sendId);
      // Still expanding: the kill fell in the middle of it.
      expect(written).toBeLessThan(RECIPIENTS);
      writtenAtKill.push(written!);
      workers.push(startWorker());
    }
    console.info(`expansion crash (${isPostgres(h.runtime.db) ? 'PostgreSQL, two workers' : 'SQLite'}): rows written at the kills ${writtenAtKill.join(', ')}`);
    await until(async () => (await expanded(sendId)) === undefined, 120_000, 'the expansion to end');
    expect(sink.messages).toHaveLength(0);

    // One row per recipient, every one of them: none twice, none skipped.
    const ledger = await h.runtime.db('send_messages').where({ single_send_id: sendId }).select('email', 'state');
    expect(ledger).toHaveLength(RECIPIENTS);
    expect(new Set(ledger.map((r: { email: string }) => r.email)).size).toBe(RECIPIENTS);
    expect(ledger.every((r: { state: number }) => Number(r.state) === MESSAGE_STATE.queued)).toBe(true);
    expect(await f.send(sendId)).toMatchObject({ status: 2, triggered: RECIPIENTS, recipients_total: RECIPIENTS });

    // Nine o'clock tomorrow comes (the rows' due time is moved, not waited for): each is mailed once.
    await h.runtime.db('send_messages').where({ single_send_id: sendId }).update({ available_at: new Date().toISOString() });
    const sent = async () => Number((await h.runtime.db('send_messages').where({ single_send_id: sendId, state: MESSAGE_STATE.sent }).count({ n: '*' }).first())?.n);
    await untilCount(sent, RECIPIENTS, 60_000, 'messages sent');
    await until(async () => Number((await f.send(sendId)).status) === 3, 60_000, 'the send to complete');
    for (const survivor of workers) survivor.child.kill('SIGTERM');
    for (const survivor of workers) expect(await survivor.exited).toBe(0);

    const copies = new Map<string, number>();
    for (const m of sink.messages) copies.set(m.to[0], (copies.get(m.to[0]) ?? 0) + 1);
    expect(copies.size).toBe(RECIPIENTS);
    expect(Math.max(...copies.values())).toBe(1);
    for (let i = 0; i < RECIPIENTS; i += 1) expect(copies.get(`r${i}@bulk.test`)).toBe(1);
    expect(await f.send(sendId)).toMatchObject({ status: 3, triggered: RECIPIENTS, delivered: RECIPIENTS, failed: 0 });
  }, 900_000);
});
