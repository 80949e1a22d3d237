import { useHarness, TestAccount } from '../support/harness';
import { addAutomation, addVerifiedSender, audienceOf, Audience, berlin, scheduleBody, singleSendBody } from '../support/fixtures';

const REFUSED = { status: 'failed', errors: { sender_id: ["The sender's domain is not authenticated."] } };

describe('REQUIRE_DOMAIN_AUTH', () => {
  const h = useHarness({ REQUIRE_DOMAIN_AUTH: '1' });
  let alice: TestAccount;
  let a: Audience;
  let domainId: number;

  beforeAll(async () => {
    alice = await h.account();
    a = await audienceOf(h, alice, await berlin(h));
    const sender = await h.api(alice).get(`/sender/details?sender_id=${a.senderId}`).expect(200);
    const domain = String(sender.body.message.sender.from_email).split('@')[1];
    domainId = (await h.api(alice).post('/domains/save').send({ domain }).expect(200)).body.message.domain.id;
  });

  /** The domain's status as its DNS check would leave it (the checks themselves: test/mail/sending-domains.test.ts). */
  const setDomain = (status: string) => h.runtime.db('sending_domains').where({ id: domainId }).update({ status });

  test('when a send starts from a domain that is pending or failing then 422 on sender_id and the sender shows it', async () => {
    for (const status of ['pending', 'failing']) {
      await setDomain(status);
      const res = await h.api(alice).post('/single/send/create').send(singleSendBody(a)).expect(422);
      expect(res.body).toEqual(REFUSED);
    }
    const sender = await h.api(alice).get(`/sender/details?sender_id=${a.senderId}`).expect(200);
    expect(sender.body.message.sender.domain_status).toBe('failing');
  });

  test("when the dashboard's confirm step sends a draft from an unauthenticated domain then it is refused and the draft stays a draft", async () => {
    await setDomain('verified');
    const utr = (await h.api(alice).post('/single/send/create').send(singleSendBody(a)).expect(200)).body.message.utr;
    // The dashboard's draft: saved, not due.
    await h.runtime.db('single_sends').where({ utr }).update({ status: 0, due_at: null });
    await setDomain('pending');
    await expect(h.runtime.services.sendControls.confirm({ userId: alice.user_id }, utr, 'now')).rejects.toMatchObject({ fields: REFUSED.errors });
    expect(await h.runtime.db('single_sends').where({ utr }).first('status', 'due_at')).toEqual({ status: 0, due_at: null });
  });

  test('when the domain is verified then the send starts', async () => {
    await setDomain('verified');
    await h.api(alice).post('/single/send/create').send(singleSendBody(a)).expect(200);
  });

  test('when transactional mail is sent from an unauthenticated domain then 422 on the field naming the sender, nothing is queued, and it goes once verified', async () => {
    const sender = (await h.api(alice).get(`/sender/details?sender_id=${a.senderId}`).expect(200)).body.message.sender;
    const receipt = { to: 'buyer@shop.test', subject: 'Receipt', text: 'Thanks.' };
    const queued = () => h.runtime.db('transactional_messages').where({ user_id: alice.user_id }).count({ n: '*' }).first();
    const before = await queued();
    for (const status of ['pending', 'failing']) {
      await setDomain(status);
      expect((await h.api(alice).post('/transactional/send').send({ ...receipt, sender_id: a.senderId }).expect(422)).body).toEqual(REFUSED);
      expect((await h.api(alice).post('/transactional/send').send({ ...receipt, from: sender.from_email }).expect(422)).body).toEqual({ status: 'failed', errors: { from: REFUSED.errors.sender_id } });
      const batch = await h.api(alice).post('/transactional/batch').send({ messages: [{ ...receipt, sender_id: a.senderId }] }).expect(422);
      expect(batch.body.errors).toEqual({ 'messages[0].sender_id': REFUSED.errors.sender_id });
    }
    expect(await queued()).toEqual(before);
    await setDomain('verified');
    const sent = await h.api(alice).post('/transactional/send').send({ ...receipt, sender_id: a.senderId }).expect(200);
    expect(sent.body.message.messages[0].status).toBe('queued');
  });

  test('when an automation with a step from an unauthenticated domain is set live then 422, and live once it is verified', async () => {
    await setDomain('pending');
    const utr = await addAutomation(h, alice, { unsubscribe_group_id: a.groupId });
    await h.api(alice).post('/automations/schedule/create').send(scheduleBody(utr, a.senderId)).expect(200);
    const refused = await h.api(alice).get(`/automations/set-live?utr=${utr}`).expect(422);
    expect(refused.body).toEqual(REFUSED);
    await setDomain('verified');
    await h.api(alice).get(`/automations/set-live?utr=${utr}`).expect(200);
  });
});

describe("senders' domain_status", () => {
  const h = useHarness();

  test('when sending domains of the account cover a sender (its domain or a parent) then its status is theirs, the longest domain deciding', async () => {
    const alice = await h.account();
    const bob = await h.account();
    const place = await berlin(h);
    const save = async (account: TestAccount, domain: string, status: string) => {
      const id = (await h.api(account).post('/domains/save').send({ domain }).expect(200)).body.message.domain.id;
      await h.runtime.db('sending_domains').where({ id }).update({ status });
    };
    await save(alice, 'example.net', 'verified');
    await save(alice, 'news.example.net', 'failing');
    await save(alice, 'pending.example', 'pending');
    await save(bob, 'bobs.example', 'verified');
    const ids = {
      parent: await addVerifiedSender(h, alice, place, { from_email: 'Team@Example.NET' }),
      sub: await addVerifiedSender(h, alice, place, { from_email: 'team@mail.news.example.net' }),
      lookalike: await addVerifiedSender(h, alice, place, { from_email: 'team@notexample.net' }),
      pending: await addVerifiedSender(h, alice, place, { from_email: 'team@pending.example' }),
      others: await addVerifiedSender(h, alice, place, { from_email: 'team@bobs.example' }),
    };
    const list = (await h.api(alice).get('/senders').expect(200)).body.message.senders as Array<{ id: number; domain_status: string }>;
    const statusOf = Object.fromEntries(list.map((s) => [s.id, s.domain_status]));
    expect(Object.fromEntries(Object.entries(ids).map(([name, id]) => [name, statusOf[id]]))).toEqual({
      parent: 'verified',
      sub: 'failing',
      lookalike: 'unauthenticated',
      pending: 'unauthenticated',
      others: 'unauthenticated',
    });
    const one = await h.api(alice).get(`/sender/details?sender_id=${ids.parent}`).expect(200);
    expect(one.body.message.sender.domain_status).toBe('verified');
  });
});
