import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { SMTPServer } from 'smtp-server';
import { useHarness, TestAccount } from '../support/harness';
import { addContactType, sendingFixtures, testWorker } from '../support/fixtures';
import { useSmtpSink } from '../support/smtp';

/** A relay's own Postfix, as Debian sets it up: STARTTLS offered with a self-signed certificate. */
async function startSelfSignedRelay(cert: { key: Buffer; cert: Buffer }) {
  const received: Array<{ to: string; secure: boolean }> = [];
  const server = new SMTPServer({
    ...cert,
    disableReverseLookup: true,
    authOptional: true,
    logger: false,
    onAuth(auth, _session, callback) {
      if (auth.username === 'relay' && auth.password === 'secret') callback(null, { user: auth.username });
      else callback(new Error('Invalid username or password'));
    },
    onData(stream, session, callback) {
      stream.resume();
      stream.on('end', () => {
        received.push({ to: session.envelope.rcptTo.map((r) => r.address).join(','), secure: Boolean(session.secure) });
        callback();
      });
    },
  });
  // A refused handshake is the client's to report.
  server.on('error', () => undefined);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.server.address() as AddressInfo).port;
  return { received, url: `smtp://relay:secret@127.0.0.1:${port}`, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

describe('an SMTP relay with a self-signed certificate (tls_verify)', () => {
  const instance = useSmtpSink();
  const h = useHarness({ SMTP_URL: () => instance.url, RELAY_ALLOW_PRIVATE: '1' });
  const f = sendingFixtures(h);
  let alice: TestAccount;
  let dir: string;
  let relay: Awaited<ReturnType<typeof startSelfSignedRelay>>;

  beforeAll(async () => {
    alice = await h.account();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'relay-tls-'));
    execFileSync('openssl', [
      'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1',
      '-subj', '/CN=mail.relay.test', '-keyout', path.join(dir, 'key.pem'), '-out', path.join(dir, 'cert.pem'),
    ], { stdio: 'ignore' });
    relay = await startSelfSignedRelay({ key: fs.readFileSync(path.join(dir, 'key.pem')), cert: fs.readFileSync(path.join(dir, 'cert.pem')) });
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
