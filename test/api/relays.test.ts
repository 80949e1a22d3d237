import { useHarness } from '../support/harness';
import { addAutomation, addContactType, audienceOf, berlin, scheduleBody, sendingFixtures, singleSendBody, testWorker } from '../support/fixtures';
import { expectDeleteIdRules, NOT_FOUND, failed } from '../support/expectations';
import { useSmtpSink } from '../support/smtp';

describe('relays', () => {
  const instance = useSmtpSink({ emptyBeforeEach: true });
  const chosen = useSmtpSink({ emptyBeforeEach: true });
  const h = useHarness({ SMTP_URL: () => instance.url, RELAY_ALLOW_PRIVATE: '1' });
  const [alice, bob] = h.accounts(2);

  test('when an SMTP relay is saved then its password is sealed and never shown, and the list answers it', async () => {
    const res = await h.api(alice).post('/relays/save').send({ name: 'Office Postfix', kind: 'smtp', url: 'smtp://mailer:s3cret-pass@127.0.0.1:2525', max_rate: 5, priority: 3, domains: ['Acme.test', 'acme.test'] }).expect(200);
    const relay = res.body.message.relay;
    expect(relay).toMatchObject({ user_id: alice.user_id, name: 'Office Postfix', kind: 'smtp', url: 'smtp://mailer@127.0.0.1:2525', max_rate: 5, priority: 3, domains: ['acme.test'], has_secret: true, health: 'up', down_until: null, last_error: null });
    expect(JSON.stringify(res.body)).not.toContain('s3cret-pass');
    const stored = await h.runtime.db('relays').where({ id: relay.id }).first();
    expect(String(stored.secret_sealed)).not.toContain('s3cret-pass');
    const list = (await h.api(alice).get('/relays').expect(200)).body.message.relays;
    expect(list.map((r: { id: number }) => r.id)).toContain(relay.id);
    expect(JSON.stringify(list)).not.toContain('s3cret-pass');
    expect((await h.api(bob).get('/relays').expect(200)).body.message.relays).toEqual([]);
    await h.api(alice).delete(`/relays/delete?id=${relay.id}`).expect(200, { status: 'success', message: 'Deleted Successfully' });
  });

  test('when a relay is tested then it keeps when and whether the test worked, and a failed test is its last error', async () => {
    const relay = (await h.api(alice).post('/relays/save').send({ name: 'Tried', kind: 'smtp', url: chosen.url }).expect(200)).body.message.relay;
    expect(relay).toMatchObject({ tested_at: null, test_ok: null });
    await h.api(alice).post(`/relays/test?id=${relay.id}`).expect(200, { status: 'success', message: { test: { ok: true, error: null } } });
    const tested = (await h.api(alice).get('/relays').expect(200)).body.message.relays.find((r: { id: number }) => r.id === relay.id);
    expect(tested).toMatchObject({ test_ok: true, last_error: null });
    expect(tested.tested_at).toMatch(/^\d{4}-\d\d-\d\dT/);

    // Nothing listens on the closed port: the test fails, and says why.
    const closed = (await h.api(alice).post('/relays/save').send({ name: 'Closed', kind: 'smtp', url: 'smtp://127.0.0.1:1' }).expect(200)).body.message.relay;
    const failure = (await h.api(alice).post(`/relays/test?id=${closed.id}`).expect(200)).body.message.test;
    expect(failure.ok).toBe(false);
    const failed = (await h.api(alice).get('/relays').expect(200)).body.message.relays.find((r: { id: number }) => r.id === closed.id);
    expect(failed).toMatchObject({ test_ok: false, last_error: failure.error });
    expect(failed.last_error_at).toBe(failed.tested_at);
  });

  test('when a relay is saved without what its kind needs then each field says why', async () => {
    const res = await h.api(alice).post('/relays/save').send({ kind: 'pigeon', max_rate: -1, domains: ['not a domain'] }).expect(422);
    expect(res.body).toEqual(failed({
      name: ['The name field is required.'],
      kind: ['The selected kind is invalid.'],
      max_rate: ['The max rate must be between 0 and 100000.'],
      domains: ['Each of the domains must be a domain name, such as example.com.'],
    }));
    expect((await h.api(alice).post('/relays/save').send({ name: 'x', kind: 'smtp' }).expect(422)).body).toEqual({ status: 'failed', errors: { url: ['The url field is required when kind is smtp.'] } });
    expect((await h.api(alice).post('/relays/save').send({ name: 'x', kind: 'sendgrid' }).expect(422)).body).toEqual({ status: 'failed', errors: { api_key: ['The api key field is required.'] } });
    expect((await h.api(alice).post('/relays/save').send({ name: 'x', kind: 'ses', api_key: 'only-one-part' }).expect(422)).body).toEqual({
      status: 'failed',
      errors: { api_key: ['The api key of an SES relay must be the access key id and the secret access key, separated by a colon.'] },
    });
  });

  test('when a relay is changed without a new key then the stored one stays; another account\'s relay is not found', async () => {
    const relay = (await h.api(alice).post('/relays/save').send({ name: 'Postmark', kind: 'postmark', api_key: 'pm-token', endpoint: 'http://127.0.0.1:9' }).expect(200)).body.message.relay;
    const before = await h.runtime.db('relays').where({ id: relay.id }).first('secret_sealed');
    const updated = (await h.api(alice).post(`/relays/update?id=${relay.id}`).send({ name: 'Postmark EU', kind: 'postmark', endpoint: 'http://127.0.0.1:9', priority: 7 }).expect(200)).body.message.relay;
    expect(updated).toMatchObject({ name: 'Postmark EU', priority: 7, has_secret: true });
    expect(await h.runtime.db('relays').where({ id: relay.id }).first('secret_sealed')).toEqual(before);
    expect((await h.api(bob).post(`/relays/update?id=${relay.id}`).send({ name: 'mine', kind: 'postmark', api_key: 'x' }).expect(404)).body).toEqual(NOT_FOUND);
    expect((await h.api(bob).post(`/relays/test?id=${relay.id}`).expect(404)).body).toEqual(NOT_FOUND);
    await expectDeleteIdRules(h.api(alice), '/relays/delete');
  });

  test('when a single send names a relay then its mail goes through it first; a relay of another account is refused', async () => {
    const place = await berlin(h);
    const a = await audienceOf(h, alice, place);
    const theirs = (await h.api(bob).post('/relays/save').send({ name: 'Bob\'s', kind: 'smtp', url: chosen.url }).expect(200)).body.message.relay;
    const refused = await h.api(alice).post('/single/send/create').send(singleSendBody(a, { relay_id: theirs.id })).expect(422);
    expect(refused.body).toEqual({ status: 'failed', errors: { relay_id: ['The selected relay id is invalid.'] } });

    // Listed for another domain only: used because the send names it.
    const mine = (await h.api(alice).post('/relays/save').send({ name: 'Chosen', kind: 'smtp', url: chosen.url, domains: ['elsewhere.test'] }).expect(200)).body.message.relay;
    const f = sendingFixtures(h);
    const type = await addContactType(h, alice, 'Pinned');
    await f.contact(alice.user_id, type, 'pinned@example.org');
    const created = await h.api(alice).post('/single/send/create').send(singleSendBody(a, { relay_id: mine.id, recipient_id: [`contacts_${type}`] })).expect(200);
    const got = (await h.api(alice).get(`/single-send/details?utr=${created.body.message.utr}`).expect(200)).body.message;
    expect(got.singleSend[0].relay_id).toBe(mine.id);

    const { worker, close } = testWorker(h, instance.url);
    await worker.runOnce().finally(close);
    expect(chosen.messages.map((m) => m.to)).toEqual([['pinned@example.org']]);
    expect(instance.messages.filter((m) => m.to[0] === 'pinned@example.org')).toEqual([]);
    // Never tested, but it handed a message over: the dashboard counts it as used, not untried.
    const usage = await h.runtime.services.relays.usage({ userId: alice.user_id });
    expect(usage.get(mine.id)).toEqual({ sentLastHour: 1, used: true });
    expect([...usage.values()].filter((u) => !u.used)).toHaveLength(usage.size - 1);
  });

  test('when an automation step names a relay then its record says so; a relay of another account is refused', async () => {
    const senderId = await sendingFixtures(h).sender(alice.user_id, { from_email: 'steps@acme.test', nickname: 'steps' });
    const utr = await addAutomation(h, alice, {});
    const theirs = (await h.api(bob).post('/relays/save').send({ name: 'Bob\'s step relay', kind: 'smtp', url: chosen.url }).expect(200)).body.message.relay;
    const refused = await h.api(alice).post('/automations/schedule/create').send(scheduleBody(utr, senderId, { relay_id: theirs.id })).expect(422);
    expect(refused.body).toEqual({ status: 'failed', errors: { relay_id: ['The selected relay id is invalid.'] } });
    const mine = (await h.api(alice).post('/relays/save').send({ name: 'Step relay', kind: 'smtp', url: chosen.url }).expect(200)).body.message.relay;
    await h.api(alice).post('/automations/schedule/create').send(scheduleBody(utr, senderId, { relay_id: mine.id })).expect(200);
    const steps = (await h.api(alice).get(`/automations/schedule?utr=${utr}`).expect(200)).body.message.automation_schedules;
    expect(steps.map((s: { relay_id: number | null }) => s.relay_id)).toEqual([mine.id]);
  });

  test('when RELAY_ALLOW_PRIVATE is off then a relay on a private, loopback or link-local address is refused', async () => {
    const strict = await import('../../src/services/delivery/relays');
    const service = strict.createRelaysService({ db: h.runtime.db, config: { ...h.runtime.config, relayAllowPrivate: false }, secret: h.runtime.secret });
    const base = { name: 'x', api_key: 'k', region: null, max_rate: 0, priority: 0, domains: [] };
    await expect(service.save({ userId: alice.user_id }, { ...base, kind: 'smtp', url: 'smtp://10.0.0.5:25', api_key: null, endpoint: null })).rejects.toMatchObject({
      fields: { url: ['The url must point to a public address, not a private, loopback or link-local one.'] },
    });
    await expect(service.save({ userId: alice.user_id }, { ...base, kind: 'mailgun', url: null, endpoint: 'http://169.254.169.254' })).rejects.toMatchObject({
      fields: { endpoint: ['The endpoint must point to a public address, not a private, loopback or link-local one.'] },
    });
  });
});
