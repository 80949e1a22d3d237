import { MESSAGE_STATE, SINGLE_SEND_STATUS } from '../../src/lib/constants';
import { addContactType, sendingFixtures, testWorker, useSendingSetup } from '../support/fixtures';
import { useHarness } from '../support/harness';
import { useSmtpSink } from '../support/smtp';

/** Pause, resume and cancel of a single send, through the API, against a real SMTP server. */
describe('pausing, resuming and cancelling a single send', () => {
  const h = useHarness();
  const f = sendingFixtures(h);
  const setup = useSendingSetup(h);
  const alice = setup.account;
  /** What the server does before accepting a message (set per test). */
  let hook: () => Promise<void> = async () => undefined;
  const sink = useSmtpSink({ beforeAccept: () => hook() });

  beforeEach(() => {
    sink.messages.splice(0);
    hook = async () => undefined;
  });

  const RECIPIENTS = 40;
  async function sendTo(name: string): Promise<{ id: number; utr: string; addresses: string[] }> {
    const type = await addContactType(h, alice, name);
    const addresses: string[] = [];
    for (let i = 0; i < RECIPIENTS; i += 1) {
      addresses.push(`${name.toLowerCase()}${i}@example.org`);
      await f.contact(alice.user_id, type, addresses[i], { first_name: `P${i}` });
    }
    const id = await f.singleSend(alice.user_id, { senderId: setup.sender, groupId: setup.group, to: [{ contactType: type }] });
    return { id, utr: String((await f.send(id)).utr), addresses };
  }
  const control = (action: 'pause' | 'resume' | 'cancel', utr: string) => h.api(alice).get(`/single/send/${action}?utr=${utr}`);
  const received = () => sink.messages.map((m) => m.to[0]);
  const states = async (id: number) => {
    const counts: Record<number, number> = {};
    for (const row of await f.ledger(id)) counts[Number(row.state)] = (counts[Number(row.state)] ?? 0) + 1;
    return counts;
  };

  test('when a running send is paused then nothing more goes out than was in flight; resumed, every recipient gets exactly one message', async () => {
    const send = await sendTo('Paused');
    let accepted = 0;
    // What the server had accepted when the pause was recorded: the 10th message waits for it.
    let acceptedWhenPaused = 0;
    hook = async () => {
      if ((accepted += 1) === 10) {
        expect((await control('pause', send.utr).expect(200)).body).toEqual({ status: 'success', message: 'Single Send Paused' });
        acceptedWhenPaused = received().length;
      }
    };
    const { worker, close } = testWorker(h, sink.url);
    try {
      await worker.runOnce();
      const atPause = received().length;
      // The 10th and the others already handed to the server when the pause was recorded (at
      // most the transport's 10 in flight). While the pause request runs, the other messages
      // in flight are accepted and the worker may hand over more: the bound starts at the pause.
      expect(atPause).toBeGreaterThanOrEqual(10);
      expect(atPause).toBeLessThanOrEqual(acceptedWhenPaused + 10);
      expect((await f.send(send.id)).status).toBe(SINGLE_SEND_STATUS.paused);
      expect(await states(send.id)).toEqual({ [MESSAGE_STATE.sent]: atPause, [MESSAGE_STATE.paused]: RECIPIENTS - atPause });

      await worker.runOnce();
      expect(received()).toHaveLength(atPause);

      hook = async () => undefined;
      expect((await control('resume', send.utr).expect(200)).body).toEqual({ status: 'success', message: 'Single Send Resumed' });
      expect((await f.send(send.id)).status).toBe(SINGLE_SEND_STATUS.running);
      await worker.runOnce();
    } finally {
      await close();
    }
    expect(received().sort()).toEqual([...send.addresses].sort());
    const done = await f.send(send.id);
    expect(done.status).toBe(SINGLE_SEND_STATUS.completed);
    expect(Number(done.delivered)).toBe(RECIPIENTS);
    const details = await h.api(alice).get(`/single-send/details?utr=${send.utr}`).expect(200);
    expect(details.body.message.singleSend).toEqual([expect.objectContaining({ status: SINGLE_SEND_STATUS.completed, delivered: RECIPIENTS })]);
  });

  test('when a running send is cancelled then what was not sent never is, and the counts are those so far', async () => {
    const send = await sendTo('Cancelled');
    let accepted = 0;
    hook = async () => {
      if ((accepted += 1) === 10) expect((await control('cancel', send.utr).expect(200)).body).toEqual({ status: 'success', message: 'Single Send Cancelled' });
    };
    const { worker, close } = testWorker(h, sink.url);
    try {
      await worker.runOnce();
      await worker.runOnce();
    } finally {
      await close();
    }
    const sent = received().length;
    expect(sent).toBeGreaterThanOrEqual(10);
    expect(sent).toBeLessThan(RECIPIENTS);
    expect(new Set(received()).size).toBe(sent);
    const cancelled = await f.send(send.id);
    expect(cancelled.status).toBe(SINGLE_SEND_STATUS.cancelled);
    expect(Number(cancelled.delivered)).toBe(sent);
    expect(await states(send.id)).toEqual({ [MESSAGE_STATE.sent]: sent, [MESSAGE_STATE.cancelled]: RECIPIENTS - sent });
    const refusedResume = await control('resume', send.utr).expect(409);
    expect(refusedResume.body).toEqual({ status: 'failed', errors: 'Only a paused single send can be resumed.' });
    await control('pause', send.utr).expect(409);
    await control('cancel', send.utr).expect(409);
    const refusedDelete = await h.api(alice).delete(`/single/send/delete?utr=${send.utr}`).expect(409);
    expect(refusedDelete.body).toEqual({ status: 'failed', errors: 'This single send was cancelled and is kept for its statistics; it cannot be deleted.' });
  });

  test('when a scheduled send is paused before its time then it does not start; resumed, it is scheduled again', async () => {
    const type = await addContactType(h, alice, 'Later');
    await f.contact(alice.user_id, type, 'later@example.org', { first_name: 'Lee' });
    const id = await f.singleSend(alice.user_id, { senderId: setup.sender, groupId: setup.group, to: [{ contactType: type }], dueAt: new Date(Date.now() + 3_600_000) });
    const utr = String((await f.send(id)).utr);
    await control('pause', utr).expect(200);
    expect((await f.send(id)).status).toBe(SINGLE_SEND_STATUS.paused);
    await control('resume', utr).expect(200);
    expect((await f.send(id)).status).toBe(SINGLE_SEND_STATUS.ready);
    expect(await f.ledger(id)).toEqual([]);
  });

  test('when the send is sent, unknown, another account\'s or the utr is missing then 409, 404 or 422', async () => {
    const type = await addContactType(h, alice, 'Done');
    const id = await f.singleSend(alice.user_id, { senderId: setup.sender, groupId: setup.group, to: [{ contactType: type }], status: SINGLE_SEND_STATUS.completed });
    const utr = String((await f.send(id)).utr);
    expect((await control('pause', utr).expect(409)).body).toEqual({ status: 'failed', errors: 'Only a scheduled or sending single send can be paused.' });
    expect((await control('cancel', utr).expect(409)).body).toEqual({ status: 'failed', errors: 'This single send has already been sent.' });
    await control('resume', '00000000-0000-4000-8000-000000000000').expect(404);
    const bob = await h.account();
    await h.api(bob).get(`/single/send/pause?utr=${utr}`).expect(404);
    const missing = await h.api(alice).get('/single/send/pause').expect(422);
    expect(missing.body).toEqual({ status: 'failed', errors: { utr: ['The utr field is required.'] } });
  });
});
