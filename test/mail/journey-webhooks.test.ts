import { createHookDeliverer } from '../../src/workers/hook-deliverer';
import { addContactType, manualClock, sendingFixtures, testWorker, useSendingSetup } from '../support/fixtures';
import { useHarness } from '../support/harness';
import { useSmtpSink } from '../support/smtp';
import { startWebhookReceiver, WebhookReceiver } from '../support/webhook-receiver';

const HOUR = 3_600_000;

describe('a journey\'s webhook step', () => {
  const h = useHarness({ WEBHOOK_ALLOW_PRIVATE: '1' });
  const f = sendingFixtures(h);
  const setup = useSendingSetup(h);
  const alice = setup.account;
  const sink = useSmtpSink();
  const receivers: WebhookReceiver[] = [];
  afterAll(() => Promise.all(receivers.map((r) => r.close())));

  test('when contacts pass a webhook step then each is posted signed through the outgoing webhook and goes on at once; a request failing after its retries is counted as failed', async () => {
    const clock = manualClock(new Date(Date.now() + 2 * HOUR));
    const good = await startWebhookReceiver({ answer: () => 200 });
    const bad = await startWebhookReceiver({ answer: () => 500 });
    receivers.push(good, bad);
    const saved = await h.api(alice).post('/webhooks/save').send({ url: good.url, events: ['contact.created'] }).expect(200);
    good.secret = saved.body.message.webhook.secret;
    bad.secret = (await h.api(alice).post('/webhooks/save').send({ url: bad.url, events: ['contact.created'] }).expect(200)).body.message.webhook.secret;

    const type = await addContactType(h, alice, 'Hooked');
    await f.contact(alice.user_id, type, 'ann@example.org', { first_name: 'Ann' });
    await f.contact(alice.user_id, type, 'ben@example.org', { first_name: 'Ben' });
    const automation = await f.automation(alice.user_id, { type: 'custom', contactType: type, groupId: setup.group });
    const stepId = await f.schedule(alice.user_id, automation, { senderId: setup.sender, subject: 'After the hooks, ((first_name))', waitingPeriod: 1, waitingType: 'instantly' });
    const stepUtr = await f.utrOf('automation_schedules', stepId);
    const utr = String((await f.automationRecord(automation)).utr);
    const graph = (hookUrl: string) => ({
      start: 'notify',
      nodes: {
        notify: { type: 'webhook', url: hookUrl, next: 'also' },
        also: { type: 'webhook', url: bad.url, next: 'mail' },
        mail: { type: 'email', schedule_utr: stepUtr },
      },
    });
    const refused = await h.api(alice).post('/automations/journey/save').send({ utr, graph: JSON.stringify(graph('https://hooks.example.org/x')) }).expect(422);
    expect(refused.body.errors.graph).toEqual(['Node "notify": \'url\' is none of your outgoing webhooks: add it under Webhooks first.']);
    await h.api(alice).post('/automations/journey/save').send({ utr, graph: JSON.stringify(graph(good.url)) }).expect(200);

    const { worker, close } = testWorker(h, sink.url, { now: clock.now });
    try {
      await f.setAutomationStatus(automation, 1);
      await worker.runOnce();
    } finally {
      await close();
    }
    // The contacts did not wait for the requests.
    expect(sink.messages.map((m) => m.to[0]).sort()).toEqual(['ann@example.org', 'ben@example.org']);

    const deliverer = createHookDeliverer({ db: h.runtime.db, config: { webhookAllowPrivate: true }, logger: h.runtime.logger, secret: h.runtime.secret }, { now: clock.now });
    for (let round = 0; round < 40; round += 1) {
      await deliverer.runOnce();
      clock.advance(4 * HOUR);
    }
    // Signed as every outgoing webhook is (the receiver verifies each request).
    expect(good.forged).toBe(0);
    const events = good.events();
    expect(events.map((e) => e.type)).toEqual(['journey.webhook', 'journey.webhook']);
    expect(events.map((e) => (e.data.contact as { email: string }).email).sort()).toEqual(['ann@example.org', 'ben@example.org']);
    expect(events[0].data).toMatchObject({ automation: { utr }, journey: { version: 1, node: 'notify' } });
    // The failing one was retried before it was given up.
    expect(bad.requests.length).toBeGreaterThan(2);
    const report = await h.api(alice).get(`/automations/journey/report?utr=${utr}`).expect(200);
    expect(report.body.message.nodes).toEqual([
      { id: 'notify', type: 'webhook', entered: 2, waiting: 0, completed: 2, yes: 0, no: 0, branches: [], failed: 0 },
      { id: 'also', type: 'webhook', entered: 2, waiting: 0, completed: 2, yes: 0, no: 0, branches: [], failed: 2 },
      { id: 'mail', type: 'email', entered: 2, waiting: 0, completed: 2, yes: 0, no: 0, branches: [], failed: 0 },
    ]);
  });
});
