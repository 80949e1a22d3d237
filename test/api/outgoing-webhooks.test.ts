import request from 'supertest';
import { HOOK_EVENTS } from '../../src/lib/constants';
import { addContact, addContactType, countryId } from '../support/fixtures';
import { expectDeleteIdRules, NOT_FOUND, failed } from '../support/expectations';
import { TIMESTAMP, useHarness, TestAccount } from '../support/harness';

const SECRET = /^whsec_[A-Za-z0-9+/]{43}=$/;

describe('outgoing webhooks (extension)', () => {
  const h = useHarness({ WEBHOOK_ALLOW_PRIVATE: '1' });
  const [alice, bob] = h.accounts(2);

  const save = (account: TestAccount, body: Record<string, unknown>) => h.api(account).post('/webhooks/save').send(body);

  test('when a webhook is saved then the answer is message.webhook with its secret, which no later answer shows and the database keeps only sealed', async () => {
    const res = await save(alice, { url: 'http://127.0.0.1:9/hooks', events: ['message.delivered', 'contact.created'], description: 'CRM sync' }).expect(200);
    expect(res.body).toEqual({
      status: 'success',
      message: {
        webhook: {
          id: expect.any(Number),
          user_id: alice.user_id,
          url: 'http://127.0.0.1:9/hooks',
          description: 'CRM sync',
          events: ['message.delivered', 'contact.created'],
          created_at: expect.stringMatching(TIMESTAMP),
          updated_at: expect.stringMatching(TIMESTAMP),
          secret: expect.stringMatching(SECRET),
        },
      },
    });
    const { id, secret } = res.body.message.webhook;
    const list = await h.api(alice).get('/webhooks').expect(200);
    expect(list.body).toEqual({ status: 'success', message: { webhooks: [{ ...res.body.message.webhook, secret: undefined }] } });
    expect(JSON.stringify(list.body)).not.toContain(secret);
    const stored = await h.runtime.db('webhook_endpoints').where({ id }).first();
    expect(JSON.stringify(stored)).not.toContain(secret.slice(6));
    expect((await h.api(bob).get('/webhooks').expect(200)).body).toEqual({ status: 'success', message: { webhooks: [] } });
  });

  test('when fields are missing or wrong then every failing field is named in plain words', async () => {
    expect((await save(alice, {}).expect(422)).body).toEqual({
      status: 'failed',
      errors: { url: ['The url field is required.'], events: ['The events field is required.'] },
    });
    const res = await save(alice, { url: 'ftp://example.com/x', events: ['message.delivered', 'message.teleported'], description: 'x'.repeat(256) }).expect(422);
    expect(res.body).toEqual(failed({
      url: ['The url must be a valid URL starting with http:// or https://.'],
      events: [`The selected events is invalid; the events are: ${HOOK_EVENTS.join(', ')}.`],
      description: ['The description may not be greater than 255 characters.'],
    }));
    expect((await save(alice, { url: 'http://127.0.0.1/x', events: 'message.delivered' }).expect(422)).body.errors).toEqual({ events: ['The events must be an array.'] });
  });

  test('when the multipart form of the reference is used then indexed events are read as an array', async () => {
    const res = await h.api(alice).post('/webhooks/save').field('url', 'http://127.0.0.1:9/form').field('events[0]', 'automation.live').field('events[1]', 'automation.paused').expect(200);
    expect(res.body.message.webhook.events).toEqual(['automation.live', 'automation.paused']);
    expect(res.body.message.webhook.description).toEqual('');
  });

  test('when a webhook is updated then its fields change and its secret stays, unless rotate_secret asks for a new one (shown once)', async () => {
    const created = (await save(alice, { url: 'http://127.0.0.1:9/a', events: ['message.opened'] }).expect(200)).body.message.webhook;
    const updated = await h.api(alice).post(`/webhooks/update?id=${created.id}`).send({ url: 'http://127.0.0.1:9/b', events: ['message.clicked', 'message.opened'], description: 'new' }).expect(200);
    expect(updated.body).toEqual({
      status: 'success',
      message: { webhook: { ...created, secret: undefined, url: 'http://127.0.0.1:9/b', events: ['message.clicked', 'message.opened'], description: 'new', updated_at: expect.stringMatching(TIMESTAMP) } },
    });
    const sealed = async () => (await h.runtime.db('webhook_endpoints').where({ id: created.id }).first()).secret_sealed;
    const before = await sealed();
    const rotated = await h.api(alice).post(`/webhooks/update?id=${created.id}`).send({ url: 'http://127.0.0.1:9/b', events: ['message.opened'], rotate_secret: 1 }).expect(200);
    expect(rotated.body.message.webhook.secret).toMatch(SECRET);
    expect(rotated.body.message.webhook.secret).not.toEqual(created.secret);
    expect(await sealed()).not.toEqual(before);

    expect((await h.api(bob).post(`/webhooks/update?id=${created.id}`).send({ url: 'http://127.0.0.1:9/c', events: ['message.opened'] }).expect(404)).body).toEqual(NOT_FOUND);
    expect((await h.api(alice).post('/webhooks/update?id=abc').send({ url: 'http://127.0.0.1:9/c', events: ['message.opened'], rotate_secret: 'maybe' }).expect(422)).body).toEqual({
      status: 'failed',
      errors: { id: ['The id must be an integer.'], rotate_secret: ['The rotate secret field must be true or false.'] },
    });
    expect((await h.api(alice).post('/webhooks/update').send({ url: 'http://127.0.0.1:9/c', events: ['message.opened'] }).expect(422)).body).toEqual({
      status: 'failed',
      errors: { id: ['The id field is required.'] },
    });
  });

  test('when a webhook is deleted then it and its deliveries are gone; another account gets 404', async () => {
    const created = (await save(alice, { url: 'http://127.0.0.1:9/gone', events: ['contact.created'] }).expect(200)).body.message.webhook;
    await addContact(h, alice, { contact_type_id: await addContactType(h, alice, 'Hooked'), email: 'hooked@example.org', first_name: 'H', last_name: 'K', country: await countryId(h, 'FR') });
    expect(Number((await h.runtime.db('webhook_deliveries').where({ endpoint_id: created.id }).count({ n: '*' }))[0].n)).toBe(1);
    expect((await h.api(bob).delete(`/webhooks/delete?id=${created.id}`).expect(404)).body).toEqual(NOT_FOUND);
    expect((await h.api(alice).delete(`/webhooks/delete?id=${created.id}`).expect(200)).body).toEqual({ status: 'success', message: 'Deleted Successfully' });
    expect((await h.api(alice).get(`/webhooks/deliveries?id=${created.id}`).expect(404)).body).toEqual(NOT_FOUND);
    expect(Number((await h.runtime.db('webhook_deliveries').where({ endpoint_id: created.id }).count({ n: '*' }))[0].n)).toBe(0);
    await expectDeleteIdRules(h.api(alice), '/webhooks/delete');
  });

  test('when contacts are created then each is a pending delivery in the log, paged newest first, and only its account may read the log', async () => {
    const carol = await h.account();
    const hook = (await save(carol, { url: 'http://127.0.0.1:9/log', events: ['contact.created'] }).expect(200)).body.message.webhook;
    const typeId = await addContactType(h, carol, 'Readers');
    const country = await countryId(h, 'FR');
    for (const email of ['one@example.org', 'two@example.org', 'three@example.org']) {
      await addContact(h, carol, { contact_type_id: typeId, email, first_name: 'F', last_name: 'L', country });
    }
    const page = await h.api(carol).get(`/webhooks/deliveries?id=${hook.id}&page=1&per_page=2`).expect(200);
    expect(page.body.message.pagination).toEqual({ page: 1, per_page: 2, total: 3 });
    expect(page.body.message.deliveries).toEqual([
      {
        id: expect.any(Number),
        webhook_id: hook.id,
        event_id: expect.stringMatching(/^msg_[0-9a-f]{32}$/),
        type: 'contact.created',
        status: 'pending',
        attempts: 0,
        response_code: null,
        error: null,
        next_attempt_at: expect.stringMatching(TIMESTAMP),
        delivered_at: null,
        created_at: expect.stringMatching(TIMESTAMP),
        updated_at: expect.stringMatching(TIMESTAMP),
        data: { contact: expect.objectContaining({ email: 'three@example.org', contact_type_id: typeId }) },
      },
      expect.objectContaining({ data: { contact: expect.objectContaining({ email: 'two@example.org' }) } }),
    ]);
    const unpaged = await h.api(carol).get(`/webhooks/deliveries?id=${hook.id}`).expect(200);
    expect(unpaged.body.message.pagination).toEqual({ page: 1, per_page: 100, total: 3 });
    expect((await h.api(alice).get(`/webhooks/deliveries?id=${hook.id}`).expect(404)).body).toEqual(NOT_FOUND);
    expect((await h.api(carol).get('/webhooks/deliveries').expect(422)).body).toEqual({ status: 'failed', errors: { id: ['The id field is required.'] } });
    expect((await h.api(carol).get(`/webhooks/deliveries?id=${hook.id}&per_page=0`).expect(422)).body.errors).toEqual({ per_page: ['The per page must be between 1 and 1000.'] });
  });

  test('when the list is paged then the pagination is added', async () => {
    const dave = await h.account();
    for (const n of [1, 2, 3]) await save(dave, { url: `http://127.0.0.1:9/${n}`, events: ['import.finished'] }).expect(200);
    const res = await h.api(dave).get('/webhooks?page=2&per_page=2').expect(200);
    expect(res.body.message.webhooks.map((w: { url: string }) => w.url)).toEqual(['http://127.0.0.1:9/1']);
    expect(res.body.message.pagination).toEqual({ page: 2, per_page: 2, total: 3 });
  });

  test('when the incoming provider webhooks and the outgoing ones are both asked for then neither shadows the other', async () => {
    expect((await h.api(alice).get('/webhooks/ses').expect(404)).body).toEqual({ status: 'failed', errors: 'Not Found' });
    expect((await h.api(alice).put('/webhooks').expect(405)).headers.allow).toEqual('GET, HEAD');
    // Outside the prefix the provider route answers, not the API's keys check (SES is not configured here: 404).
    const ses = await request(h.runtime.app).post('/webhooks/ses').set('Content-Type', 'text/plain').send('{}');
    expect(ses.status).toBe(404);
    expect(ses.body).not.toEqual({ status: 'failed', errors: { PublicKey: expect.anything() } });
  });
});

