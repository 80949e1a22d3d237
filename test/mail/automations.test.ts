import { useHarness } from '../support/harness';
import request from 'supertest';
import { addContactType, header, manualClock, sendingFixtures, testWorker, useSendingSetup } from '../support/fixtures';
import { useSmtpSink } from '../support/smtp';
import { runAutomations } from '../../src/services/campaigns/enrolment';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

describe('automations', () => {
  const h = useHarness();
  const f = sendingFixtures(h);
  const setup = useSendingSetup(h);
  const alice = setup.account;
  const sink = useSmtpSink({ emptyBeforeEach: true });

  const received = () => sink.messages.map((m) => `${m.to[0]}: ${m.parsed.subject}`).sort();

  test('when a welcome automation is live then only contacts who join afterwards receive its steps, in order, at their waiting periods', async () => {
    const clock = manualClock(new Date(Date.now() + 10 * DAY));
    const type = await addContactType(h, alice, 'Signups');
    await f.contact(alice.user_id, type, 'early@example.org', { first_name: 'Early' });
    const automation = await f.automation(alice.user_id, { type: 'welcome', contactType: type, groupId: setup.group });
    await f.schedule(alice.user_id, automation, { senderId: setup.sender, subject: 'Welcome ((first_name))', waitingPeriod: 1, waitingType: 'instantly' });
    await f.schedule(alice.user_id, automation, { senderId: setup.sender, subject: 'Two days in, ((first_name))', waitingPeriod: 2, waitingType: 'days' });
    const { worker, close } = testWorker(h, sink.url, { now: clock.now });
    try {
      await worker.runOnce(); // a draft does nothing
      await f.setAutomationStatus(automation, 1);
      await worker.runOnce();
      expect(received()).toEqual([]);

      await f.contact(alice.user_id, type, 'new@example.org', { first_name: 'Nina' });
      clock.advance(60_000);
      await worker.runOnce();
      expect(received()).toEqual(['new@example.org: Welcome Nina']);

      clock.advance(DAY);
      await worker.runOnce();
      expect(received()).toHaveLength(1);
      clock.advance(DAY);
      await worker.runOnce();
      expect(received()).toEqual(['new@example.org: Two days in, Nina', 'new@example.org: Welcome Nina']);
      clock.advance(10 * DAY);
      await worker.runOnce();
      expect(received()).toHaveLength(2);

      // A schedule added later reaches the contact who had finished, its wait after the last step.
      await f.schedule(alice.user_id, automation, { senderId: setup.sender, subject: 'One more, ((first_name))', waitingPeriod: 5, waitingType: 'hours' });
      await worker.runOnce();
      expect(received()).toHaveLength(3);
      expect(received()).toContain('new@example.org: One more, Nina');
    } finally {
      await close();
    }
    // Opens and unsubscribes of its messages add up in the automation's statistics.
    const first = sink.messages.find((m) => m.parsed.subject === 'Welcome Nina')!;
    const pixel = new URL(/<img src="([^"]+\.gif)"/.exec(String(first.parsed.html))![1]).pathname;
    await request(h.runtime.app).get(pixel).expect(200);
    await request(h.runtime.app).get(pixel).expect(200);
    const oneClick = new URL(/^<([^>]+)>/.exec(header(first.raw, 'List-Unsubscribe')!)![1]).pathname;
    await request(h.runtime.app).post(oneClick).type('form').send('List-Unsubscribe=One-Click').expect(200);
    expect(await f.automationRecord(automation)).toMatchObject({
      total_triggered: 3,
      total_delivered: 3,
      total_bounces: 0,
      total_unique_opens: 1,
      total_opens: 2,
      total_unsubscribe: 1,
    });
  });

  test('when paused then nothing is sent; set-live resumes; unsubscribed and deleted contacts leave', async () => {
    const clock = manualClock(new Date(Date.now() + 30 * DAY));
    const type = await addContactType(h, alice, 'Customers');
    await f.contact(alice.user_id, type, 'ann@example.org', { first_name: 'Ann' });
    const bea = await f.contact(alice.user_id, type, 'bea@example.org', { first_name: 'Bea' });
    await f.contact(alice.user_id, type, 'cy@example.org', { first_name: 'Cy' });
    const automation = await f.automation(alice.user_id, { type: 'custom', contactType: type, groupId: setup.group });
    await f.schedule(alice.user_id, automation, { senderId: setup.sender, subject: 'First for ((first_name))', waitingPeriod: 1, waitingType: 'instantly' });
    await f.schedule(alice.user_id, automation, { senderId: setup.sender, subject: 'Later for ((first_name))', waitingPeriod: 3, waitingType: 'hours' });
    const { worker, close } = testWorker(h, sink.url, { now: clock.now });
    try {
      // A custom automation enrols every member at go-live.
      await f.setAutomationStatus(automation, 1);
      await worker.runOnce();
      expect(received()).toEqual(['ann@example.org: First for Ann', 'bea@example.org: First for Bea', 'cy@example.org: First for Cy']);

      await f.setAutomationStatus(automation, 2);
      await f.groupUnsubscribe(alice.user_id, setup.group, 'cy@example.org');
      await h.runtime.db('contacts').where({ id: bea }).update({ deleted_at: new Date().toISOString() });
      clock.advance(4 * HOUR);
      await worker.runOnce();
      expect(received()).toHaveLength(3);

      await f.setAutomationStatus(automation, 1);
      await worker.runOnce();
      expect(received()).toEqual([
        'ann@example.org: First for Ann',
        'ann@example.org: Later for Ann',
        'bea@example.org: First for Bea',
        'cy@example.org: First for Cy',
      ]);
    } finally {
      await close();
    }
    const enrolments = await h.runtime.db('automation_enrolments').where({ automation_id: automation }).orderBy('email_key').select('email_key', 'state');
    expect(enrolments).toEqual([
      { email_key: 'ann@example.org', state: 0 },
      { email_key: 'bea@example.org', state: 1 },
      { email_key: 'cy@example.org', state: 1 },
    ]);
    expect(await f.automationRecord(automation)).toMatchObject({ total_triggered: 4, total_delivered: 4 });
  });

  test('when paused after a step was queued then the queued message waits until set-live', async () => {
    const clock = manualClock(new Date(Date.now() + 60 * DAY));
    const type = await addContactType(h, alice, 'Queued');
    await f.contact(alice.user_id, type, 'dee@example.org', { first_name: 'Dee' });
    const automation = await f.automation(alice.user_id, { type: 'custom', contactType: type, groupId: setup.group });
    await f.schedule(alice.user_id, automation, { senderId: setup.sender, subject: 'Hello ((first_name))', waitingPeriod: 1, waitingType: 'instantly' });
    await f.setAutomationStatus(automation, 1);
    // The step is queued in the ledger, then the automation is paused before any worker sends it.
    await runAutomations(h.runtime.db, clock.now());
    expect(await h.runtime.db('send_messages').where({ automation_id: automation }).pluck('email')).toEqual(['dee@example.org']);
    await f.setAutomationStatus(automation, 2);
    const { worker, close } = testWorker(h, sink.url, { now: clock.now });
    try {
      await worker.runOnce();
      expect(received()).toEqual([]);
      await f.setAutomationStatus(automation, 1);
      await worker.runOnce();
      expect(received()).toEqual(['dee@example.org: Hello Dee']);
    } finally {
      await close();
    }
  });
});
