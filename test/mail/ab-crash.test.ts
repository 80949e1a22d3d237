import request from 'supertest';
import { isPostgres } from '../../src/db';
import { AB_TEST_STATE, MESSAGE_STATE } from '../../src/lib/constants';
import { useHarness } from '../support/harness';
import { sendingFixtures } from '../support/fixtures';
import { ServiceProcess, until, useServiceProcesses } from '../support/processes';
import { useSmtpSink } from '../support/smtp';

const RECIPIENTS = 600;
/** 10% of 600 receive the test, 30 per variant. */
const TESTED = 60;
const PERSON = 'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_0) AppleWebKit/605.1.15 (KHTML, like Gecko) Thunderbird/128.0';

describe('an A/B test whose worker is killed while the winner goes to the rest', () => {
  const h = useHarness();
  const f = sendingFixtures(h);
  // While `gate` is set, the sink answers no recipient: a message it holds has not begun to arrive.
  let gate: Promise<void> | undefined;
  let holding = 0;
  let admitted = 0;
  const sink = useSmtpSink({
    beforeRecipient: async () => {
      while (gate) {
        holding += 1;
        await gate.finally(() => (holding -= 1));
      }
      admitted += 1;
    },
  });
  const processes = useServiceProcesses(h, 'ab-crash');

  function startWorker(): ServiceProcess {
    return processes.start(['--role=worker'], {
      SMTP_URL: sink.url,
      // Short, so the killed worker's claimed messages come back within the test.
      SEND_LEASE_SECONDS: '3',
    });
  }

  /**
   * Kills the worker at a moment where it has messages of the rest in hand but none that the
   * server received and the ledger does not know of: the sink holds every new recipient (so no
   * message starts to arrive), the messages already under way arrive, the worker records them
   * (it writes each outcome before its next message starts), and then it is killed. Its claimed
   * and held messages are taken over after their lease and sent once.
   */
  async function killWithNothingInDoubt(worker: ServiceProcess, sendId: number): Promise<void> {
    let release = () => undefined as void;
    gate = new Promise<void>((resolve) => (release = resolve));
    await until(() => holding > 0 && admitted === sink.messages.length, 30_000, 'the messages under way to arrive');
    const sent = async () => Number((await h.runtime.db('send_messages').where({ single_send_id: sendId, state: MESSAGE_STATE.sent }).count({ n: '*' }).first())?.n);
    await until(async () => (await sent()) === sink.messages.length, 30_000, 'every received message recorded');
    worker.child.kill('SIGKILL');
    expect(await worker.exited).toBe('SIGKILL');
    gate = undefined;
    release();
  }

  test('when the worker is killed while sending the winner then every recipient gets exactly one message, the winner\'s for the rest', async () => {
    const alice = await h.account();
    const { sender, group, type } = await f.basics(alice, 'Everyone');
    await f.contacts(alice.user_id, type, RECIPIENTS);
    // A draft until its test is saved, then ready and due.
    const sendId = await f.singleSend(alice.user_id, { senderId: sender, groupId: group, to: [{ contactType: type }], status: 0 });
    const { utr } = await h.runtime.db('single_sends').where({ id: sendId }).first('utr');
    await h.api(alice).post('/single/send/ab/save').send({
      utr,
      variants: [{ subject: 'Variant zero' }, { subject: 'Variant one' }],
      test_percent: 10,
      winner_metric: 'opens',
      wait_minutes: 10,
    }).expect(200);
    await h.runtime.db('single_sends').where({ id: sendId }).update({ status: 1, due_at: new Date().toISOString() });

    // On PostgreSQL two workers share the send (and both look for due winners).
    const workers = isPostgres(h.runtime.db) ? [startWorker(), startWorker()] : [startWorker()];
    await until(async () => sink.messages.length >= TESTED, 60_000, 'the test share');
    await until(async () => Number((await f.send(sendId)).delivered) === TESTED, 60_000, 'the test share recorded');
    expect(sink.messages).toHaveLength(TESTED);

    // Three people open variant one; then the wait is over (the due moment is moved, not waited for).
    const opened = await h.runtime.db('send_messages').where({ single_send_id: sendId, ab_variant: 1, state: MESSAGE_STATE.sent }).orderBy('id').limit(3).select('id');
    for (const row of opened) await request(h.runtime.app).get(`/open/${f.token(Number(row.id))}.gif`).set('User-Agent', PERSON).expect(200);
    await h.runtime.db('ab_tests').where({ single_send_id: sendId }).update({ decide_at: new Date(Date.now() - 1000).toISOString() });

    await until(async () => sink.messages.length >= TESTED + 100, 60_000, 'the rest under way');
    const victim = workers.shift()!;
    await killWithNothingInDoubt(victim, sendId);
    const atKill = sink.messages.length;
    expect(atKill).toBeLessThan(RECIPIENTS);
    workers.push(startWorker());

    await until(async () => Number((await f.send(sendId)).status) === 3, 120_000, 'the send to complete');
    for (const survivor of workers) survivor.child.kill('SIGTERM');
    for (const survivor of workers) expect(await survivor.exited).toBe(0);

    const copies = new Map<string, string[]>();
    for (const m of sink.messages) copies.set(m.to[0], [...(copies.get(m.to[0]) ?? []), String(m.parsed.subject)]);
    expect(copies.size).toBe(RECIPIENTS);
    for (const subjects of copies.values()) expect(subjects).toHaveLength(1);
    expect(sink.messages).toHaveLength(RECIPIENTS);
    const bySubject = (s: string) => sink.messages.filter((m) => m.parsed.subject === s).length;
    expect([bySubject('Variant zero'), bySubject('Variant one')]).toEqual([TESTED / 2, RECIPIENTS - TESTED / 2]);

    const test = await h.runtime.db('ab_tests').where({ single_send_id: sendId }).first('state', 'winner');
    expect({ state: Number(test.state), winner: Number(test.winner) }).toEqual({ state: AB_TEST_STATE.sent, winner: 1 });
    expect(await f.send(sendId)).toMatchObject({ status: 3, triggered: RECIPIENTS, delivered: RECIPIENTS, failed: 0 });
    const ab = (await h.api(alice).get(`/single-send/details?utr=${utr}`).expect(200)).body.message.singleSend[0].ab;
    expect(ab.variants.map((v: { triggered: number; delivered: number; unique_opens: number }) => [v.triggered, v.delivered, v.unique_opens])).toEqual([[30, 30, 0], [570, 570, 3]]);
  }, 240_000);
});
