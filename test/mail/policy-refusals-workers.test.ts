import { isPostgres } from '../../src/db';
import { insertId, nowValue } from '../../src/db/dialect';
import { MESSAGE_KIND, MESSAGE_STATE, SINGLE_SEND_STATUS } from '../../src/lib/constants';
import { addContactType, sendingFixtures } from '../support/fixtures';
import { useHarness } from '../support/harness';
import { until, useServiceProcesses } from '../support/processes';
import { useSmtpSink } from '../support/smtp';

// Every tenth recipient is at a receiver that refuses mail failing its DMARC check, as Gmail does.
const REFUSING = 'gmail.test';
const PARTS = 10;
const PER_PART = 200;

describe('policy refusals with worker processes running (two on PostgreSQL)', () => {
  const h = useHarness();
  const f = sendingFixtures(h);
  const processes = useServiceProcesses(h, 'policy-workers');
  let sendId = 0;
  // The sink holds its answers until every worker holds messages of the send, so the refusals
  // are met by all of them at once rather than by whichever worker came first.
  let held: Promise<void> | undefined;
  const owners = async () => {
    const [{ n }] = await h.runtime.db('send_messages').where({ single_send_id: sendId, state: MESSAGE_STATE.sending }).countDistinct({ n: 'lease_owner' });
    return Number(n);
  };
  const sink = useSmtpSink({
    parse: false,
    beforeRecipient: () => (held ??= until(async () => (await owners()) >= processes.started.length, 60_000, 'every worker holding messages of the send')),
    onRecipient: (address) =>
      address.endsWith(`.${REFUSING}`)
        ? { code: 550, message: `5.7.26 Unauthenticated email from acme.test is not accepted due to domain's DMARC policy.` }
        : undefined,
  });
  const startWorker = () => processes.start(['--role=worker'], { SMTP_URL: sink.url });

  test('when receivers refuse a send for its DMARC policy while workers send it then nobody is suppressed, the send pauses, and the notification recipients get one mail, also after a resume', async () => {
    const alice = await h.account();
    const { sender, group } = await f.basics(alice);
    await insertId(h.runtime.db, 'notification_recipients', {
      user_id: alice.user_id, email_address: 'boss@example.org', email_key: 'boss@example.org', email_owner: 'Boss', created_at: nowValue(), updated_at: nowValue(),
    });
    const type = await addContactType(h, alice, 'Mixed');
    for (let part = 0; part < PARTS; part += 1) {
      await f.contacts(alice.user_id, type, PER_PART * 0.9, `p${part}.example.org`);
      await f.contacts(alice.user_id, type, PER_PART * 0.1, `p${part}.${REFUSING}`);
    }
    sendId = await f.singleSend(alice.user_id, { senderId: sender, groupId: group, to: [{ contactType: type }] });

    const running = isPostgres(h.runtime.db) ? [startWorker(), startWorker()] : [startWorker()];

    const { utr } = await h.runtime.db('single_sends').where({ id: sendId }).first('utr');
    const send = () => h.api(alice).get(`/single-send/details?utr=${String(utr)}`).expect(200).then((r) => r.body.message.singleSend[0] as { status: number; failed: number });
    const inFlight = async () => {
      const [{ n }] = await h.runtime.db('send_messages').where({ single_send_id: sendId, state: MESSAGE_STATE.sending }).count({ n: '*' });
      return Number(n);
    };
    // The notification of the pause (the start of the send is announced too).
    const pausedSubject = /^Subject: Single send paused: November news is refused as unauthenticated$/m;
    const toBoss = () => sink.messages.filter((m) => m.to.includes('boss@example.org') && pausedSubject.test(m.raw.replace(/\r?\n[ \t]+/g, ' ')));
    // Paused, its notification delivered, and every message the workers held when it paused recorded.
    const settledPaused = async () => (await send()).status === SINGLE_SEND_STATUS.paused && toBoss().length >= 1 && (await inFlight()) === 0;
    await until(settledPaused, 60_000, 'the send paused and its notification delivered');

    const refused = await h.runtime.db('send_messages').where({ single_send_id: sendId, failure_reason: 'policy' }).select('state', 'email', 'smtp_code', 'last_error');
    expect(refused.length).toBeGreaterThanOrEqual(1);
    expect(refused.filter((r) => !(Number(r.state) === MESSAGE_STATE.failed && String(r.email).endsWith(`.${REFUSING}`) && Number(r.smtp_code) === 550 && /5\.7\.26/.test(String(r.last_error))))).toEqual([]);
    // The good addresses were delivered and the rest waits for a resume.
    const [{ n: waiting }] = await h.runtime.db('send_messages').where({ single_send_id: sendId, state: MESSAGE_STATE.paused }).count({ n: '*' });
    expect(Number(waiting)).toBeGreaterThan(0);
    expect(sink.messages.filter((m) => m.to.some((to) => to.endsWith(`.${REFUSING}`)))).toEqual([]);
    expect(Number((await send()).failed)).toBe(refused.length);

    // Nobody is suppressed or unsubscribed for the sender's problem.
    expect(await h.runtime.db('suppressed_addresses').where({ user_id: alice.user_id }).select('email_key')).toEqual([]);
    expect(await h.runtime.db('global_unsubscribes').where({ user_id: alice.user_id }).select('email_key')).toEqual([]);

    const notices = async () =>
      (await h.runtime.db('send_messages').where({ kind: MESSAGE_KIND.system, email: 'boss@example.org' }).select('payload'))
        .map((r) => JSON.parse(String(r.payload)) as { subject: string; text: string })
        .filter((m) => m.subject.startsWith('Single send paused'));
    expect(toBoss()).toHaveLength(1);
    const [notice] = await notices();
    expect(notice.subject).toBe('Single send paused: November news is refused as unauthenticated');
    expect(notice.text).toContain('No address was suppressed');
    expect(notice.text).toContain('5.7.26');

    // Resumed, it pauses again at the next refusals, and nobody is told twice.
    const before = refused.length;
    await h.api(alice).get(`/single/send/resume?utr=${String(utr)}`).expect(200);
    const refusedAgain = async () => {
      const [{ n }] = await h.runtime.db('send_messages').where({ single_send_id: sendId, failure_reason: 'policy' }).count({ n: '*' });
      return Number(n) > before;
    };
    await until(async () => (await refusedAgain()) && (await send()).status === SINGLE_SEND_STATUS.paused && (await inFlight()) === 0, 60_000, 'the send paused again');
    expect(await notices()).toHaveLength(1);
    expect(await h.runtime.db('suppressed_addresses').where({ user_id: alice.user_id }).select('email_key')).toEqual([]);

    for (const w of running) w.child.kill('SIGTERM');
    for (const w of running) expect(await w.exited).toBe(0);
    // A notification is system mail: whichever worker took it, it left once.
    expect(toBoss()).toHaveLength(1);
  }, 120_000);
});
