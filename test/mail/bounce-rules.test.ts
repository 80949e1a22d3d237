import { MESSAGE_STATE } from '../../src/lib/constants';
import { createBounceTokens } from '../../src/lib/verp';
import { queueSystemMail } from '../../src/services/delivery/notices';
import { createMailTransport } from '../../src/mail/transport';
import { createSendingWorker } from '../../src/workers/send-worker';
import { useHarness, TestAccount } from '../support/harness';
import { addContactType, header, manualClock, sendingFixtures, testWorker } from '../support/fixtures';
import { useSmtpSink } from '../support/smtp';

const DAY = 24 * 3_600_000;

describe('bounce and complaint rules', () => {
  const h = useHarness({ BOUNCE_DOMAIN: 'Bounces.Campaigns.test' });
  const f = sendingFixtures(h);
  let alice: TestAccount;
  const sink = useSmtpSink({ emptyBeforeEach: true });
  let sender: number;
  let group: number;

  beforeAll(async () => {
    alice = await h.account();
    sender = await f.sender(alice.user_id);
    group = await f.group(alice.user_id);
  });

  /** Sends one single send to `emails` (a new contact type) and returns its id and ledger. */
  async function sendTo(emails: string[], now = () => new Date(), existingType?: number) {
    const type = existingType ?? (await addContactType(h, alice, `Type ${Math.random()}`));
    if (!existingType) for (const email of emails) await f.contact(alice.user_id, type, email);
    const sendId = await f.singleSend(alice.user_id, { senderId: sender, groupId: group, to: [{ contactType: type }], dueAt: now() });
    const { worker, close } = testWorker(h, sink.url, { now });
    await worker.runOnce().finally(close);
    const ledger = await f.ledger(sendId);
    return { sendId, type, byEmail: (email: string) => Number(ledger.find((r) => r.email === email)!.id) };
  }

  const suppressions = async () =>
    (await h.api(alice).get('/suppressions').expect(200)).body.message.suppressions.map((s: Record<string, unknown>) => `${s.email_address} ${s.reason} ${s.source}`);

  test('when BOUNCE_DOMAIN is set then campaign and system mail leave with a VERP envelope sender and an X-Campaign-Message header naming their ledger row', async () => {
    const { byEmail } = await sendTo(['verp@example.org']);
    const systemId = await queueSystemMail(h.runtime.db, alice.user_id, { from: 'Campaigns <no-reply@campaigns.test>', to: 'owner@example.org', subject: 'Notice', html: '<p>hi</p>' });
    const { worker, close } = testWorker(h, sink.url);
    await worker.runOnce().finally(close);

    const tokens = createBounceTokens(h.runtime.secret);
    const campaign = sink.messages.find((m) => m.to[0] === 'verp@example.org')!;
    const token = header(campaign.raw, 'X-Campaign-Message')!;
    expect(campaign.from).toBe(`bounces+${token}@bounces.campaigns.test`);
    expect(campaign.from.split('@')[0].length).toBeLessThanOrEqual(64);
    expect(tokens.verify(token)).toBe(byEmail('verp@example.org'));
    expect(campaign.parsed.from?.value[0].address).toBe('news@acme.test');

    const system = sink.messages.find((m) => m.to[0] === 'owner@example.org')!;
    expect(tokens.verify(header(system.raw, 'X-Campaign-Message')!)).toBe(systemId);
    expect(system.from).toBe(`bounces+${header(system.raw, 'X-Campaign-Message')}@bounces.campaigns.test`);
  });

  test('when BOUNCE_DOMAIN is not set then the envelope sender stays the From address and the header is still there', async () => {
    const type = await addContactType(h, alice, 'Plain envelope');
    await f.contact(alice.user_id, type, 'plain@example.org');
    await f.singleSend(alice.user_id, { senderId: sender, groupId: group, to: [{ contactType: type }] });
    const transport = createMailTransport({ smtpUrl: sink.url, outboxDir: '', dkim: undefined });
    const worker = createSendingWorker({
      db: h.runtime.db,
      config: { ...h.runtime.config, bounceDomain: undefined, mailRate: 0 },
      logger: h.runtime.logger,
      secret: h.runtime.secret,
      transport,
    });
    await worker.runOnce().finally(() => transport.close());
    const message = sink.messages.find((m) => m.to[0] === 'plain@example.org')!;
    expect(message.from).toBe('news@acme.test');
    expect(header(message.raw, 'X-Campaign-Message')).toMatch(/^[0-9a-z]+-[0-9a-f]{20}$/);
  });

  test('when a delivered message bounces hard later then it counts as a bounce once, however often the report comes, and the address is suppressed and skipped next time', async () => {
    const { sendId, type, byEmail } = await sendTo(['hard@example.org', 'kept@example.org']);
    expect(await f.send(sendId)).toMatchObject({ delivered: 2, bounces: 0 });
    const report = { event: 'bounce' as const, permanent: true, status: '5.1.1', diagnostic: 'smtp; 550 5.1.1 <hard@example.org>: Recipient address rejected', source: 'dsn' };
    expect(await h.runtime.services.feedback.record(byEmail('hard@example.org'), report)).toEqual({ result: 'recorded', singleSendId: sendId });
    expect(await h.runtime.services.feedback.record(byEmail('hard@example.org'), report)).toEqual({ result: 'duplicate' });

    expect(await f.send(sendId)).toMatchObject({ triggered: 2, delivered: 1, bounces: 1 });
    expect((await f.ledger(sendId)).find((r) => r.email === 'hard@example.org')).toMatchObject({ state: MESSAGE_STATE.bounced });
    expect(await suppressions()).toContain('hard@example.org hard_bounce dsn');

    const next = await f.singleSend(alice.user_id, { senderId: sender, groupId: group, to: [{ contactType: type }] });
    const { worker, close } = testWorker(h, sink.url);
    await worker.runOnce().finally(close);
    expect((await f.ledger(next)).map((r) => r.email)).toEqual(['kept@example.org']);
  });

  test('when an address bounces softly then it is suppressed only at the third soft bounce within 30 days', async () => {
    const clock = manualClock(new Date(Date.now() + DAY));
    const soft = { event: 'bounce' as const, permanent: false, status: '4.2.2', diagnostic: 'smtp; 452 4.2.2 Mailbox full', source: 'dsn' };
    const first = await sendTo(['full@example.org'], clock.now);
    await h.runtime.services.feedback.record(first.byEmail('full@example.org'), soft, clock.now());
    clock.advance(31 * DAY); // the first one no longer counts
    for (let i = 0; i < 2; i += 1) {
      const { byEmail, sendId } = await sendTo(['full@example.org'], clock.now, first.type);
      await h.runtime.services.feedback.record(byEmail('full@example.org'), soft, clock.now());
      expect(await f.send(sendId)).toMatchObject({ delivered: 0, bounces: 1 });
      clock.advance(DAY);
    }
    expect((await suppressions()).filter((s: string) => s.startsWith('full@'))).toEqual([]);
    const third = await sendTo(['full@example.org'], clock.now, first.type);
    await h.runtime.services.feedback.record(third.byEmail('full@example.org'), soft, clock.now());
    expect(await suppressions()).toContain('full@example.org soft_bounce dsn');
  });

  test('when a recipient complains then the address is globally unsubscribed, counted once in unsubscribes and suppressed', async () => {
    const { sendId, byEmail } = await sendTo(['angry@example.org']);
    const complaint = { event: 'complaint' as const, diagnostic: 'abuse report', source: 'arf' };
    await h.runtime.services.feedback.record(byEmail('angry@example.org'), complaint);
    await h.runtime.services.feedback.record(byEmail('angry@example.org'), complaint);
    expect(await f.send(sendId)).toMatchObject({ delivered: 1, bounces: 0, unsubscribes: 1 });
    const global = (await h.api(alice).get('/global-unsubscribes').expect(200)).body.message.unSubscribers;
    expect(global.map((g: { email_address: string }) => g.email_address)).toContain('angry@example.org');
    expect(await suppressions()).toContain('angry@example.org complaint arf');
  });

  test('when a message of an automation bounces later then its total_bounces include it', async () => {
    const type = await addContactType(h, alice, 'Journey');
    const automation = await f.automation(alice.user_id, { type: 'custom', contactType: type, groupId: group });
    await f.schedule(alice.user_id, automation, { senderId: sender, subject: 'Step one', waitingPeriod: 1, waitingType: 'instantly' });
    await f.contact(alice.user_id, type, 'journey@example.org');
    await f.setAutomationStatus(automation, 1);
    const { worker, close } = testWorker(h, sink.url);
    await worker.runOnce().finally(close);
    expect(await f.automationRecord(automation)).toMatchObject({ total_delivered: 1, total_bounces: 0 });
    const message = await h.runtime.db('send_messages').where({ automation_id: automation }).first('id');
    await h.runtime.services.feedback.record(Number(message.id), { event: 'bounce', permanent: true, status: '5.1.1', diagnostic: 'gone', source: 'mailgun' });
    expect(await f.automationRecord(automation)).toMatchObject({ total_delivered: 0, total_bounces: 1 });
  });
});
