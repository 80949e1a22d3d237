import { MESSAGE_STATE } from '../../src/lib/constants';
import { startDueSingleSends } from '../../src/services/delivery/ledger';
import { useHarness } from '../support/harness';
import { addContactType, addSegment, header, manualClock, sendingFixtures, testWorker } from '../support/fixtures';
import { useSmtpSink } from '../support/smtp';
import { signIn } from '../support/web';

describe('sending a single send', () => {
  const h = useHarness();
  const f = sendingFixtures(h);
  const [alice] = h.accounts(1);
  let busyRefusals = 0;
  const sink = useSmtpSink({
    onRecipient: (address) => {
      if (address.startsWith('gone@')) return { code: 550, message: '5.1.1 No such user' };
      if (address.startsWith('busy@') && busyRefusals-- > 0) return { code: 451, message: '4.3.0 Try again later' };
      if (address.startsWith('stuck@')) return { code: 452, message: '4.2.2 Mailbox full' };
      return undefined;
    },
    emptyBeforeEach: true,
  });

  test('when a send targets a contact type and a segment then every right address gets one personalised message and the send completes', async () => {
    const bob = await h.account();
    const sender = await f.sender(alice.user_id, { from_name: 'Acme News', from_email: 'news@acme.test', reply_to_email: 'reply@acme.test' });
    const group = await f.group(alice.user_id);
    const customers = await addContactType(h, alice, 'Customers');
    const staff = await addContactType(h, alice, 'Staff');
    const ann = await f.contact(alice.user_id, customers, 'ann@example.org', { first_name: 'Ann', last_name: 'Lee', custom_fields: { company_name: 'Acme <Ltd> & Co' } });
    const ben = await f.contact(alice.user_id, customers, 'Ben@Example.org', { first_name: 'Ben' });
    await f.contact(alice.user_id, customers, 'carl@example.org', { first_name: 'Carl' });
    await f.contact(alice.user_id, customers, 'dora@example.org', { first_name: 'Dora' });
    await f.contact(alice.user_id, customers, 'eve@example.org', { first_name: 'Eve' });
    await f.contact(alice.user_id, customers, 'gone-contact@example.org', { deleted_at: new Date().toISOString() });
    await f.contact(alice.user_id, staff, 'eve.work@example.org');
    await f.globalUnsubscribe(alice.user_id, 'CARL@example.org');
    await f.groupUnsubscribe(alice.user_id, group, 'dora@example.org');
    const vips = await addSegment(h, alice, customers, 'VIPs', [
      { email: 'ben@example.org', contact_id: ben, first_name: 'Ben' },
      { email: 'sam@example.org', first_name: 'Sam' },
    ]);
    const excluded = await addSegment(h, alice, customers, 'Excluded', [{ email: 'EVE@example.org' }]);
    // Another account's list, named in the send: none of its contacts may be written to.
    const bobsType = await addContactType(h, bob, 'Not yours');
    await f.contact(bob.user_id, bobsType, 'stranger@example.org');

    const sendId = await f.singleSend(alice.user_id, {
      senderId: sender,
      groupId: group,
      to: [{ contactType: customers }, { segment: vips }, { contactType: bobsType }],
      exclude: [{ segment: excluded }],
      subject: 'Hello ((first_name))',
      preheader: 'For ((full_name))',
      html: '<html><body><p>Dear ((first_name)) of ((company_name))((no_such_field)).</p><p>((sender_name)), ((sender_address))</p><p>((unsubscribe_preferences))</p></body></html>',
    });

    const { worker, close } = testWorker(h, sink.url);
    try {
      await worker.runOnce();
    } finally {
      await close();
    }

    const to = sink.messages.map((m) => m.to[0].toLowerCase()).sort();
    expect(to).toEqual(['ann@example.org', 'ben@example.org', 'sam@example.org']);
    const annMail = sink.messages.find((m) => m.to[0] === 'ann@example.org')!;
    expect(annMail.parsed.subject).toBe('Hello Ann');
    expect(annMail.parsed.from?.value).toEqual([{ name: 'Acme News', address: 'news@acme.test' }]);
    expect(annMail.parsed.replyTo?.value).toEqual([{ name: '', address: 'reply@acme.test' }]);
    expect(annMail.parsed.html).toContain('<p>Dear Ann of Acme &lt;Ltd&gt; &amp; Co.</p>');
    expect(annMail.parsed.html).toContain('<p>Acme News, 1 Main Street</p>');
    expect(annMail.parsed.html).toContain('For Ann Lee</div>');
    expect(annMail.parsed.text).toContain('Dear Ann of Acme <Ltd> & Co.');
    const samMail = sink.messages.find((m) => m.to[0] === 'sam@example.org')!;
    expect(samMail.parsed.subject).toBe('Hello Sam');

    const send = await f.send(sendId);
    expect(send).toMatchObject({ status: 3, triggered: 3, delivered: 3, bounces: 0 });
    expect(send.sent_at).not.toBeNull();
    const ledger = await f.ledger(sendId);
    expect(ledger.map((r) => r.state)).toEqual([MESSAGE_STATE.sent, MESSAGE_STATE.sent, MESSAGE_STATE.sent]);
    expect(ledger.find((r) => r.email === 'ann@example.org')?.contact_id).toBe(ann);
  });

  test('when a message is rendered then it carries both unsubscribe headers, a unique Message-ID and the open pixel', async () => {
    const { sender, group, type } = await f.basics(alice, 'Headers');
    await f.contact(alice.user_id, type, 'h1@example.org');
    await f.contact(alice.user_id, type, 'h2@example.org');
    const sendId = await f.singleSend(alice.user_id, {
      senderId: sender,
      groupId: group,
      to: [{ contactType: type }],
      html: '<html><body><a href="((unsubscribe_preferences))">Manage</a></body></html>',
    });
    const { worker, close } = testWorker(h, sink.url);
    await worker.runOnce().finally(close);

    expect(sink.messages).toHaveLength(2);
    const ids = new Set<string>();
    for (const message of sink.messages) {
      const row = (await f.ledger(sendId)).find((r) => r.email === message.to[0])!;
      const token = f.token(Number(row.id));
      const url = `http://campaigns.test/unsubscribe/${token}`;
      expect(header(message.raw, 'List-Unsubscribe')).toBe(`<${url}>, <mailto:reply@acme.test?subject=unsubscribe%20${token}>`);
      expect(header(message.raw, 'List-Unsubscribe-Post')).toBe('List-Unsubscribe=One-Click');
      expect(message.raw.match(/^List-Unsubscribe:/gim)).toHaveLength(1);
      expect(message.parsed.html).toContain(`<a href="${url}">Manage</a>`);
      expect(message.parsed.html).toContain(`<img src="http://campaigns.test/open/${token}.gif" width="1" height="1"`);
      expect(message.parsed.text).toContain(`Manage [${url}]`);
      const messageId = header(message.raw, 'Message-ID')!;
      expect(messageId).toMatch(/^<[\w.-]+@campaigns\.test>$/);
      ids.add(messageId);
    }
    expect(ids.size).toBe(2);
  });

  test('when a send is scheduled then nothing goes out before its time', async () => {
    const clock = manualClock(new Date(Date.now() + 3_600_000));
    const { sender, group, type } = await f.basics(alice, 'Scheduled');
    await f.contact(alice.user_id, type, 'later@example.org');
    const sendId = await f.singleSend(alice.user_id, { senderId: sender, groupId: group, to: [{ contactType: type }], dueAt: new Date(clock.now().getTime() + 60_000) });
    const draft = await f.singleSend(alice.user_id, { senderId: sender, groupId: group, to: [{ contactType: type }], status: 0 });
    const deleted = await f.singleSend(alice.user_id, { senderId: sender, groupId: group, to: [{ contactType: type }] });
    await h.runtime.db('single_sends').where({ id: deleted }).update({ deleted_at: new Date().toISOString() });

    const { worker, close } = testWorker(h, sink.url, { now: clock.now });
    try {
      await worker.runOnce();
      expect(sink.messages).toHaveLength(0);
      expect((await f.send(sendId)).status).toBe(1);
      clock.advance(60_000);
      await worker.runOnce();
    } finally {
      await close();
    }
    expect(sink.messages.map((m) => m.to[0])).toEqual(['later@example.org']);
    expect((await f.send(sendId)).status).toBe(3);
    expect((await f.send(draft)).status).toBe(0);
    expect((await f.send(deleted)).status).toBe(1);
    expect(await f.ledger(draft)).toEqual([]);
    expect(await f.ledger(deleted)).toEqual([]);
  });

  test('when the server answers 451 then the message is retried later and delivered; 550 bounces and suppresses the address', async () => {
    busyRefusals = 2;
    const clock = manualClock(new Date(Date.now() + 7_200_000));
    const { sender, group, type } = await f.basics(alice, 'Flaky');
    await f.contact(alice.user_id, type, 'busy@example.org');
    await f.contact(alice.user_id, type, 'gone@example.org');
    await f.contact(alice.user_id, type, 'fine@example.org');
    const sendId = await f.singleSend(alice.user_id, { senderId: sender, groupId: group, to: [{ contactType: type }], dueAt: clock.now() });

    const { worker, close } = testWorker(h, sink.url, { now: clock.now, retryBaseMs: 60_000 });
    try {
      await worker.runOnce();
      expect(sink.messages.map((m) => m.to[0])).toEqual(['fine@example.org']);
      let busy = (await f.ledger(sendId)).find((r) => r.email === 'busy@example.org')!;
      expect(busy).toMatchObject({ state: MESSAGE_STATE.queued, attempts: 1, smtp_code: 451 });
      expect(String(busy.last_error)).toContain('Try again later');
      expect(await f.send(sendId)).toMatchObject({ status: 2, delivered: 1, bounces: 1 });

      clock.advance(59_000);
      await worker.runOnce();
      expect(sink.messages).toHaveLength(1);
      clock.advance(1_000);
      await worker.runOnce(); // second refusal; the next wait doubles
      clock.advance(120_000);
      await worker.runOnce();
      busy = (await f.ledger(sendId)).find((r) => r.email === 'busy@example.org')!;
      expect(busy).toMatchObject({ state: MESSAGE_STATE.sent, attempts: 3 });
    } finally {
      await close();
    }
    expect(sink.messages.map((m) => m.to[0]).sort()).toEqual(['busy@example.org', 'fine@example.org']);
    const gone = (await f.ledger(sendId)).find((r) => r.email === 'gone@example.org')!;
    expect(gone).toMatchObject({ state: MESSAGE_STATE.bounced, smtp_code: 550 });
    expect(await f.send(sendId)).toMatchObject({ status: 3, triggered: 3, delivered: 2, bounces: 1 });
    const suppressed = await h.runtime.db('suppressed_addresses').where({ user_id: alice.user_id }).select('email_key');
    expect(suppressed).toEqual([{ email_key: 'gone@example.org' }]);

    // The bounced address is left out of the account's next send.
    const next = await f.singleSend(alice.user_id, { senderId: sender, groupId: group, to: [{ contactType: type }], dueAt: clock.now() });
    const again = testWorker(h, sink.url, { now: clock.now });
    await again.worker.runOnce().finally(again.close);
    expect((await f.ledger(next)).map((r) => r.email).sort()).toEqual(['busy@example.org', 'fine@example.org']);
  });

  test('when a message is refused with 4xx until its retries run out then it counts as failed: in the API record and on the send’s page, with the reason', async () => {
    const clock = manualClock(new Date(Date.now() + 14_400_000));
    const { sender, group, type } = await f.basics(alice, 'Full mailboxes');
    for (const email of ['stuck@example.org', 'ok1@example.org', 'ok2@example.org', 'ok3@example.org']) await f.contact(alice.user_id, type, email);
    const sendId = await f.singleSend(alice.user_id, { senderId: sender, groupId: group, to: [{ contactType: type }], dueAt: clock.now() });

    const { worker, close } = testWorker(h, sink.url, { now: clock.now, maxAttempts: 2, retryBaseMs: 60_000 });
    try {
      await worker.runOnce();
      expect(await f.send(sendId)).toMatchObject({ status: 2, triggered: 4, delivered: 3, failed: 0 });
      clock.advance(60_000);
      await worker.runOnce();
    } finally {
      await close();
    }
    const stuck = (await f.ledger(sendId)).find((r) => r.email === 'stuck@example.org')!;
    expect(stuck).toMatchObject({ state: MESSAGE_STATE.failed, attempts: 2, smtp_code: 452 });

    const { utr } = await h.runtime.db('single_sends').where({ id: sendId }).first('utr');
    const details = (await h.api(alice).get(`/single-send/details?utr=${utr}`).expect(200)).body.message.singleSend[0];
    expect(details).toMatchObject({ status: 3, triggered: 4, delivered: 3, bounces: 0, failed: 1 });

    const web = await signIn(h, alice);
    const page = await web.get(`/single-sends/${utr}`).expect(200);
    expect(page.text).toContain('<p class="stat-label">Failed</p><p class="stat-value">1</p>');
    expect(page.text).toContain('Why 1 message could not be delivered');
    // The server's answer as it said it, and what was done: retried until given up.
    expect(page.text).toMatch(/<li><span class="failure-count">1 ×<\/span> <span class="server-answer">4\d\d 4\.2\.2 Mailbox full<\/span><br><span class="muted small-text">Tried again several times before it was given up\.<\/span><\/li>/);
  });

  test('when an address unsubscribes or its contact is deleted after the send started then its queued message is suppressed, not sent', async () => {
    const { sender, group, type } = await f.basics(alice, 'Late leavers');
    await f.contact(alice.user_id, type, 'stays@example.org');
    await f.contact(alice.user_id, type, 'leaves@example.org');
    await f.contact(alice.user_id, type, 'quits@example.org');
    const removed = await f.contact(alice.user_id, type, 'removed@example.org');
    const sendId = await f.singleSend(alice.user_id, { senderId: sender, groupId: group, to: [{ contactType: type }] });
    expect(await startDueSingleSends(h.runtime.db, new Date())).toEqual([
      { id: sendId, userId: alice.user_id, name: 'November news', recipients: 4, completed: false },
    ]);
    await h.runtime.db('contacts').where({ id: removed }).update({ deleted_at: new Date().toISOString() });
    await f.groupUnsubscribe(alice.user_id, group, 'LEAVES@example.org');
    await f.globalUnsubscribe(alice.user_id, 'quits@example.org');

    const { worker, close } = testWorker(h, sink.url);
    await worker.runOnce().finally(close);
    expect(sink.messages.map((m) => m.to[0])).toEqual(['stays@example.org']);
    const states = Object.fromEntries((await f.ledger(sendId)).map((r) => [r.email, r.state]));
    expect(states).toEqual({
      'stays@example.org': MESSAGE_STATE.sent,
      'leaves@example.org': MESSAGE_STATE.suppressed,
      'quits@example.org': MESSAGE_STATE.suppressed,
      'removed@example.org': MESSAGE_STATE.suppressed,
    });
    expect(await f.send(sendId)).toMatchObject({ status: 3, triggered: 4, delivered: 1 });
  });
});
