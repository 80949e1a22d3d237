import { Writable } from 'node:stream';
import { ImapFlow } from 'imapflow';
import pino from 'pino';
import { createBounceMailbox } from '../../src/workers/bounce-mailbox';
import { useHarness } from '../support/harness';
import { addContactType, header, sendingFixtures, testWorker } from '../support/fixtures';
import { bounceFixture } from '../support/bounce-fixtures';
import { Dovecot, freePort, startDovecot } from '../support/dovecot';
import { useSmtpSink } from '../support/smtp';
import { until } from '../support/wait';

describe('the IMAP bounce mailbox', () => {
  // Without BOUNCE_DOMAIN bounces go back to the From address, whose mailbox this is.
  const h = useHarness();
  const f = sendingFixtures(h);
  const [alice] = h.accounts(1);
  const sink = useSmtpSink();
  let dovecot: Dovecot;

  beforeAll(async () => {
    dovecot = await startDovecot();
  });
  afterAll(() => dovecot?.stop());

  async function withImap<T>(work: (client: ImapFlow) => Promise<T>): Promise<T> {
    const client = new ImapFlow({ host: '127.0.0.1', port: dovecot.port, secure: false, auth: { user: dovecot.user, pass: dovecot.password }, logger: false });
    await client.connect();
    try {
      return await work(client);
    } finally {
      await client.logout();
    }
  }

  const inbox = () =>
    withImap(async (client) => {
      const lock = await client.getMailboxLock('INBOX');
      try {
        const found: Array<{ subject: string; seen: boolean }> = [];
        for await (const m of client.fetch('1:*', { envelope: true, flags: true })) found.push({ subject: m.envelope?.subject ?? '', seen: m.flags?.has('\\Seen') ?? false });
        return found.sort((a, b) => a.subject.localeCompare(b.subject));
      } finally {
        lock.release();
      }
    });

  test('when bounces, a complaint and other mail wait in the mailbox then the reports are recorded and deleted, the rest marked read and left', async () => {
    const { sender, group, type } = await f.basics(alice, 'Mailbox readers');
    for (const email of ['gone@example.org', 'moved@example.org', 'angry@example.org', 'away@example.org']) await f.contact(alice.user_id, type, email);
    const sendId = await f.singleSend(alice.user_id, { senderId: sender, groupId: group, to: [{ contactType: type }] });
    const { worker, close } = testWorker(h, sink.url);
    await worker.runOnce().finally(close);
    const sent = (email: string) => {
      const m = sink.messages.find((r) => r.to[0] === email)!;
      expect(m.from).toBe('news@acme.test');
      return { verp: m.from, token: header(m.raw, 'X-Campaign-Message')!, recipient: email };
    };

    await withImap(async (client) => {
      await client.append('INBOX', bounceFixture('postfix-user-unknown.eml', sent('gone@example.org')));
      await client.append('INBOX', bounceFixture('exchange-online-recipient-not-found.eml', sent('moved@example.org')));
      await client.append('INBOX', bounceFixture('arf-abuse.eml', sent('angry@example.org')));
      await client.append('INBOX', bounceFixture('vacation-reply.eml', sent('away@example.org')));
      await client.append('INBOX', 'From: Sam <sam@example.org>\r\nTo: news@acme.test\r\nSubject: Question about your news\r\n\r\nHello!\r\n');
    });

    const mailbox = createBounceMailbox({
      config: { bounceImapUrl: dovecot.url, bounceImapPollMs: 60_000, bounceMaxBytes: 512 * 1024 },
      feedback: h.runtime.services.feedback,
      logger: h.runtime.logger,
    });
    expect(await mailbox.pollOnce()).toEqual({ recorded: 3, duplicate: 0, ignored: 0, unrecognised: 2, tooLarge: 0 });

    expect(await f.send(sendId)).toMatchObject({ triggered: 4, delivered: 2, bounces: 2, unsubscribes: 1 });
    const list = (await h.runtime.services.suppressions.list({ userId: alice.user_id })).rows.map((r) => `${r.email_address} ${r.reason} ${r.source}`).sort();
    expect(list).toEqual(['angry@example.org complaint imap', 'gone@example.org hard_bounce imap', 'moved@example.org hard_bounce imap']);
    expect(await inbox()).toEqual([
      { subject: 'Out of Office: November news', seen: true },
      { subject: 'Question about your news', seen: true },
    ]);
    // Read mail is not read again.
    expect(await mailbox.pollOnce()).toEqual({ recorded: 0, duplicate: 0, ignored: 0, unrecognised: 0, tooLarge: 0 });
  });

  test('when a complaint shows only the original\'s headers, without its X-Campaign-Message, then its Message-ID names the message', async () => {
    const type = await addContactType(h, alice, 'Redacted readers');
    await f.contact(alice.user_id, type, 'redacted@example.org');
    const sendId = await f.singleSend(alice.user_id, { senderId: await f.sender(alice.user_id), groupId: await f.group(alice.user_id), to: [{ contactType: type }] });
    sink.messages.splice(0);
    const { worker, close } = testWorker(h, sink.url);
    await worker.runOnce().finally(close);
    const m = sink.messages.find((r) => r.to[0] === 'redacted@example.org')!;
    await withImap((client) =>
      client.append('INBOX', bounceFixture('arf-headers-only.eml', { verp: m.from, token: 'none', recipient: 'redacted@example.org', messageId: header(m.raw, 'Message-ID')! })),
    );
    const mailbox = createBounceMailbox({
      config: { bounceImapUrl: dovecot.url, bounceImapPollMs: 60_000, bounceMaxBytes: 512 * 1024 },
      feedback: h.runtime.services.feedback,
      logger: h.runtime.logger,
    });
    expect(await mailbox.pollOnce()).toEqual({ recorded: 1, duplicate: 0, ignored: 0, unrecognised: 0, tooLarge: 0 });
    expect(await f.send(sendId)).toMatchObject({ delivered: 1, unsubscribes: 1 });
  });

  test('when the mailbox password is wrong then the poll fails (the worker logs it and tries again at the next poll)', async () => {
    const mailbox = createBounceMailbox({
      config: { bounceImapUrl: dovecot.url.replace(dovecot.password, 'wrong'), bounceImapPollMs: 60_000, bounceMaxBytes: 512 * 1024 },
      feedback: h.runtime.services.feedback,
      logger: h.runtime.logger,
    });
    // Refused for the password, not for anything else that can fail a poll (imapflow marks it).
    await expect(mailbox.pollOnce()).rejects.toMatchObject({ authenticationFailed: true, serverResponseCode: 'AUTHENTICATIONFAILED' });
  });

  test('when a poll fails then the log says why in plain words (the password refused, or the server out of reach) and the loop goes on', async () => {
    const logged = async (bounceImapUrl: string, times: number, bounceImapPollMs: number) => {
      const lines: Record<string, unknown>[] = [];
      const sink = new Writable({
        write(chunk, _enc, done) {
          lines.push(JSON.parse(chunk.toString()));
          done();
        },
      });
      const mailbox = createBounceMailbox({
        config: { bounceImapUrl, bounceImapPollMs, bounceMaxBytes: 512 * 1024 },
        feedback: h.runtime.services.feedback,
        logger: pino({ base: undefined }, sink),
      });
      mailbox.start();
      const failures = () => lines.filter((l) => l.msg === 'reading the bounce mailbox failed; trying again at the next poll');
      await until(() => failures().length >= times, 10_000, `${times} failed polls in the log`).finally(() => mailbox.stop());
      return failures();
    };
    // One attempt: Dovecot answers a wrong password later each time it sees one from the same address.
    const [refused] = await logged(dovecot.url.replace(dovecot.password, 'wrong'), 1, 60_000);
    expect(refused?.reason).toMatch(/^the mail server refused the user name or password in BOUNCE_IMAP_URL \(the server said: .+\)$/);

    const closed = await freePort();
    // Polled again after each failure: at least three failures (one more may land while it stops), each with the reason.
    const unreachable = await logged(`imap://${dovecot.user}:${dovecot.password}@127.0.0.1:${closed}/INBOX`, 3, 10);
    expect(unreachable.slice(0, 3).map((l) => l.reason)).toEqual(Array(3).fill(`could not reach the mail server at 127.0.0.1:${closed} (ECONNREFUSED)`));
  });
});
