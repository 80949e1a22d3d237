import { reserveMailSlot } from '../../src/db/rate-limits';
import { AccountRateLimiter } from '../../src/services/delivery/relays';
import { createMailTransport } from '../../src/mail/transport';
import { createSendingWorker } from '../../src/workers/send-worker';
import { workerHooks } from '../../src/workers/event-hooks';
import { TestAccount, useHarness } from '../support/harness';
import { addContactType, sendingFixtures } from '../support/fixtures';
import { useSmtpSink } from '../support/smtp';

const MAIL_RATE = 20;

describe('MAIL_RATE shared by every worker process through the database', () => {
  const h = useHarness();
  const f = sendingFixtures(h);
  const arrivals: number[] = [];
  const sink = useSmtpSink({
    onRecipient: () => {
      arrivals.push(Date.now());
      return undefined;
    },
  });

  /** A new account whose single send to `count` contacts is due. */
  async function accountWithSend(count: number): Promise<{ owner: TestAccount; sender: number }> {
    const owner = await h.account();
    const sender = await f.sender(owner.user_id, { from_email: 'news@acme.test' });
    const group = await f.group(owner.user_id);
    const type = await addContactType(h, owner, 'Readers');
    await f.contacts(owner.user_id, type, count, 'example.org');
    await f.singleSend(owner.user_id, { senderId: sender, groupId: group, to: [{ contactType: type }], subject: 'News', html: '<p>News</p>' });
    return { owner, sender };
  }

  /** `n` workers paced by MAIL_RATE (each its own process's limiter) run until nothing is due. */
  async function runWorkers(n: number): Promise<void> {
    const workers = Array.from({ length: n }, () => {
      const transport = createMailTransport({ smtpUrl: sink.url, outboxDir: '', dkim: undefined });
      const worker = createSendingWorker(
        { db: h.runtime.db, config: { ...h.runtime.config, mailRate: MAIL_RATE }, logger: h.runtime.logger, secret: h.runtime.secret, transport, hooks: workerHooks(h.runtime.services) },
        { batchSize: 4 },
      );
      return { worker, transport };
    });
    try {
      await Promise.all(workers.map(({ worker }) => worker.runOnce()));
    } finally {
      for (const { worker, transport } of workers) {
        await worker.stop();
        transport.close();
      }
    }
  }

  test('when MAIL_RATE is set then each account is paced on its own, and 0 paces nothing', async () => {
    // The limiter's sleep really waits and records who waited how long. Reservations are
    // measured from the first one, so a slow database shortens the waits but never the spacing.
    const waits: Array<{ account: string; ms: number }> = [];
    let current = '';
    const sleep = async (ms: number) => {
      waits.push({ account: current, ms });
      await new Promise((resolve) => setTimeout(resolve, ms));
    };
    const limiter = new AccountRateLimiter(h.runtime.db, 10, sleep);
    const [a, b] = [await h.account(), await h.account()];
    current = 'a';
    const started = Date.now();
    await limiter.take(a.user_id);
    expect(waits).toEqual([]); // the first message goes at once
    await limiter.take(a.user_id);
    await limiter.take(a.user_id);
    // Three messages at 10 a second: the third no sooner than 200 ms after the first slot.
    expect(Date.now() - started).toBeGreaterThanOrEqual(199);
    expect(waits.every((w) => w.ms <= 200)).toBe(true);
    current = 'b';
    await limiter.take(b.user_id);
    // Account b is not held up by account a.
    expect(waits.filter((w) => w.account === 'b')).toEqual([]);
    const none = new AccountRateLimiter(h.runtime.db, 0, sleep);
    current = 'none';
    await none.take(a.user_id);
    expect(waits.filter((w) => w.account === 'none')).toEqual([]);
  });

  test('when two limiters (two processes) reserve slots of one account then each slot is taken once, evenly spaced', async () => {
    const c = await h.account();
    const started = Date.now();
    const waits = await Promise.all(Array.from({ length: 10 }, () => reserveMailSlot(h.runtime.db, c.user_id, 100)));
    const took = Date.now() - started;
    const sorted = [...waits].sort((x, y) => x - y);
    // Ten distinct slots 100 ms apart, each wait shortened by the time since the first reservation.
    expect(sorted[0]).toBe(0);
    expect(sorted[9] - sorted[0]).toBeGreaterThanOrEqual(900 - took - 5);
    expect(sorted[9]).toBeLessThanOrEqual(900);
  });

  test('when two workers send one account\'s single send then their combined rate stays within 10% of MAIL_RATE', async () => {
    const count = 40;
    await accountWithSend(count);

    arrivals.splice(0);
    const sent = sink.messages.length;
    const started = Date.now();
    await runWorkers(2);
    expect(sink.messages.length - sent).toBe(count);
    expect(arrivals).toHaveLength(count);
    // Messages per second from the start of the send to the last arrival (one limit per process
    // would give twice the rate). Measured from the start, not from the first arrival: the first
    // message waits for its SMTP connection, which would shorten the span and inflate the rate.
    const rate = count / ((arrivals[count - 1] - started) / 1000);
    expect(rate).toBeLessThanOrEqual(MAIL_RATE * 1.1);
  });

  test('when one account has transactional and campaign mail queued then MAIL_RATE paces both together, the transactional first', async () => {
    const campaign = 30;
    const { owner, sender } = await accountWithSend(campaign);
    const receipts = Array.from({ length: 10 }, (_, i) => `receipt${i}@example.org`);
    await h.api(owner).post('/transactional/send').send({ to: receipts, sender_id: sender, subject: 'Receipt', text: 'Thanks.' }).expect(200);

    arrivals.splice(0);
    const sent = sink.messages.length;
    const started = Date.now();
    await runWorkers(1);
    const received = sink.messages.slice(sent).map((m) => m.to[0]);
    const count = campaign + receipts.length;
    expect(received).toHaveLength(count);
    // Every receipt took a slot before any campaign message did.
    expect(received.slice(0, receipts.length).sort()).toEqual([...receipts].sort());
    // Both kinds in the same slots: the receipts unpaced would give 40 messages in 1.5 s.
    const rate = count / ((arrivals[arrivals.length - 1] - started) / 1000);
    expect(rate).toBeLessThanOrEqual(MAIL_RATE * 1.1);
  });
});
