import { createHookDeliverer, HookDelivererOptions } from '../../src/workers/hook-deliverer';
import { HOOK_EVENTS } from '../../src/lib/constants';
import { createSigner, TOKEN_PURPOSE } from '../../src/lib/signed-token';
import { recordFeedback } from '../../src/services/delivery/feedback';
import { addContact, addContactType, countryId, manualClock, sendingFixtures, testWorker } from '../support/fixtures';
import { useHarness, TestAccount } from '../support/harness';
import { startSmtpSink, useSmtpSink } from '../support/smtp';
import { failFirstTime, startWebhookReceiver, WebhookReceiver } from '../support/webhook-receiver';

const HOUR = 3_600_000;

describe('outgoing webhooks are delivered signed, once, in order', () => {
  const h = useHarness({ WEBHOOK_ALLOW_PRIVATE: '1' });
  const f = sendingFixtures(h);
  const sink = useSmtpSink();
  const receivers: WebhookReceiver[] = [];
  afterAll(() => Promise.all(receivers.map((r) => r.close())));

  async function receiverFor(account: TestAccount, events: readonly string[], options: Parameters<typeof startWebhookReceiver>[0] = {}) {
    const receiver = await startWebhookReceiver(options);
    receivers.push(receiver);
    const saved = await h.api(account).post('/webhooks/save').send({ url: receiver.url, events }).expect(200);
    receiver.secret = saved.body.message.webhook.secret;
    return { receiver, id: Number(saved.body.message.webhook.id) };
  }

  const deliverer = (clock: ReturnType<typeof manualClock>, options: HookDelivererOptions = {}, allowPrivate = true) =>
    createHookDeliverer({ db: h.runtime.db, config: { webhookAllowPrivate: allowPrivate }, logger: h.runtime.logger, secret: h.runtime.secret }, { now: clock.now, ...options });

  /** Delivers until nothing is pending, moving the clock past each retry (at most `rounds` times). */
  async function deliverAll(clock: ReturnType<typeof manualClock>, rounds = 8, options: HookDelivererOptions = {}): Promise<void> {
    const d = deliverer(clock, options);
    for (let i = 0; i < rounds; i += 1) {
      await d.runOnce();
      const [{ n }] = await h.runtime.db('webhook_deliveries').where({ state: 0 }).count({ n: '*' });
      if (Number(n) === 0) return;
      clock.advance(HOUR);
    }
  }

  test('when the receiver answers 500 the first time then after retries it has every event exactly once, each verified by standardwebhooks, and a contact\'s events in order', async () => {
    const alice = await h.account();
    const { receiver, id: hookId } = await receiverFor(alice, HOOK_EVENTS, { answer: failFirstTime });
    const type = await addContactType(h, alice, 'Readers');
    const country = await countryId(h, 'FR');
    const emails = ['ann@example.org', 'bea@example.org', 'cy@example.org'];
    for (const email of emails) await addContact(h, alice, { contact_type_id: type, email, first_name: 'F', last_name: 'L', country });
    const sender = await f.sender(alice.user_id);
    const group = await f.group(alice.user_id);
    const sendId = await f.singleSend(alice.user_id, { senderId: sender, groupId: group, to: [{ contactType: type }] });
    const { worker, close } = testWorker(h, sink.url);
    await worker.runOnce().finally(close);

    // The recipients open and leave, through the pixel and one-click.
    const signer = createSigner(h.runtime.secret);
    const messages = await h.runtime.db('send_messages').where({ single_send_id: sendId }).orderBy('id').select('id', 'email');
    const token = (email: string) => signer.sign(TOKEN_PURPOSE.message, Number(messages.find((m) => m.email === email)!.id));
    await h.runtime.services.tracking.recordOpen(token('ann@example.org'), { userAgent: 'Mozilla/5.0 (Macintosh) Thunderbird/128.0', at: new Date(Date.now() + HOUR) });
    await h.runtime.services.tracking.recordOpen(token('ann@example.org'), { userAgent: 'Mozilla/5.0 (Macintosh) Thunderbird/128.0' });
    await h.runtime.services.preferences.oneClickUnsubscribe(token('bea@example.org'));
    await h.runtime.services.preferences.oneClickUnsubscribe(token('bea@example.org'));

    const clock = manualClock(new Date());
    await deliverAll(clock);

    expect(receiver.forged).toBe(0);
    // Each request was refused once, then accepted when it came again with the same webhook-id.
    const firsts = receiver.requests.filter((r) => r.status === 500).map((r) => r.webhookId).sort();
    expect(receiver.accepted.map((a) => a.webhookId).sort()).toEqual(firsts);
    const events = receiver.events();
    expect(new Set(events.map((e) => e.id)).size).toBe(events.length);
    expect(events.every((e) => e.account_id === alice.user_id)).toBe(true);
    expect(events.map((e) => e.type).sort()).toEqual(
      [
        ...emails.map(() => 'contact.created'),
        ...emails.map(() => 'message.delivered'),
        'message.opened',
        'contact.unsubscribed',
        'single_send.started',
        'single_send.completed',
      ].sort(),
    );
    const send = await f.send(sendId);
    expect(events.find((e) => e.type === 'single_send.completed')!.data).toEqual({
      single_send_utr: send.utr,
      single_send_name: 'November news',
      triggered: 3,
      delivered: 3,
      bounces: 0,
      failed: 0,
    });
    expect(events.find((e) => e.type === 'contact.unsubscribed')!.data).toMatchObject({ email: 'bea@example.org', global: false, unsubscribe_group_ids: [group], source: 'one_click' });
    expect(events.find((e) => e.type === 'message.opened')!.data).toMatchObject({ email: 'ann@example.org', single_send_utr: send.utr, automated: false });
    for (const email of emails) {
      const ofContact = events.filter((e) => e.data.email === email || (e.data.contact as { email?: string } | undefined)?.email === email).map((e) => e.type);
      expect({ email, ofContact: ofContact.slice(0, 2) }).toEqual({ email, ofContact: ['contact.created', 'message.delivered'] });
    }
    // The log shows each delivery delivered, with the answer and the attempts it took.
    const log = (await h.api(alice).get(`/webhooks/deliveries?id=${hookId}`).expect(200)).body.message.deliveries;
    expect(log).toHaveLength(events.length);
    expect(log.every((d: { status: string; response_code: number; attempts: number }) => d.status === 'delivered' && d.response_code === 200 && d.attempts === 2)).toBe(true);
  });

  test('when a send delivers many messages then they arrive in batches of at most the bound, one request at a time, even with two workers', async () => {
    const bob = await h.account();
    const { receiver } = await receiverFor(bob, ['message.delivered'], { delayMs: 20 });
    const type = await addContactType(h, bob, 'Many');
    await f.contacts(bob.user_id, type, 25);
    const sendId = await f.singleSend(bob.user_id, { senderId: await f.sender(bob.user_id), groupId: await f.group(bob.user_id), to: [{ contactType: type }] });
    const { worker, close } = testWorker(h, sink.url);
    await worker.runOnce().finally(close);

    const clock = manualClock(new Date());
    await Promise.all([deliverer(clock, { batchSize: 10 }).runOnce(), deliverer(clock, { batchSize: 10 }).runOnce()]);

    expect(receiver.accepted.map((a) => (a.body.data as { events: unknown[] }).events.length)).toEqual([10, 10, 5]);
    expect(receiver.maxInFlight).toBe(1);
    const events = receiver.events();
    expect(new Set(events.map((e) => e.data.message_id)).size).toBe(25);
    const ledger = await h.runtime.db('send_messages').where({ single_send_id: sendId }).pluck('id');
    expect(events.map((e) => Number(e.data.message_id)).sort((a, b) => a - b)).toEqual(ledger.map(Number).sort((a, b) => a - b));
    expect(receiver.accepted[0].body).toEqual({ id: expect.stringMatching(/^msg_/), type: 'message.delivered', created_at: expect.any(String), account_id: bob.user_id, data: { events: expect.any(Array) } });
  });

  test('when the receiver keeps failing then retries back off for 24 hours and the deliveries are failed and counted', async () => {
    const carol = await h.account();
    const { receiver, id: hookId } = await receiverFor(carol, ['contact.created'], { answer: () => 503 });
    await addContact(h, carol, { contact_type_id: await addContactType(h, carol, 'Later'), email: 'later@example.org', first_name: 'L', last_name: 'L', country: await countryId(h, 'FR') });
    const clock = manualClock(new Date());
    const d = deliverer(clock);
    const gaps: number[] = [];
    let last = clock.now().getTime();
    for (let i = 0; i < 40; i += 1) {
      const before = receiver.requests.length;
      await d.runOnce();
      if (receiver.requests.length > before) {
        gaps.push(clock.now().getTime() - last);
        last = clock.now().getTime();
      }
      clock.advance(HOUR);
      if (i > 10 && (await h.runtime.services.outgoingWebhooks.deliveryCounts({ userId: carol.user_id }, hookId)).failed === 1) break;
    }
    expect(await h.runtime.services.outgoingWebhooks.deliveryCounts({ userId: carol.user_id }, hookId)).toEqual({ pending: 0, delivered: 0, failed: 1 });
    // Backing off: later retries wait longer than the first ones; all within 24 hours of the event.
    expect(gaps[gaps.length - 1]).toBeGreaterThan(gaps[1]);
    expect(receiver.requests.length).toBeGreaterThan(5);
    expect(receiver.requests.length).toBeLessThan(20);
    const [row] = (await h.api(carol).get(`/webhooks/deliveries?id=${hookId}`).expect(200)).body.message.deliveries;
    expect(row).toMatchObject({ status: 'failed', response_code: 503, error: 'the endpoint answered 503', next_attempt_at: null, attempts: receiver.requests.length });
  });

  test('when a saved URL comes to resolve to a private address then nothing is sent to it and the log says why', async () => {
    const dave = await h.account();
    const receiver = await startWebhookReceiver();
    receivers.push(receiver);
    const saved = await h.api(dave).post('/webhooks/save').send({ url: receiver.url.replace('127.0.0.1', 'localhost'), events: ['contact.created'] }).expect(200);
    await addContact(h, dave, { contact_type_id: await addContactType(h, dave, 'Private'), email: 'p@example.org', first_name: 'P', last_name: 'P', country: await countryId(h, 'FR') });
    await deliverer(manualClock(new Date()), {}, false).runOnce();
    expect(receiver.requests).toEqual([]);
    const [row] = (await h.api(dave).get(`/webhooks/deliveries?id=${saved.body.message.webhook.id}`).expect(200)).body.message.deliveries;
    expect(row).toMatchObject({ status: 'pending', attempts: 1, response_code: null, error: 'localhost resolves to a private address' });
  });

  test('when an automation goes live and pauses and an import finishes then each is one event with its data', async () => {
    const erin = await h.account();
    const { receiver } = await receiverFor(erin, ['automation.live', 'automation.paused', 'import.finished']);
    const type = await addContactType(h, erin, 'Journeys');
    const automation = await f.automation(erin.user_id, { type: 'welcome', contactType: type, groupId: await f.group(erin.user_id) });
    const { worker, close } = testWorker(h, sink.url);
    try {
      await f.setAutomationStatus(automation, 1);
      await worker.runOnce();
      await worker.runOnce();
      await f.setAutomationStatus(automation, 2);
      await worker.runOnce();
    } finally {
      await close();
    }
    const csv = 'email,first_name\nnew1@example.org,Ann\nnot-an-email,Bob\n';
    await h.api(erin).post('/contacts/upload-csv').field('contact_type_id', String(type)).attach('file', Buffer.from(csv), 'leads.csv').expect(200);
    await deliverAll(manualClock(new Date()));
    const record = await f.automationRecord(automation);
    expect(receiver.events().map((e) => [e.type, e.data])).toEqual([
      ['automation.live', { automation_utr: record.utr, automation_name: 'welcome journey', automation_type: 1 }],
      ['automation.paused', { automation_utr: record.utr, automation_name: 'welcome journey', automation_type: 1 }],
      ['import.finished', { contact_type_id: type, rows: 2, created: 1, updated: 0, skipped: 1, unsubscribed: 0, errors: [{ row: 3, reason: expect.any(String) }] }],
    ]);
  });

  test('when a message bounces at SMTP time, a link is clicked twice and a complaint comes back then each is one event; erasing the address deletes its events', async () => {
    const fay = await h.account();
    const { receiver, id: hookId } = await receiverFor(fay, ['message.bounced', 'message.clicked', 'message.complained', 'message.delivered']);
    const refusing = await startSmtpSink({ onRecipient: (address) => (address === 'nope@example.org' ? { code: 550, message: '5.1.1 no such user' } : undefined) });
    const type = await addContactType(h, fay, 'Mixed');
    await f.contact(fay.user_id, type, 'nope@example.org');
    await f.contact(fay.user_id, type, 'reader@example.org');
    const sendId = await f.singleSend(fay.user_id, {
      senderId: await f.sender(fay.user_id),
      groupId: await f.group(fay.user_id),
      to: [{ contactType: type }],
      html: '<html><body><p>Hi</p><a href="https://example.com/offer">Offer</a></body></html>',
    });
    const { worker, close } = testWorker(h, refusing.url);
    await worker.runOnce().finally(async () => {
      await close();
      await refusing.close();
    });
    const reader = await h.runtime.db('send_messages').where({ single_send_id: sendId, email: 'reader@example.org' }).first('id');
    const token = createSigner(h.runtime.secret).sign(TOKEN_PURPOSE.message, Number(reader.id));
    expect(await h.runtime.services.tracking.recordClick(token, 1)).toBe('https://example.com/offer');
    expect(await h.runtime.services.tracking.recordClick(token, 1)).toBe('https://example.com/offer');
    const complaint = { messageId: Number(reader.id), event: 'complaint' as const, diagnostic: 'abuse', source: 'arf' };
    await recordFeedback(h.runtime.db, complaint, { now: new Date(), softBounceLimit: 3 });
    await recordFeedback(h.runtime.db, complaint, { now: new Date(), softBounceLimit: 3 });

    await deliverAll(manualClock(new Date()));
    const byType = (type: string) => receiver.events().filter((e) => e.type === type).map((e) => e.data);
    expect(byType('message.bounced')).toEqual([expect.objectContaining({ email: 'nope@example.org', permanent: true, smtp_code: 550 })]);
    expect(byType('message.delivered')).toEqual([expect.objectContaining({ email: 'reader@example.org', message_id: Number(reader.id) })]);
    expect(byType('message.clicked')).toEqual([expect.objectContaining({ email: 'reader@example.org', url: 'https://example.com/offer' })]);
    expect(byType('message.complained')).toEqual([expect.objectContaining({ email: 'reader@example.org', source: 'arf' })]);

    const erased = await h.api(fay).post('/contacts/erase').send({ email: 'reader@example.org' }).expect(200);
    expect(erased.body.erased.webhook_deliveries).toBe(3);
    const left = (await h.api(fay).get(`/webhooks/deliveries?id=${hookId}`).expect(200)).body.message.deliveries;
    expect(left.map((d: { type: string }) => d.type)).toEqual(['message.bounced']);
  });
});
