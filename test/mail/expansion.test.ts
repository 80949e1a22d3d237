import { chooseWinner, expandRunningSends, startDueSingleSends } from '../../src/services/delivery/ledger';
import { MESSAGE_STATE } from '../../src/lib/constants';
import { useHarness, TestAccount } from '../support/harness';
import { sendingFixtures } from '../support/fixtures';

/** A send's ledger written while it sends: batches along a cursor, a few ahead of the sending. */
describe('the ledger of a single send, written as the send goes', () => {
  const h = useHarness();
  const f = sendingFixtures(h);
  let alice: TestAccount;

  beforeEach(async () => {
    alice = await h.account();
  });

  /** A send due now to a new contact type of `count` contacts (p0@… p<count-1>@…). */
  async function sendTo(count: number, status = 1): Promise<{ id: number; utr: string; domain: string }> {
    const domain = `d${Math.random().toString(36).slice(2, 8)}.test`;
    const { sender, group, type } = await f.basics(alice, domain);
    for (let i = 0; i < count; i += 1) await f.contact(alice.user_id, type, `p${i}@${domain}`);
    const id = await f.singleSend(alice.user_id, { senderId: sender, groupId: group, to: [{ contactType: type }], status });
    const { utr } = await h.runtime.db('single_sends').where({ id }).first('utr');
    return { id, utr, domain };
  }

  const rows = async (sendId: number) => h.runtime.db('send_messages').where({ single_send_id: sendId }).orderBy('id').select('email', 'state', 'ab_variant', 'ab_rest');
  const expand = (batch: number, everything = false) => expandRunningSends(h.runtime.db, new Date(), { batch, ahead: 2, everything });
  const control = (action: 'pause' | 'resume' | 'cancel', utr: string) => h.api(alice).get(`/single/send/${action}?utr=${utr}`).expect(200);

  test('when a send starts then its audience is counted and only a first batch written; the worker keeps two batches queued ahead, and an address unsubscribed before its batch is never written', async () => {
    const send = await sendTo(20);
    const [started] = await startDueSingleSends(h.runtime.db, new Date(), {}, { firstBatch: 4 });
    expect(started).toMatchObject({ id: send.id, recipients: 20, completed: false });
    expect(await rows(send.id)).toHaveLength(4);
    expect(await f.send(send.id)).toMatchObject({ status: 2, recipients_total: 20, triggered: 4 });

    // Two batches of four are queued ahead: nothing more is written until some of them go.
    expect(await expand(4)).toBe(1);
    expect(await rows(send.id)).toHaveLength(8);
    expect(await expand(4)).toBe(0);
    await h.runtime.db('send_messages').where({ single_send_id: send.id }).orderBy('id').limit(5).update({ state: MESSAGE_STATE.sent });
    // One batch a look, so the sending lanes wake between two.
    expect(await expand(4)).toBe(1);
    expect(await expand(4)).toBe(1);
    expect(await expand(4)).toBe(0);
    expect(await rows(send.id)).toHaveLength(16);

    // Unsubscribed before its batch is written: left out, and the total is corrected at the end.
    await f.globalUnsubscribe(alice.user_id, `p17@${send.domain}`);
    // The last four, then the look past them that finds the end.
    expect(await expand(4, true)).toBe(2);
    const ledger = await rows(send.id);
    // (Within a batch the rows' order is the database's.)
    expect(ledger.map((r: { email: string }) => r.email).sort()).toEqual(Array.from({ length: 20 }, (_, i) => `p${i}@${send.domain}`).filter((e) => e !== `p17@${send.domain}`).sort());
    expect(await f.send(send.id)).toMatchObject({ status: 2, recipients_total: 19, triggered: 19, expand_cursor: null });
    expect(await expand(4, true)).toBe(0);
  });

  test('when a send is paused during its expansion then nothing more is written until it resumes; cancelled, nothing more ever is', async () => {
    const send = await sendTo(12);
    await startDueSingleSends(h.runtime.db, new Date(), {}, { firstBatch: 3 });
    await control('pause', send.utr);
    expect(await expand(3, true)).toBe(0);
    expect((await rows(send.id)).map((r: { state: number }) => Number(r.state))).toEqual([MESSAGE_STATE.paused, MESSAGE_STATE.paused, MESSAGE_STATE.paused]);

    // Resumed: it goes on from where it stopped (its audience was being written, so it had started).
    await control('resume', send.utr);
    expect(await f.send(send.id)).toMatchObject({ status: 2 });
    expect(await expand(3)).toBe(1);
    expect(await rows(send.id)).toHaveLength(6);
    await control('cancel', send.utr);
    expect(await expand(3, true)).toBe(0);
    expect((await rows(send.id)).map((r: { state: number }) => Number(r.state))).toEqual(Array(6).fill(MESSAGE_STATE.cancelled));
  });

  test('when an A/B test\'s audience is written in batches then its share is exact, and rows written after the winner is chosen go with the winner', async () => {
    const send = await sendTo(20, 0);
    await h.api(alice).post('/single/send/ab/save').send({
      utr: send.utr,
      variants: [{ subject: 'Variant zero' }, { subject: 'Variant one' }],
      test_percent: 40,
      winner_metric: 'opens',
      wait_minutes: 60,
    }).expect(200);
    await h.runtime.db('single_sends').where({ id: send.id }).update({ status: 1, due_at: new Date().toISOString() });
    const [started] = await startDueSingleSends(h.runtime.db, new Date(), {}, { firstBatch: 3 });
    // 40% of 20: eight tested, four per variant, spread over the order of writing.
    expect(started.recipients).toBe(8);
    expect(await expand(3, true)).toBe(6);
    const ledger = await rows(send.id);
    const tested = ledger.filter((r: { state: number }) => Number(r.state) === MESSAGE_STATE.queued);
    expect(tested.map((r: { ab_variant: number }) => Number(r.ab_variant))).toEqual([0, 1, 0, 1, 0, 1, 0, 1]);
    expect(ledger.filter((r: { state: number }) => Number(r.state) === MESSAGE_STATE.held)).toHaveLength(12);
    expect(await f.send(send.id)).toMatchObject({ triggered: 8, recipients_total: 20 });

    // A second send whose winner is chosen halfway through its expansion.
    const later = await sendTo(20, 0);
    await h.api(alice).post('/single/send/ab/save').send({ utr: later.utr, variants: [{ subject: 'A' }, { subject: 'B' }], test_percent: 40, winner_metric: 'opens', wait_minutes: 60 }).expect(200);
    await h.runtime.db('single_sends').where({ id: later.id }).update({ status: 1, due_at: new Date().toISOString() });
    await startDueSingleSends(h.runtime.db, new Date(), {}, { firstBatch: 10 });
    expect(await chooseWinner(h.runtime.db, later.id, 1, new Date())).toMatchObject({ chosen: true, winner: 1, released: 6 });
    expect(await expand(5, true)).toBe(3);
    const after = await rows(later.id);
    expect(after.filter((r: { state: number }) => Number(r.state) !== MESSAGE_STATE.queued)).toHaveLength(0);
    // Four of the first ten were tested (two each); everyone else gets the winner.
    expect(after.map((r: { ab_variant: number }) => Number(r.ab_variant)).filter((v: number) => v === 0)).toHaveLength(2);
    // The rest, released or written after the choice, is marked as the rest: all but the four tested.
    expect(after.filter((r: { ab_rest: number | null }) => Number(r.ab_rest) === 1)).toHaveLength(16);
    expect(await f.send(later.id)).toMatchObject({ triggered: 20, recipients_total: 20, expand_cursor: null });
  });
});
