import { MESSAGE_KIND } from '../../src/lib/constants';
import { addContactType, sendingFixtures, testWorker, useSendingSetup } from '../support/fixtures';
import { useHarness } from '../support/harness';
import { useSmtpSink } from '../support/smtp';

/** Test sends: `POST /single/send/test` and `POST /automations/schedule/test`. */
describe('test sends', () => {
  const h = useHarness();
  const f = sendingFixtures(h);
  const setup = useSendingSetup(h, 'Readers');
  const alice = setup.account;
  const sink = useSmtpSink({ emptyBeforeEach: true });

  beforeAll(async () => {
    await f.contact(alice.user_id, setup.type, 'first@example.org', { first_name: 'Fiona' });
    await f.contact(alice.user_id, setup.type, 'second@example.org', { first_name: 'Sam' });
  });

  const HTML = '<html><body><p>Dear ((first_name)),</p><a href="https://shop.example/sale">Sale</a></body></html>';
  const deliver = async () => {
    const { worker, close } = testWorker(h, sink.url);
    try {
      await worker.runOnce();
    } finally {
      await close();
    }
  };

  test('when a single send is tested then each address gets the first recipient\'s message marked [Test], with plain links and no pixel, and nothing is counted', async () => {
    const id = await f.singleSend(alice.user_id, { senderId: setup.sender, groupId: setup.group, to: [{ contactType: setup.type }], subject: 'News for ((first_name))', html: HTML, status: 0 });
    const utr = String((await f.send(id)).utr);
    const res = await h.api(alice).post('/single/send/test').send({ utr, email_address: 'me@example.net, boss@example.net' }).expect(200);
    expect(res.body).toEqual({ status: 'success', message: 'Test Email Sent' });
    await deliver();
    const got = await sink.waitFor(2);
    expect(got.map((m) => m.to[0]).sort()).toEqual(['boss@example.net', 'me@example.net']);
    for (const m of got) {
      expect(m.parsed.subject).toBe('[Test] News for Fiona');
      expect(m.parsed.from?.value[0].address).toBe('news@acme.test');
      expect(String(m.parsed.html)).toContain('Dear Fiona,');
      expect(String(m.parsed.html)).toContain('href="https://shop.example/sale"');
      expect(String(m.parsed.html)).not.toMatch(/\/open\/|\/c\//);
    }
    const send = await f.send(id);
    expect({ status: Number(send.status), triggered: Number(send.triggered), delivered: Number(send.delivered) }).toEqual({ status: 0, triggered: 0, delivered: 0 });
    expect(await f.ledger(id)).toEqual([]);
    const kinds = await h.runtime.db('send_messages').where({ user_id: alice.user_id }).whereIn('email', ['me@example.net', 'boss@example.net']).pluck('kind');
    expect(kinds.map(Number)).toEqual([MESSAGE_KIND.system, MESSAGE_KIND.system]);
  });

  test('when a contact is chosen or an automation step is tested then the message is rendered for that contact', async () => {
    const id = await f.singleSend(alice.user_id, { senderId: setup.sender, groupId: setup.group, to: [{ contactType: setup.type }], subject: 'For ((first_name))', html: HTML, status: 0 });
    const utr = String((await f.send(id)).utr);
    const sam = Number((await h.runtime.db('contacts').where({ email: 'second@example.org' }).first('id')).id);
    await h.api(alice).post('/single/send/test').send({ utr, email_address: 'me@example.net', contact_id: sam }).expect(200);

    const automation = await f.automation(alice.user_id, { type: 'welcome', contactType: setup.type, groupId: setup.group });
    const step = await f.schedule(alice.user_id, automation, { senderId: setup.sender, subject: 'Welcome ((first_name))', waitingPeriod: 1, waitingType: 'instantly', html: HTML });
    const stepUtr = String((await h.runtime.db('automation_schedules').where({ id: step }).first('utr')).utr);
    expect((await h.api(alice).post('/automations/schedule/test').send({ utr: stepUtr, email_address: 'me@example.net' }).expect(200)).body).toEqual({ status: 'success', message: 'Test Email Sent' });
    await deliver();
    expect((await sink.waitFor(2)).map((m) => m.parsed.subject).sort()).toEqual(['[Test] For Sam', '[Test] Welcome Fiona']);
  });

  test('when addresses are missing, too many or invalid, the contact or send is not the account\'s, then 422 or 404 and nothing is queued', async () => {
    const id = await f.singleSend(alice.user_id, { senderId: setup.sender, groupId: setup.group, to: [{ contactType: setup.type }], html: HTML });
    const utr = String((await f.send(id)).utr);
    const before = Number((await h.runtime.db('send_messages').count({ n: '*' }).first())?.n);
    const eleven = Array.from({ length: 11 }, (_, i) => `t${i}@example.net`).join(',');
    const api = h.api(alice);
    expect((await api.post('/single/send/test').send({ utr }).expect(422)).body.errors).toEqual({ email_address: ['The email address field is required.'] });
    expect((await api.post('/single/send/test').send({ utr, email_address: eleven }).expect(422)).body.errors.email_address).toHaveLength(1);
    expect((await api.post('/single/send/test').send({ utr, email_address: 'me@example.net, nope' }).expect(422)).body.errors.email_address).toHaveLength(1);
    const bob = await h.account();
    const bobs = await f.contact(bob.user_id, await addContactType(h, bob, 'Bob'), 'bob@example.org', { first_name: 'Bob' });
    expect((await api.post('/single/send/test').send({ utr, email_address: 'me@example.net', contact_id: bobs }).expect(422)).body.errors).toEqual({ contact_id: ['The selected contact id is invalid.'] });
    await h.api(bob).post('/single/send/test').send({ utr, email_address: 'me@example.net' }).expect(404);
    await api.post('/automations/schedule/test').send({ utr: '00000000-0000-4000-8000-000000000000', email_address: 'me@example.net' }).expect(404);
    expect(Number((await h.runtime.db('send_messages').count({ n: '*' }).first())?.n)).toBe(before);
  });
});
