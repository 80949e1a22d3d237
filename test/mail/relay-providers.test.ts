import request from 'supertest';
import { useHarness, TestAccount } from '../support/harness';
import { addContactType, sendingFixtures, testWorker } from '../support/fixtures';
import { useSmtpSink } from '../support/smtp';
import { ProviderEmulator, ProviderKind, startProviderEmulator } from '../support/provider-emulators';

const KINDS: ProviderKind[] = ['ses', 'sendgrid', 'postmark', 'mailgun'];

/** What each provider says when it refuses the sender, as its emulator answers. */
const POLICY_WORDS: Record<ProviderKind, RegExp> = {
  ses: /MessageRejected: Email address is not verified/,
  sendgrid: /403: The from address does not match a verified Sender Identity/,
  postmark: /422: The 'From' address you supplied .* is not a Sender Signature/,
  mailgun: /403: .*not allowed to send/,
};

describe('relays through the providers\' APIs', () => {
  const instance = useSmtpSink();
  const h = useHarness({ SMTP_URL: () => instance.url, RELAY_ALLOW_PRIVATE: '1', POSTMARK_WEBHOOK_AUTH: 'hooks:postmark-secret' });
  const f = sendingFixtures(h);

  describe.each(KINDS)('%s', (kind) => {
    let emulator: ProviderEmulator;
    let account: TestAccount;
    let relayId: number;
    let sender: number;
    let group: number;

    beforeAll(async () => {
      emulator = await startProviderEmulator(kind);
      account = await h.account();
      sender = await f.sender(account.user_id);
      group = await f.group(account.user_id);
    });
    afterAll(() => emulator.close());

    const relayBody = (apiKey: string) => ({ name: `${kind} relay`, kind, api_key: apiKey, endpoint: emulator.url, region: 'us-east-1', domains: ['acme.test'] });

    /** A send to `count` new addresses, run by a worker until nothing is due; its ledger rows. */
    async function send(prefix: string, count: number) {
      const type = await addContactType(h, account, prefix);
      await f.contacts(account.user_id, type, count, `${prefix}.example`);
      const sendId = await f.singleSend(account.user_id, { senderId: sender, groupId: group, to: [{ contactType: type }] });
      const { worker, close } = testWorker(h, instance.url);
      await worker.runOnce().finally(close);
      return { sendId, rows: await f.ledger(sendId) };
    }

    test('when a relay is saved with the provider\'s key then its test connects and authenticates, and a wrong key is reported', async () => {
      const api = h.api(account);
      const saved = (await api.post('/relays/save').send(relayBody(emulator.key)).expect(200)).body.message.relay;
      relayId = saved.id;
      expect(saved).toMatchObject({ kind, endpoint: emulator.url, has_secret: true, health: 'up' });
      expect(JSON.stringify(saved)).not.toContain(emulator.key.split(':').pop());
      expect((await api.post(`/relays/test?id=${relayId}`).expect(200)).body).toEqual({ status: 'success', message: { test: { ok: true, error: null } } });
      expect(emulator.messages).toHaveLength(0);

      const wrongKey = kind === 'ses' ? 'AKIAWRONG:wrong-secret' : kind === 'sendgrid' ? 'SG.wrong-key' : 'wrong-key';
      const wrong = (await api.post('/relays/save').send({ ...relayBody(wrongKey), name: 'wrong', domains: ['elsewhere.test'] }).expect(200)).body.message.relay;
      const test = (await api.post(`/relays/test?id=${wrong.id}`).expect(200)).body.message.test;
      expect(test.ok).toBe(false);
      expect(test.error).toMatch(kind === 'ses' ? /403/ : /401/);
      await api.delete(`/relays/delete?id=${wrong.id}`).expect(200);
    });

    test('when a send goes out then the provider gets each message and the ledger keeps the relay and the provider\'s id', async () => {
      const { rows } = await send(`${kind}-ok`, 3);
      expect(emulator.messages.map((m) => m.to).sort()).toEqual([0, 1, 2].map((i) => `r${i}@${kind}-ok.example`).sort());
      expect(emulator.messages.every((m) => m.subject.startsWith('Hello Name') && m.html.includes('Dear Name'))).toBe(true);
      // The display name as recipients see it, without quotes of its own.
      expect(emulator.messages.map((m) => m.fromName)).toEqual(['Acme News', 'Acme News', 'Acme News']);
      expect(instance.messages).toHaveLength(0);
      expect(rows.map((r) => [Number(r.state), Number(r.relay_id)])).toEqual(rows.map(() => [2, relayId]));
      expect(rows.map((r) => r.provider_message_id).sort()).toEqual(emulator.messages.map((m) => m.providerId).sort());
    });

    if (kind === 'sendgrid' || kind === 'postmark') {
      test('when transactional mail has copies, blind copies and files then the provider receives each as its API takes them', async () => {
        const pdf = Buffer.from('%PDF-1.4 receipt 812');
        const body = {
          to: 'buyer@tx-copies.example',
          sender_id: sender,
          subject: 'Your receipt',
          html: '<p>Thanks.</p>',
          // The `to` again in the copies: the APIs refuse an address twice in one message.
          cc: ['accounts@tx-copies.example', 'BUYER@tx-copies.example'],
          bcc: ['audit@tx-copies.example', 'accounts@tx-copies.example'],
          attachments: [{ filename: 'receipt.pdf', content: pdf.toString('base64'), content_type: 'application/pdf' }, { filename: 'notes.txt', content: Buffer.from('hello').toString('base64') }],
        };
        await h.api(account).post('/transactional/send').send(body).expect(200);
        const before = emulator.messages.length;
        const { worker, close } = testWorker(h, instance.url);
        await worker.runOnce().finally(close);
        const received = emulator.messages.slice(before);
        expect(received).toHaveLength(1);
        expect(received[0]).toMatchObject({ to: 'buyer@tx-copies.example', cc: ['accounts@tx-copies.example'], bcc: ['audit@tx-copies.example'] });
        expect(received[0].attachments).toEqual([
          { filename: 'receipt.pdf', contentType: 'application/pdf', content: pdf },
          { filename: 'notes.txt', contentType: expect.stringMatching(/^(text\/plain|application\/octet-stream)/), content: Buffer.from('hello') },
        ]);
        expect(emulator.refused.filter((r) => r.status === 400 || r.status === 422)).toEqual([]);
        expect(instance.messages).toHaveLength(0);
      });
    }

    if (kind === 'postmark') {
      test('when Postmark reports a bounce naming only its own MessageID then the message it was answered for is matched', async () => {
        const { rows } = await send('pm-webhook', 1);
        const providerId = String(rows[0].provider_message_id);
        const bounce = {
          RecordType: 'Bounce', MessageStream: 'broadcast', ID: 4323372036854775807, Type: 'HardBounce', TypeCode: 1, Name: 'Hard bounce',
          MessageID: providerId, ServerID: 23, Description: 'The server was unable to deliver your message (ex: unknown user, mailbox not found).',
          Details: 'smtp;550 5.1.1 The email account that you tried to reach does not exist.', Email: String(rows[0].email), From: 'news@acme.test',
          BouncedAt: '2026-11-27T09:16:54.9070259Z', DumpAvailable: true, Inactive: true, CanActivate: true, Subject: 'Hello',
        };
        const auth = `Basic ${Buffer.from('hooks:postmark-secret').toString('base64')}`;
        await request(h.runtime.app).post('/webhooks/postmark').set('Authorization', auth).send(bounce).expect(200);
        expect(await h.runtime.db('send_messages').where({ id: rows[0].id }).first('state')).toEqual({ state: 4 });
        // An id Postmark never answered matches nothing.
        await request(h.runtime.app).post('/webhooks/postmark').set('Authorization', auth).send({ ...bounce, MessageID: '00000000-0000-4000-8000-000000000000', Email: 'other@example.org' }).expect(200);
        expect(await h.runtime.db('suppressed_addresses').where({ user_id: account.user_id }).pluck('email_key')).toEqual([String(rows[0].email_key)]);
      });
    }

    test('when the provider answers 429 then the relay is marked down with the provider\'s words and the messages wait', async () => {
      emulator.behaviour = 'rate-limited';
      const before = emulator.refused.length;
      const { rows } = await send(`${kind}-busy`, 2);
      emulator.behaviour = 'ok';
      // Both messages may have been in flight at once; each got the provider's 429.
      expect([...new Set(emulator.refused.slice(before).map((r) => r.status))]).toEqual([429]);
      expect(rows.map((r) => Number(r.state))).toEqual([0, 0]);
      const relay = (await h.api(account).get('/relays').expect(200)).body.message.relays.find((r: { id: number }) => r.id === relayId);
      expect(relay).toMatchObject({ health: 'down', down_until: expect.any(String) });
      expect(relay.last_error).toMatch(/429/);
      expect(instance.messages).toHaveLength(0);
    });

    test('when the provider refuses the sender then the messages fail as policy and nobody is suppressed', async () => {
      // Saving the relay again starts its health afresh.
      await h.api(account).post(`/relays/update?id=${relayId}`).send(relayBody(emulator.key)).expect(200);
      emulator.behaviour = 'policy';
      const { rows } = await send(`${kind}-refused`, 1);
      emulator.behaviour = 'ok';
      expect(rows.map((r) => [Number(r.state), r.failure_reason])).toEqual([[3, 'policy']]);
      expect(String(rows[0].last_error)).toMatch(POLICY_WORDS[kind]);
      expect(await h.runtime.db('suppressed_addresses').where({ user_id: account.user_id, email_key: String(rows[0].email_key) }).first()).toBeUndefined();
    });
  });
});
