import { insertId, nowValue } from '../../src/db/dialect';
import { MESSAGE_KIND, MESSAGE_STATE } from '../../src/lib/constants';
import { useHarness } from '../support/harness';
import { addContactType, sendingFixtures, testWorker } from '../support/fixtures';
import { useSmtpSink } from '../support/smtp';

describe('events email every notification recipient of the account', () => {
  const h = useHarness();
  const f = sendingFixtures(h);
  const [alice] = h.accounts(1);
  const sink = useSmtpSink({ emptyBeforeEach: true });

  const addNotificationRecipient = (userId: number, email: string) =>
    insertId(h.runtime.db, 'notification_recipients', {
      user_id: userId,
      email_address: email,
      email_key: email.toLowerCase(),
      email_owner: 'Owner',
      created_at: nowValue(),
      updated_at: nowValue(),
    });
  const notifications = () =>
    sink.messages
      .filter((m) => m.from === 'no-reply@campaigns.test')
      .map((m) => `${m.to[0]}: ${m.parsed.subject}`)
      .sort();

  beforeAll(async () => {
    const bob = await h.account();
    await addNotificationRecipient(alice.user_id, 'boss@example.org');
    await addNotificationRecipient(alice.user_id, 'ops@example.org');
    await addNotificationRecipient(bob.user_id, 'bobs-boss@example.org');
  });

  test('when a single send starts and completes then each notification recipient gets both emails', async () => {
    const { sender, group, type } = await f.basics(alice, 'Readers');
    await f.contact(alice.user_id, type, 'reader@example.org');
    await f.singleSend(alice.user_id, { senderId: sender, groupId: group, to: [{ contactType: type }] });
    const { worker, close } = testWorker(h, sink.url);
    await worker.runOnce().finally(close);

    expect(notifications()).toEqual([
      'boss@example.org: Single send completed: November news',
      'boss@example.org: Single send started: November news',
      'ops@example.org: Single send completed: November news',
      'ops@example.org: Single send started: November news',
    ]);
    const completed = sink.messages.find((m) => m.parsed.subject === 'Single send completed: November news')!;
    expect(completed.parsed.text).toContain('Recipients: 1\nDelivered: 1\nBounces: 0');
    const system = await h.runtime.db('send_messages').where({ kind: MESSAGE_KIND.system, user_id: alice.user_id }).pluck('state');
    expect(system).toEqual([MESSAGE_STATE.sent, MESSAGE_STATE.sent, MESSAGE_STATE.sent, MESSAGE_STATE.sent]);
  });

  test('when an automation goes live and is paused then each event is emailed once', async () => {
    const type = await addContactType(h, alice, 'Nobody yet');
    const group = await f.group(alice.user_id);
    const automation = await f.automation(alice.user_id, { type: 'welcome', contactType: type, groupId: group });
    const { worker, close } = testWorker(h, sink.url);
    try {
      await f.setAutomationStatus(automation, 1);
      await worker.runOnce();
      await worker.runOnce();
      await f.setAutomationStatus(automation, 2);
      await worker.runOnce();
      await worker.runOnce();
    } finally {
      await close();
    }
    expect(notifications()).toEqual([
      'boss@example.org: Automation live: welcome journey',
      'boss@example.org: Automation paused: welcome journey',
      'ops@example.org: Automation live: welcome journey',
      'ops@example.org: Automation paused: welcome journey',
    ]);
  });

  test('when a CSV import finishes through the API then each notification recipient gets its summary', async () => {
    const type = await addContactType(h, alice, 'Imported');
    const csv = 'email,first_name\nnew1@example.org,Ann\nnot-an-email,Bob\nnew2@example.org,Cy\n';
    await h.api(alice).post('/contacts/upload-csv').field('contact_type_id', String(type)).attach('file', Buffer.from(csv), 'leads.csv').expect(200);
    const { worker, close } = testWorker(h, sink.url);
    await worker.runOnce().finally(close);
    expect(notifications()).toEqual(['boss@example.org: Contact import finished', 'ops@example.org: Contact import finished']);
    const notice = sink.messages.find((m) => m.to[0] === 'boss@example.org')!;
    expect(notice.parsed.text).toContain('Rows: 3\nCreated: 2\nUpdated: 0\nSkipped: 1');
  });

  test('when other parts report an import or a verified sender, or send system mail, then it goes out through the ledger', async () => {
    const { events } = h.runtime.services;
    await events.csvImportFinished(alice.user_id, { file: 'leads.csv', rows: 10, created: 7, updated: 2, skipped: 1 });
    await events.senderVerified(alice.user_id, { from_name: 'Acme', from_email: 'news@acme.test' });
    await events.systemMail(alice.user_id, 'new-sender@acme.test', { subject: 'Verify your sender', text: 'Open http://campaigns.test/verify-sender/x' });
    const { worker, close } = testWorker(h, sink.url);
    await worker.runOnce().finally(close);
    expect(notifications()).toEqual([
      'boss@example.org: Contact import finished',
      'boss@example.org: Sender verified: news@acme.test',
      'new-sender@acme.test: Verify your sender',
      'ops@example.org: Contact import finished',
      'ops@example.org: Sender verified: news@acme.test',
    ]);
    const verify = sink.messages.find((m) => m.to[0] === 'new-sender@acme.test')!;
    expect(verify.parsed.text?.trim()).toBe('Open http://campaigns.test/verify-sender/x');
    expect(verify.parsed.html).toContain('<p>Open http://campaigns.test/verify-sender/x</p>');
  });
});
