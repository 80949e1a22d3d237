import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { useHarness, TestAccount } from '../support/harness';
import { addContactType, sendingFixtures, testWorker } from '../support/fixtures';
import { useSmtpSink } from '../support/smtp';
import { selfSignedCertificate, startTlsSmtpServer } from '../support/tls-smtp';

describe('an SMTP relay with a self-signed certificate (tls_verify)', () => {
  const instance = useSmtpSink();
  const h = useHarness({ SMTP_URL: () => instance.url, RELAY_ALLOW_PRIVATE: '1' });
  const f = sendingFixtures(h);
  let alice: TestAccount;
  let dir: string;
  // A relay's own Postfix, as Debian sets it up: STARTTLS offered with a self-signed certificate.
  let relay: Awaited<ReturnType<typeof startTlsSmtpServer>>;

  beforeAll(async () => {
    alice = await h.account();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'relay-tls-'));
    relay = await startTlsSmtpServer(selfSignedCertificate(dir, 'mail.relay.test'), { login: { user: 'relay', password: 'secret' } });
  });
  afterAll(async () => {
    await relay.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test('when a relay\'s certificate is self-signed then it is refused by default, and with tls_verify 0 it is used over an encrypted connection, kept on update', async () => {
    const api = h.api(alice);
    const body = { name: 'Own Postfix', kind: 'smtp', url: relay.url, domains: ['acme.test'] };
    const checked = (await api.post('/relays/save').send(body).expect(200)).body.message.relay;
    expect(checked).toMatchObject({ tls_verify: true });
    const refused = (await api.post(`/relays/test?id=${checked.id}`).expect(200)).body.message.test;
    expect(refused.ok).toBe(false);
    expect(refused.error).toMatch(/self[- ]signed certificate/);
    await api.delete(`/relays/delete?id=${checked.id}`).expect(200);

    const trusting = (await api.post('/relays/save').send({ ...body, tls_verify: 0 }).expect(200)).body.message.relay;
    expect(trusting).toMatchObject({ tls_verify: false });
    expect((await api.post(`/relays/test?id=${trusting.id}`).expect(200)).body).toEqual({ status: 'success', message: { test: { ok: true, error: null } } });
    // Saved again without the field: the choice stays.
    const updated = (await api.post(`/relays/update?id=${trusting.id}`).send({ ...body, priority: 2 }).expect(200)).body.message.relay;
    expect(updated).toMatchObject({ tls_verify: false, priority: 2 });

    const type = await addContactType(h, alice, 'Readers');
    await f.contact(alice.user_id, type, 'reader@example.org');
    const sendId = await f.singleSend(alice.user_id, { senderId: await f.sender(alice.user_id), groupId: await f.group(alice.user_id), to: [{ contactType: type }] });
    const { worker, close } = testWorker(h, instance.url);
    await worker.runOnce().finally(close);
    expect(relay.received).toEqual([{ to: 'reader@example.org', secure: true }]);
    expect(instance.messages).toHaveLength(0);
    expect((await f.ledger(sendId))[0]).toMatchObject({ state: 2, relay_id: trusting.id });
  });

  test('when tls_verify is not 0 or 1 then 422 and no relay is saved', async () => {
    const res = await h.api(alice).post('/relays/save').send({ name: 'Odd', kind: 'smtp', url: relay.url, tls_verify: 'sometimes' }).expect(422);
    expect(res.body).toEqual({ status: 'failed', errors: { tls_verify: ['The tls verify field must be true or false.'] } });
    expect((await h.api(alice).get('/relays').expect(200)).body.message.relays.map((r: { name: string }) => r.name)).not.toContain('Odd');
  });
});
