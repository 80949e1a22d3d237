import { BounceListener, startBounceListener } from '../../src/workers/bounce-listener';
import { useHarness, TestAccount } from '../support/harness';
import { addContactType, header, sendingFixtures, testWorker } from '../support/fixtures';
import { bounceFixture, deliverRaw } from '../support/bounce-fixtures';
import { useSmtpSink } from '../support/smtp';

describe('the inbound bounce listener', () => {
  const h = useHarness({ BOUNCE_DOMAIN: 'bounces.campaigns.test', BOUNCE_SMTP_PORT: '0' });
  const f = sendingFixtures(h);
  let alice: TestAccount;
  // The relay: accepts every message (as Postfix does before the next hop refuses it).
  const relay = useSmtpSink();
  let listener: BounceListener;
  let sender: number;
  let group: number;

  beforeAll(async () => {
    alice = await h.account();
    sender = await f.sender(alice.user_id);
    group = await f.group(alice.user_id);
    listener = await startBounceListener({ config: { ...h.runtime.config, bounceMaxBytes: 16 * 1024 }, feedback: h.runtime.services.feedback, logger: h.runtime.logger });
  });
  afterAll(() => listener.close());

  /** Sends one message to each address through the relay; returns what the relay received per address. */
  async function send(emails: string[], from = { userId: 0, sender: 0, group: 0 }) {
    const owner = from.userId ? from : { userId: alice.user_id, sender, group };
    const type = await addContactType(h, { user_id: owner.userId }, `Type ${emails[0]}`);
    for (const email of emails) await f.contact(owner.userId, type, email);
    const sendId = await f.singleSend(owner.userId, { senderId: owner.sender, groupId: owner.group, to: [{ contactType: type }] });
    relay.messages.splice(0);
    const { worker, close } = testWorker(h, relay.url);
    await worker.runOnce().finally(close);
    const accepted = (email: string) => {
      const m = relay.messages.find((r) => r.to[0] === email)!;
      return { verp: m.from, token: header(m.raw, 'X-Campaign-Message')!, recipient: email, messageId: header(m.raw, 'Message-ID')! };
    };
    return { sendId, type, accepted };
  }

  const reasons = async (userId = alice.user_id) =>
    Object.fromEntries(
      (await h.runtime.services.suppressions.list({ userId })).rows.map((r) => [r.email_address, `${r.reason}: ${r.diagnostic}`]),
    );
  const globallyUnsubscribed = async (userId = alice.user_id) => (await h.runtime.services.globalUnsubscribes.list({ userId })).rows.map((r) => r.email_address).sort();

  test.each([
    ['postfix-user-unknown.eml', 'postfix@example.org', 'smtp; 550 5.1.1 <postfix@example.org>: Recipient address rejected: User unknown in virtual mailbox table'],
    ['sendmail-user-unknown.eml', 'sendmail@example.org', 'SMTP; 550 5.1.1 <sendmail@example.org>... User unknown'],
    ['exim-plain.eml', 'exim@example.org', '550 5.1.1 <exim@example.org>: Recipient address rejected: User unknown'],
    [
      'gmail-no-such-user.eml',
      'gmail@example.org',
      "smtp; 550-5.1.1 The email account that you tried to reach does not exist. Please try 550-5.1.1 double-checking the recipient's email address for typos or 550-5.1.1 unnecessary spaces. For more information, go to 550 5.1.1  https://support.google.com/mail/?p=NoSuchUser d9443c01a7336-21c1c8e5c3asor123456ad.12 - gsmtp",
    ],
    ['exchange-online-recipient-not-found.eml', 'exchange@example.org', 'smtp;550 5.1.10 RESOLVER.ADR.RecipientNotFound; Recipient not found by SMTP address lookup'],
  ])('when %s comes back then the message counts as a bounce and the address is suppressed with the diagnostic', async (fixture, email, diagnostic) => {
    const { sendId, accepted } = await send([email, `kept-${email}`]);
    const message = accepted(email);
    await deliverRaw(listener.port, message.verp, bounceFixture(fixture, message));
    expect(await f.send(sendId)).toMatchObject({ triggered: 2, delivered: 1, bounces: 1 });
    expect((await reasons())[email]).toBe(`hard_bounce: ${diagnostic}`);
    expect((await reasons())[`kept-${email}`]).toBeUndefined();
  });

  test('when the same DSN arrives twice then it counts once', async () => {
    const { sendId, accepted } = await send(['twice@example.org']);
    const message = accepted('twice@example.org');
    await deliverRaw(listener.port, message.verp, bounceFixture('postfix-user-unknown.eml', message));
    await deliverRaw(listener.port, message.verp, bounceFixture('postfix-user-unknown.eml', message));
    expect(await f.send(sendId)).toMatchObject({ delivered: 0, bounces: 1 });
  });

  test('when a transient failure (4.2.2) comes back then it is a soft bounce: counted, not suppressed yet', async () => {
    const { sendId, accepted } = await send(['full@example.org']);
    const message = accepted('full@example.org');
    await deliverRaw(listener.port, message.verp, bounceFixture('postfix-mailbox-full.eml', message));
    expect(await f.send(sendId)).toMatchObject({ delivered: 0, bounces: 1 });
    expect((await reasons())['full@example.org']).toBeUndefined();
    const feedback = await h.runtime.db('message_feedback').where({ email_key: 'full@example.org' }).first();
    expect(feedback).toMatchObject({ event: 'bounce', permanent: 0, status: '4.2.2', source: 'dsn' });
  });

  test('when a delay warning or a vacation reply comes back then nothing is recorded', async () => {
    const { sendId, accepted } = await send(['slow@example.org', 'away@example.org']);
    await deliverRaw(listener.port, accepted('slow@example.org').verp, bounceFixture('postfix-delayed.eml', accepted('slow@example.org')));
    await deliverRaw(listener.port, accepted('away@example.org').verp, bounceFixture('vacation-reply.eml', accepted('away@example.org')));
    expect(await f.send(sendId)).toMatchObject({ delivered: 2, bounces: 0, unsubscribes: 0 });
    expect(await reasons()).not.toHaveProperty('slow@example.org');
    expect(await reasons()).not.toHaveProperty('away@example.org');
  });

  test('when an ARF abuse report comes back then it is a complaint: globally unsubscribed, counted in unsubscribes, suppressed', async () => {
    const { sendId, accepted } = await send(['spam-click@example.org']);
    const message = accepted('spam-click@example.org');
    await deliverRaw(listener.port, message.verp, bounceFixture('arf-abuse.eml', message));
    expect(await f.send(sendId)).toMatchObject({ delivered: 1, bounces: 0, unsubscribes: 1 });
    expect((await reasons())['spam-click@example.org']).toBe('complaint: abuse report from SomeGenerator/1.0');
    const global = await h.runtime.services.globalUnsubscribes.list({ userId: alice.user_id });
    expect(global.rows.map((r) => r.email_address)).toContain('spam-click@example.org');
  });

  test('when an ARF report comes to one message\'s VERP address about another message of the account then the complaint is charged to the message it is about: named by its X-Campaign-Message, or by the Message-ID in the original\'s headers', async () => {
    const { sendId, accepted } = await send(['envelope-a@example.org', 'complainer-b@example.org', 'envelope-c@example.org', 'complainer-d@example.org']);
    const [a, b, c, d] = ['envelope-a', 'complainer-b', 'envelope-c', 'complainer-d'].map((name) => accepted(`${name}@example.org`));
    // The full original, with its X-Campaign-Message.
    await deliverRaw(listener.port, a.verp, bounceFixture('arf-abuse.eml', { ...b, verp: a.verp }));
    // Only the original's headers, recipient redacted, no X-Campaign-Message: its Message-ID names it.
    await deliverRaw(listener.port, c.verp, bounceFixture('arf-headers-only.eml', { ...d, token: 'none', verp: c.verp }));

    expect(await f.send(sendId)).toMatchObject({ triggered: 4, delivered: 4, unsubscribes: 2 });
    const now = await reasons();
    expect(now['complainer-b@example.org']).toBe('complaint: abuse report from SomeGenerator/1.0');
    expect(now['complainer-d@example.org']).toBe('complaint: abuse report from ExampleFBL/2.1');
    expect(now).not.toHaveProperty('envelope-a@example.org');
    expect(now).not.toHaveProperty('envelope-c@example.org');
    const global = await globallyUnsubscribed();
    expect(global).toEqual(expect.arrayContaining(['complainer-b@example.org', 'complainer-d@example.org']));
    expect(global).not.toEqual(expect.arrayContaining(['envelope-a@example.org']));
    expect(global).not.toEqual(expect.arrayContaining(['envelope-c@example.org']));
  });

  test('when an ARF report to one account\'s message names a message of another account then it is charged to the envelope\'s message, never to the other account\'s', async () => {
    const bob = await h.account();
    const bobs = await send(['bobs-reader@example.org'], { userId: bob.user_id, sender: await f.sender(bob.user_id), group: await f.group(bob.user_id) });
    const theirs = bobs.accepted('bobs-reader@example.org');
    const { sendId, accepted } = await send(['alices-reader@example.org']);
    const ours = accepted('alices-reader@example.org');
    await deliverRaw(listener.port, ours.verp, bounceFixture('arf-abuse.eml', { ...theirs, verp: ours.verp }));
    await deliverRaw(listener.port, ours.verp, bounceFixture('arf-headers-only.eml', { ...theirs, token: 'none', verp: ours.verp }));

    expect(await reasons(bob.user_id)).toEqual({});
    expect(await globallyUnsubscribed(bob.user_id)).toEqual([]);
    expect(await f.send(bobs.sendId)).toMatchObject({ delivered: 1, unsubscribes: 0 });
    expect((await reasons())['alices-reader@example.org']).toBe('complaint: abuse report from SomeGenerator/1.0');
    expect(await f.send(sendId)).toMatchObject({ delivered: 1, unsubscribes: 1 });
  });

  test('when mail is addressed to anything but a valid VERP address then it is refused at RCPT with 550', async () => {
    const { accepted } = await send(['probe@example.org']);
    const good = accepted('probe@example.org');
    const forged = good.verp.replace(/-([0-9a-f])/, (_m, c: string) => `-${c === '0' ? '1' : '0'}`);
    for (const to of ['postmaster@bounces.campaigns.test', 'someone@example.org', forged, good.verp.replace('bounces.campaigns.test', 'elsewhere.test')]) {
      await expect(deliverRaw(listener.port, to, bounceFixture('postfix-user-unknown.eml', good))).rejects.toMatchObject({ responseCode: 550 });
    }
    expect(await reasons()).not.toHaveProperty('probe@example.org');
  });

  test('when a valid token is addressed to a host that only starts like BOUNCE_DOMAIN or like a bounce subdomain then it is refused at RCPT with 550 and nothing is recorded', async () => {
    const { sendId, accepted } = await send(['lookalike@example.org']);
    const good = accepted('lookalike@example.org');
    const [local] = good.verp.split('@');
    for (const host of ['bounces.campaigns.test.evil.test', 'bounces.evil.test']) {
      await expect(deliverRaw(listener.port, `${local}@${host}`, bounceFixture('postfix-user-unknown.eml', good)))
        .rejects.toMatchObject({ responseCode: 550, response: '550 5.1.1 No such mailbox here: this server only takes bounces' });
    }
    expect(await f.send(sendId)).toMatchObject({ delivered: 1, bounces: 0 });
    expect(await reasons()).not.toHaveProperty('lookalike@example.org');
  });

  test('when a message is larger than the limit then it is refused with 552 and nothing is recorded', async () => {
    const { accepted } = await send(['big@example.org']);
    const message = accepted('big@example.org');
    const big = bounceFixture('postfix-user-unknown.eml', message).replace('Dear reader, news.', 'x'.repeat(70).concat('\r\n').repeat(300));
    await expect(deliverRaw(listener.port, message.verp, big)).rejects.toMatchObject({ responseCode: 552 });
    expect(await reasons()).not.toHaveProperty('big@example.org');
  });

  test('end to end: when the relay accepts a message and then returns a DSN then the address is suppressed and the next send skips it', async () => {
    const { sendId, type, accepted } = await send(['bounces-later@example.org', 'fine@example.org']);
    expect(await f.send(sendId)).toMatchObject({ status: 3, delivered: 2, bounces: 0 });
    // The next hop refused it after the relay accepted: the relay returns its DSN to the envelope sender.
    const message = accepted('bounces-later@example.org');
    expect(message.verp).toMatch(/^bounces\+[0-9a-z]+-[0-9a-f]{20}@bounces\.campaigns\.test$/);
    await deliverRaw(listener.port, message.verp, bounceFixture('postfix-user-unknown.eml', message));
    expect(await f.send(sendId)).toMatchObject({ delivered: 1, bounces: 1 });

    const next = await f.singleSend(alice.user_id, { senderId: sender, groupId: group, to: [{ contactType: type }] });
    relay.messages.splice(0);
    const { worker, close } = testWorker(h, relay.url);
    await worker.runOnce().finally(close);
    expect(relay.messages.map((m) => m.to[0])).toEqual(['fine@example.org']);
    expect(await f.send(next)).toMatchObject({ triggered: 1, delivered: 1 });
  });
});