describe('outgoing webhooks to private addresses', () => {
  const h = useHarness();

  test('when the url is or resolves to a private, loopback, link-local, unique-local, CGNAT or other non-global address then it is refused on url', async () => {
    const account = await h.account();
    for (const url of ['http://127.0.0.1:8080/x', 'http://localhost/x', 'http://10.1.2.3/', 'http://192.168.0.10/', 'http://169.254.169.254/latest', 'http://100.64.0.1/', 'http://[::1]/', 'http://[fd00::1]/', 'http://[::ffff:127.0.0.1]/', 'http://0.0.0.0/', 'http://198.18.0.1/', 'http://[fec0::1]/', 'http://[::10.0.0.1]/', 'http://[2001:db8::1]/']) {
      const res = await h.api(account).post('/webhooks/save').send({ url, events: ['contact.created'] }).expect(422);
      expect({ url, body: res.body }).toEqual({ url, body: { status: 'failed', errors: { url: ['The url must point to a public address, not a private, loopback or link-local one.'] } } });
    }
    const unknown = await h.api(account).post('/webhooks/save').send({ url: 'http://no-such-host.invalid/x', events: ['contact.created'] }).expect(422);
    expect(unknown.body).toEqual({ status: 'failed', errors: { url: ['The url host could not be found.'] } });
    expect((await h.api(account).get('/webhooks').expect(200)).body.message.webhooks).toEqual([]);
  });
});
