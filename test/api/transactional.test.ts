import request from 'supertest';
import { MESSAGE_STATE } from '../../src/lib/constants';
import { header, sendingFixtures, testWorker, useSendingSetup } from '../support/fixtures';
import { useHarness } from '../support/harness';
import { useSmtpSink } from '../support/smtp';
import { addRoleKey } from '../support/team';
import { until } from '../support/wait';
import { startWebhookReceiver } from '../support/webhook-receiver';
import { isPostgres } from '../../src/db';

describe('transactional mail through the API', () => {
  // Refuses every recipient with a 451 while set (a server that keeps deferring).
  let deferring = false;
  const sink = useSmtpSink({ emptyBeforeEach: true, onRecipient: () => (deferring ? { code: 451, message: '4.3.0 try again later' } : undefined) });
  const h = useHarness({ WEBHOOK_ALLOW_PRIVATE: '1' });
  const f = sendingFixtures(h);
  const setup = useSendingSetup(h, 'Customers');

  const api = () => h.api(setup.account);
  const receipt = (over: Record<string, unknown> = {}) => ({ to: 'ann@shop.test', sender_id: setup.sender, subject: 'Your order {{ data.order_id }}', html: '<p>Thanks, {{ data.name | default: "friend" }}.</p>', ...over });

  /** Sends what is due through a worker against the sink, until nothing is left to claim. */
  async function deliver(options: Parameters<typeof testWorker>[2] = {}): Promise<void> {
    const w = testWorker(h, sink.url, options);
    try {
      await w.worker.runOnce();
    } finally {
      await w.close();
    }
  }

  const details = async (id: string) => (await api().get(`/transactional/messages/details?id=${id}`).expect(200)).body.message.message;

  test('when a message is sent then it is queued with a tx_ id, goes out with its Liquid filled, and its timeline reads accepted, sent, delivered', async () => {
    const res = await api().post('/transactional/send').send(receipt({ data: { order_id: 'A-17', name: 'Ann' }, tags: ['receipt'], headers: { 'X-Order': 'A-17' } })).expect(200);
    const [message] = res.body.message.messages;
    expect(res.body.message.messages).toEqual([{ id: expect.stringMatching(/^tx_\d+$/), to: 'ann@shop.test', status: 'queued' }]);

    await deliver();
    const [mail] = await sink.waitFor(1);
    expect(mail.to).toEqual(['ann@shop.test']);
    expect(mail.parsed.subject).toBe('Your order A-17');
    expect(mail.parsed.html).toContain('<p>Thanks, Ann.</p>');
    expect(mail.parsed.text).toContain('Thanks, Ann.');
    expect(header(mail.raw, 'X-Order')).toBe('A-17');
    expect(header(mail.raw, 'List-Unsubscribe')).toBeUndefined();
    expect(header(mail.raw, 'Feedback-ID')).toMatch(/:transactional:/);

    const found = await details(message.id);
    expect(found).toMatchObject({ id: message.id, to: 'ann@shop.test', status: 'delivered', tags: ['receipt'], source: 'api' });
    expect(found.events.map((e: { type: string }) => e.type)).toEqual(['accepted', 'sent', 'delivered']);
    const log = (await api().get('/transactional/messages?status=delivered&tag=receipt').expect(200)).body.message;
    expect(log.total).toBe(1);
    expect(log.messages[0]).toMatchObject({ id: message.id, status: 'delivered', subject: 'Your order {{ data.order_id }}' });
    expect((await api().get('/transactional/messages?status=queued&tag=receipt').expect(200)).body.message.total).toBe(0);
  });

  test('when opens and clicks are tracked then the pixel and the link are counted on the message and its timeline', async () => {
    const sent = (await api().post('/transactional/send').send(receipt({ to: 'tia@shop.test', html: '<p>See <a href="https://shop.test/orders/17">your order</a>.</p>', track_opens: 1, track_clicks: 1 })).expect(200)).body.message.messages[0];
    await deliver();
    const [mail] = await sink.waitFor(1);
    const html = String(mail.parsed.html);
    const pixel = /src="http:\/\/campaigns\.test(\/open\/[^"]+)"/.exec(html)?.[1];
    const link = /href="http:\/\/campaigns\.test(\/c\/[^"]+)"/.exec(html)?.[1];
    expect(pixel && link).toBeTruthy();
    await request(h.runtime.app).get(pixel!).expect(200);
    await request(h.runtime.app).get(link!).expect(302).expect('Location', 'https://shop.test/orders/17');
    const found = await details(sent.id);
    expect(found.opened_at).toEqual(expect.any(String));
    expect(found.clicked_at).toEqual(expect.any(String));
    expect(found.events.map((e: { type: string }) => e.type)).toEqual(['accepted', 'sent', 'delivered', 'opened', 'clicked']);
  });

  test('when the same Idempotency-Key comes twice with the same body then the first answer comes again and one mail goes out; with another body it is a 409', async () => {
    const first = await api().post('/transactional/send').set('Idempotency-Key', 'order-18').send(receipt({ to: 'bob@shop.test' })).expect(200);
    const again = await api().post('/transactional/send').set('Idempotency-Key', 'order-18').send(receipt({ to: 'bob@shop.test' })).expect(200);
    expect(again.body).toEqual(first.body);
    const other = await api().post('/transactional/send').set('Idempotency-Key', 'order-18').send(receipt({ to: 'carl@shop.test' })).expect(409);
    expect(other.body).toEqual({ status: 'failed', message: 'This Idempotency-Key was already used with a different request.' });
    // Another account's key of the same name is its own.
    const other2 = await h.account();
    const sender = await f.sender(other2.user_id);
    const theirs = await h.api(other2).post('/transactional/send').set('Idempotency-Key', 'order-18').send(receipt({ to: 'bob@shop.test', sender_id: sender })).expect(200);
    expect(theirs.body.message.messages[0].id).not.toBe(first.body.message.messages[0].id);
    await deliver();
    await sink.waitFor(2);
    await sink.settled();
    expect(sink.messages.map((m) => m.to[0])).toEqual(['bob@shop.test', 'bob@shop.test']);
  });

  test('when a key is older than its 24 hours, or was left in progress by a process that died, then it is free again', async () => {
    const keys = () => h.runtime.db('idempotency_keys').where({ user_id: setup.account.user_id });
    await api().post('/transactional/send').set('Idempotency-Key', 'old').send(receipt({ to: 'old@shop.test' })).expect(200);
    await keys().where({ idempotency_key: 'old' }).update({ created_at: new Date(Date.now() - 25 * 3_600_000).toISOString() });
    const reused = await api().post('/transactional/send').set('Idempotency-Key', 'old').send(receipt({ to: 'new@shop.test' })).expect(200);
    expect(reused.body.message.messages[0].to).toBe('new@shop.test');
    await h.runtime.db('idempotency_keys').insert({ user_id: setup.account.user_id, idempotency_key: 'abandoned', request_hash: 'x', response: null, created_at: new Date(Date.now() - 3 * 60_000).toISOString() });
    const takenOver = await api().post('/transactional/send').set('Idempotency-Key', 'abandoned').send(receipt({ to: 'late@shop.test' })).expect(200);
    const again = await api().post('/transactional/send').set('Idempotency-Key', 'abandoned').send(receipt({ to: 'late@shop.test' })).expect(200);
    expect(again.body).toEqual(takenOver.body);
    expect(Number((await keys().whereIn('idempotency_key', ['old', 'abandoned']).count({ n: '*' }).first())?.n)).toBe(2);
    // Each request's mail went out once.
    await deliver();
    await sink.waitFor(3);
    await sink.settled();
    expect(sink.messages.map((m) => m.to[0]).sort()).toEqual(['late@shop.test', 'new@shop.test', 'old@shop.test']);
  });

  test('when a request comes while the first with its key is still being handled then it is a 409 in progress, and one mail goes out', async () => {
    const body = receipt({ to: ['kit@shop.test', 'lou@shop.test'] });
    const send = () => api().post('/transactional/send').set('Idempotency-Key', 'together').send(body);
    const keyRow = () => h.runtime.db('idempotency_keys').where({ user_id: setup.account.user_id, idempotency_key: 'together' }).first();
    if (isPostgres(h.runtime.db)) {
      // The first request is held where it writes its messages (its key is already committed):
      // the second finds the key by the database's unique index while the first is in progress.
      const hold = await h.runtime.db.transaction();
      await hold.raw('lock table transactional_messages in exclusive mode');
      const first = send().then((res) => res);
      await until(async () => (await keyRow()) !== undefined, 10_000, 'the first request to take its key');
      const second = await send().expect(409);
      expect(second.body).toEqual({ status: 'failed', message: 'A request with this Idempotency-Key is still in progress.' });
      await hold.commit();
      expect((await first).status).toBe(200);
    } else {
      // SQLite runs one statement at a time on one connection, and a request's writes do not
      // yield: two requests at once are handled one after the other, so the second finds the
      // first's answer (the in-progress refusal is for another process writing the same file).
      const [a, b] = await Promise.all([send(), send()]);
      expect([a.status, b.status]).toEqual([200, 200]);
      expect(b.body).toEqual(a.body);
    }
    expect((await keyRow()).response).not.toBeNull();
    await deliver();
    await sink.waitFor(2);
    await sink.settled();
    expect(sink.messages.map((m) => m.to[0]).sort()).toEqual(['kit@shop.test', 'lou@shop.test']);
  });

  test('when the address unsubscribed from marketing then it still gets the message; when it bounced before then the message is suppressed and nothing goes out', async () => {
    await f.contact(setup.account.user_id, setup.type, 'dana@shop.test', { first_name: 'Dana' });
    await f.globalUnsubscribe(setup.account.user_id, 'dana@shop.test');
    await f.groupUnsubscribe(setup.account.user_id, setup.group, 'dana@shop.test');
    await h.runtime.db('suppressed_addresses').insert({ user_id: setup.account.user_id, email_key: 'gone@shop.test', email_address: 'gone@shop.test', reason: 'bounced', category: 'hard_bounce', source: 'smtp', created_at: new Date().toISOString() });

    const res = await api().post('/transactional/send').send(receipt({ to: ['dana@shop.test', 'GONE@shop.test'], subject: 'Hello {{ first_name }}' })).expect(200);
    expect(res.body.message.messages.map((m: { status: string }) => m.status)).toEqual(['queued', 'suppressed']);
    await deliver();
    const [mail] = await sink.waitFor(1);
    await sink.settled();
    expect(sink.messages.map((m) => m.to[0])).toEqual(['dana@shop.test']);
    expect(mail.parsed.subject).toBe('Hello Dana');
    const suppressed = await details(res.body.message.messages[1].id);
    expect(suppressed.status).toBe('suppressed');
    expect(suppressed.events.map((e: { type: string }) => e.type)).toEqual(['accepted', 'suppressed']);
  });

  test('when a template is saved and used with data then the message is built from it; Liquid that does not parse is refused naming its line', async () => {
    const bad = await api().post('/transactional/templates/save').send({ name: 'Broken', subject: 'Hi', html: '<p>ok</p>\n<p>{% if %}</p>' }).expect(422);
    expect(bad.body.errors.html[0]).toMatch(/Liquid error on line 2/);
    const template = (await api().post('/transactional/templates/save').send({ name: 'Reset', subject: 'Reset for {{ data.user }}', html: '<p>Code {{ data.code }}</p>' }).expect(200)).body.message.template;
    expect(template).toMatchObject({ id: expect.any(Number), name: 'Reset', text: null });
    await api().post('/transactional/send').send({ to: 'eve@shop.test', from: 'NEWS@acme.test', template_id: template.id, data: { user: 'eve', code: '4711' } }).expect(200);
    // The worker compiles a template once for all its messages: each still gets its own data.
    await api().post('/transactional/send').send({ to: 'fay@shop.test', from: 'NEWS@acme.test', template_id: template.id, data: { user: 'fay', code: '9000' } }).expect(200);
    // A queued message keeps its template.
    const refused = await api().delete(`/transactional/templates/delete?id=${template.id}`).expect(422);
    expect(refused.body.errors.id[0]).toMatch(/still queued/);
    await deliver();
    const mails = await sink.waitFor(2);
    const [eve, fay] = ['eve@shop.test', 'fay@shop.test'].map((to) => mails.find((m) => m.to[0] === to));
    expect(eve?.parsed.subject).toBe('Reset for eve');
    expect(eve?.parsed.html).toContain('Code 4711');
    expect(fay?.parsed.subject).toBe('Reset for fay');
    expect(fay?.parsed.html).toContain('Code 9000');
    await api().delete(`/transactional/templates/delete?id=${template.id}`).expect(200);
    expect((await api().get('/transactional/templates').expect(200)).body.message.templates.map((t: { name: string }) => t.name)).not.toContain('Reset');
  });

  test('when one item of a batch is invalid then the answer names it and nothing is sent; a valid batch answers in order', async () => {
    const before = await h.runtime.db('send_messages').where({ user_id: setup.account.user_id }).count({ n: '*' }).first();
    const res = await api().post('/transactional/batch').send({ messages: [receipt({ to: 'f1@shop.test' }), receipt({ to: 'not an address' }), receipt({ to: 'f3@shop.test', headers: { Subject: 'x' } })] }).expect(422);
    expect(Object.keys(res.body.errors).sort()).toEqual(['messages[1].to', 'messages[2].headers.Subject']);
    const after = await h.runtime.db('send_messages').where({ user_id: setup.account.user_id }).count({ n: '*' }).first();
    expect(Number(after?.n)).toBe(Number(before?.n));
    const ok = await api().post('/transactional/batch').send({ messages: [receipt({ to: 'g1@shop.test' }), receipt({ to: ['g2@shop.test', 'g3@shop.test'] })] }).expect(200);
    expect(ok.body.message.messages.map((m: { to: string }) => m.to)).toEqual(['g1@shop.test', 'g2@shop.test', 'g3@shop.test']);
  });

  test('when the mail server defers a message until its attempts run out then it fails with its reason, and a retry queues it again and it is delivered', async () => {
    const sent = (await api().post('/transactional/send').send(receipt({ to: 'hal@shop.test' })).expect(200)).body.message.messages[0];
    deferring = true;
    try {
      await until(async () => {
        await deliver({ maxAttempts: 2, retryBaseMs: 1 });
        return (await details(sent.id)).status === 'failed';
      }, 20_000, 'the message to fail');
    } finally {
      deferring = false;
    }
    const failed = await details(sent.id);
    expect(failed.last_smtp_response).toMatchObject({ code: 451 });
    expect(failed.events.at(-1)).toMatchObject({ type: 'failed', detail: expect.stringContaining('try again later') });
    // The class of its last refusal, in the details and the log, which filters by it.
    expect(failed.bounce_class).toBe('soft');
    const soft = (await api().get('/transactional/messages?bounce_class=soft&to=hal@shop.test').expect(200)).body.message;
    expect(soft.total).toBe(1);
    expect(soft.messages[0]).toMatchObject({ id: sent.id, status: 'failed', bounce_class: 'soft' });
    expect((await api().get('/transactional/messages?bounce_class=hard&to=hal@shop.test').expect(200)).body.message.total).toBe(0);
    const wrong = await api().get('/transactional/messages?bounce_class=bounced').expect(422);
    expect(wrong.body.errors.bounce_class).toEqual(['The selected bounce class is invalid.']);
    const queuedRetry = await api().post('/transactional/messages/retry').send({ id: 'tx_999999999' }).expect(404);
    expect(queuedRetry.body.errors).toBe('Record Not Found');

    expect((await api().post('/transactional/messages/retry').send({ id: sent.id }).expect(200)).body.message).toBe('Queued Successfully');
    const again = await api().post('/transactional/messages/retry').send({ id: sent.id }).expect(422);
    expect(again.body.errors.id[0]).toMatch(/still queued/);
    await deliver();
    await sink.waitFor(1);
    const delivered = await details(sent.id);
    expect(delivered.status).toBe('delivered');
    expect(delivered.bounce_class).toBeNull();
    expect(delivered.events.map((e: { type: string }) => e.type)).toEqual(['accepted', 'failed', 'sent', 'delivered']);
  });

  test('when an analyst key sends then it is refused, while it reads the log; an editor key sends', async () => {
    const analyst = await addRoleKey(h, setup.account, 'analyst');
    const editor = await addRoleKey(h, setup.account, 'editor');
    await h.api(analyst).post('/transactional/send').send(receipt()).expect(403);
    await h.api(analyst).get('/transactional/messages').expect(200);
    await h.api(editor).post('/transactional/send').send(receipt({ to: 'ivy@shop.test' })).expect(200);
    // Another account sees none of these messages.
    const stranger = await h.account();
    expect((await h.api(stranger).get('/transactional/messages').expect(200)).body.message).toEqual({ messages: [], total: 0 });
  });

  test('when a body is wrong then each mistake is a clear 422 and nothing is queued', async () => {
    const res = await api().post('/transactional/send').send({ to: 'x@shop.test', from: 'nobody@else.test', subject: 'Hi', text: 'Hi', send_at: '2026-12-01T09:00:00', track_opens: 3 }).expect(422);
    expect(Object.keys(res.body.errors).sort()).toEqual(['send_at', 'track_opens']);
    const sender = await api().post('/transactional/send').send({ to: 'x@shop.test', from: 'nobody@else.test', subject: 'Hi', text: 'Hi' }).expect(422);
    expect(sender.body.errors.from[0]).toBe('The from must be the address of a verified sender of the account.');
    await api().post('/transactional/send').set('Idempotency-Key', '').send(receipt()).expect(422);
    expect(await h.runtime.db('send_messages').where({ user_id: setup.account.user_id, email: 'x@shop.test' }).first()).toBeUndefined();
  });

  test('when a webhook listens then a transactional message\'s delivery event says transactional, with its id and tags', async () => {
    const receiver = await startWebhookReceiver();
    try {
      await api().post('/webhooks/save').send({ url: receiver.url, events: ['message.delivered'] }).expect(200);
    } finally {
      await receiver.close();
    }
    const sent = (await api().post('/transactional/send').send(receipt({ to: 'jo@shop.test', tags: ['alert'] })).expect(200)).body.message.messages[0];
    await deliver();
    await sink.waitFor(1);
    const rows = await h.runtime.db('webhook_deliveries').where({ user_id: setup.account.user_id, event_type: 'message.delivered' });
    const data = rows.map((r) => JSON.parse(String(r.data))).find((d) => d.id === sent.id);
    expect(data).toMatchObject({ transactional: true, id: sent.id, tags: ['alert'], email: 'jo@shop.test' });
    expect(Number((await h.runtime.db('send_messages').where({ id: Number(sent.id.slice(3)) }).first('state')).state)).toBe(MESSAGE_STATE.sent);
  });
});
