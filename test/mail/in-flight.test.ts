import * as countFailed from '../../migrations/20261122_0611_count-failed';
import { createSendingWorker } from '../../src/workers/send-worker';
import { MESSAGE_STATE } from '../../src/lib/constants';
import { startDueSingleSends } from '../../src/services/delivery/ledger';
import type { OutgoingMessage } from '../../src/mail/outgoing-message';
import type { MailTransport } from '../../src/mail/transport';
import { useHarness, TestAccount } from '../support/harness';
import { addContactType, sendingFixtures, testWorker } from '../support/fixtures';
import { until } from '../support/processes';
import { useSmtpSink } from '../support/smtp';

/**
 * What a dead worker leaves: its claimed rows stay `sending` under its lease, and `unconfirmed`
 * counts the transmissions it began and never recorded. These tests write that state directly
 * (the crash test makes it with SIGKILL) and let a live worker take the rows over.
 */
describe('messages in flight when a worker died', () => {
  const h = useHarness();
  const f = sendingFixtures(h);
  let alice: TestAccount;
  const sink = useSmtpSink({
    onRecipient: (address) => (address.startsWith('stuck@') ? { code: 452, message: '4.2.2 Mailbox full' } : undefined),
    emptyBeforeEach: true,
  });

  beforeAll(async () => {
    alice = await h.account();
  });

  /** A started send to `emails`, whose rows a dead worker holds with the given `unconfirmed`. */
  async function abandonedSend(emails: Record<string, number>): Promise<number> {
    const sender = await f.sender(alice.user_id);
    const group = await f.group(alice.user_id);
    const type = await addContactType(h, alice, `Type ${Math.random()}`);
    for (const email of Object.keys(emails)) await f.contact(alice.user_id, type, email);
    const sendId = await f.singleSend(alice.user_id, { senderId: sender, groupId: group, to: [{ contactType: type }] });
    await startDueSingleSends(h.runtime.db, new Date());
    const expired = new Date(Date.now() - 1000).toISOString();
    for (const [email, unconfirmed] of Object.entries(emails)) {
      await h.runtime.db('send_messages')
        .where({ single_send_id: sendId, email })
        .update({ state: MESSAGE_STATE.sending, lease_owner: 'dead-worker', available_at: expired, attempts: 1, unconfirmed });
    }
    return sendId;
  }

  test('when a dead worker had begun a message once then the next worker sends it again, once, and records it delivered', async () => {
    const sendId = await abandonedSend({ 'maybe@example.org': 1, 'untouched@example.org': 0 });
    const { worker, close } = testWorker(h, sink.url);
    await worker.runOnce().finally(close);

    expect(sink.messages.map((m) => m.to[0]).sort()).toEqual(['maybe@example.org', 'untouched@example.org']);
    const rows = await f.ledger(sendId);
    expect(rows.map((r) => ({ email: r.email, state: Number(r.state), unconfirmed: Number(r.unconfirmed) }))).toEqual(
      expect.arrayContaining([
        { email: 'maybe@example.org', state: MESSAGE_STATE.sent, unconfirmed: 0 },
        { email: 'untouched@example.org', state: MESSAGE_STATE.sent, unconfirmed: 0 },
      ]),
    );
    expect(await f.send(sendId)).toMatchObject({ status: 3, triggered: 2, delivered: 2, failed: 0 });
  });

  test('when a message was in flight at two crashes then it is not sent a third time: it is counted failed, with the reason, and the send completes', async () => {
    const sendId = await abandonedSend({ 'twice@example.org': 2, 'fine@example.org': 0 });
    const { worker, close } = testWorker(h, sink.url);
    await worker.runOnce().finally(close);

    expect(sink.messages.map((m) => m.to[0])).toEqual(['fine@example.org']);
    const twice = (await f.ledger(sendId)).find((r) => r.email === 'twice@example.org')!;
    expect(Number(twice.state)).toBe(MESSAGE_STATE.failed);
    expect(String(twice.last_error)).toContain('not sent a third time');
    expect(await f.send(sendId)).toMatchObject({ status: 3, triggered: 2, delivered: 1, bounces: 0, failed: 1 });
  });

  test('when an automation step is refused with 4xx until its retries run out then the automation counts it in total_failed', async () => {
    const sender = await f.sender(alice.user_id);
    const group = await f.group(alice.user_id);
    const type = await addContactType(h, alice, 'Journey');
    await f.contact(alice.user_id, type, 'stuck@example.org');
    await f.contact(alice.user_id, type, 'glad@example.org');
    const automation = await f.automation(alice.user_id, { type: 'custom', contactType: type, groupId: group });
    await f.schedule(alice.user_id, automation, { senderId: sender, subject: 'Welcome', waitingPeriod: 1, waitingType: 'instantly' });
    await f.setAutomationStatus(automation, 1);
    const { worker, close } = testWorker(h, sink.url, { maxAttempts: 1 });
    await worker.runOnce().finally(close);

    expect(sink.messages.map((m) => m.to[0])).toEqual(['glad@example.org']);
    const { utr } = await f.automationRecord(automation);
    const details = (await h.api(alice).get(`/automations/details?utr=${String(utr)}`).expect(200)).body.message.automation;
    expect(details).toMatchObject({ total_triggered: 2, total_delivered: 1, total_bounces: 0, total_failed: 1 });
  });

  test('when failed messages were recorded before the failed counters existed then the data migration counts them', async () => {
    const sendId = await abandonedSend({ 'old1@example.org': 0, 'old2@example.org': 0, 'sent@example.org': 0 });
    await h.runtime.db('send_messages').where({ single_send_id: sendId }).whereNot({ email: 'sent@example.org' }).update({ state: MESSAGE_STATE.failed });
    await h.runtime.db('send_messages').where({ single_send_id: sendId, email: 'sent@example.org' }).update({ state: MESSAGE_STATE.sent });
    await h.runtime.db('single_sends').where({ id: sendId }).update({ failed: 0 });

    await countFailed.up(h.runtime.db);
    expect(await f.send(sendId)).toMatchObject({ failed: 2 });
  });

  test('when a worker sends with two lanes then each message is marked begun before it leaves, and no more than the transport\'s concurrency are begun and unrecorded at once', async () => {
    const sender = await f.sender(alice.user_id);
    const group = await f.group(alice.user_id);
    const type = await addContactType(h, alice, 'Lanes');
    await f.contacts(alice.user_id, type, 60, 'lanes.test');
    const sendId = await f.singleSend(alice.user_id, { senderId: sender, groupId: group, to: [{ contactType: type }] });

    const db = h.runtime.db;
    const seen: Array<{ own: number; begun: number }> = [];
    const transport: MailTransport = {
      kind: 'smtp',
      concurrency: 4,
      async send(message: OutgoingMessage) {
        // What a crash at this instant would leave: this message begun, and how many in all.
        const own = await db('send_messages').where({ single_send_id: sendId, email: message.to }).first('unconfirmed');
        const begun = await db('send_messages').where({ state: MESSAGE_STATE.sending }).where('unconfirmed', '>', 0).count({ n: '*' }).first();
        seen.push({ own: Number(own?.unconfirmed), begun: Number(begun?.n) });
        return { messageId: 'x', response: '250 OK' };
      },
      close: () => undefined,
    };
    const worker = createSendingWorker(
      { db, config: { ...h.runtime.config, mailRate: 0 }, logger: h.runtime.logger, secret: h.runtime.secret, transport },
      { batchSize: 8, lanes: 2, pollMs: 20 },
    );
    worker.start();
    await until(async () => Number((await f.send(sendId)).status) === 3, 30_000, 'the send to complete');
    await worker.stop();

    expect(seen).toHaveLength(60);
    expect(seen.every((s) => s.own === 1)).toBe(true);
    expect(Math.max(...seen.map((s) => s.begun))).toBeLessThanOrEqual(4);
    expect(await f.send(sendId)).toMatchObject({ status: 3, delivered: 60 });
  });
});
