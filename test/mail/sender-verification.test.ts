import request from 'supertest';
import { up as scrubStoredTokens } from '../../migrations/20261123_0634_verification-mail-tokens';
import { insertId, nowValue } from '../../src/db/dialect';
import { sha256 } from '../../src/lib/crypto';
import { emailKey } from '../../src/lib/email-key';
import { MESSAGE_KIND, MESSAGE_STATE } from '../../src/lib/constants';
import { addSender, berlin, manualClock, Place, senderFields, testWorker, verificationToken } from '../support/fixtures';
import { useHarness } from '../support/harness';
import { useSmtpSink } from '../support/smtp';

/** The send ledger keeps a sender verification mail without the link's token; the link is made as the mail goes out. */
describe('sender verification mail in the send ledger', () => {
  /** Addresses at busy.example answer 451 while this is true. */
  let busy = true;
  const sink = useSmtpSink({
    onRecipient: (address) => (address.endsWith('@busy.example') && busy ? { code: 451, message: '4.3.0 Try again later' } : undefined),
  });
  const h = useHarness({ SMTP_URL: () => sink.url });

  const [alice] = h.accounts(1);
  let place: Place;
  beforeAll(async () => {
    place = await berlin(h);
  });

  const mailTo = (address: string) => sink.messages.filter((m) => m.to.includes(address));
  const ledger = (address: string) => h.runtime.db('send_messages').where({ email_key: emailKey(address) }).orderBy('id').select('*');
  const verify = (token: string) => request(h.runtime.app).get(`/verify-sender/${token}`);
  const isVerified = async (id: number) => Number((await h.runtime.db('senders').where({ id }).first('is_verified')).is_verified);

  /** Runs the worker once, at a time when every retry is due. */
  async function runWorker(): Promise<void> {
    const { worker, close } = testWorker(h, sink.url, { now: manualClock(new Date(Date.now() + 3_600_000)).now });
    try {
      await worker.runOnce();
    } finally {
      await close();
    }
  }

  test('when a verification mail is sent then the ledger keeps neither its token nor its link, and the link works once', async () => {
    const id = await addSender(h, alice, place, { from_email: 'ledger@shop.example' });
    const token = verificationToken(mailTo('ledger@shop.example')[0].parsed.text);
    const rows = await ledger('ledger@shop.example');
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ kind: MESSAGE_KIND.system, state: MESSAGE_STATE.sent });
    expect(JSON.stringify(rows)).not.toContain(token);
    expect(JSON.stringify(rows)).not.toContain('/verify-sender/');
    expect((await h.runtime.db('senders').where({ id }).first('verify_token_hash')).verify_token_hash).toBe(sha256(token));
    await verify(token).expect(200);
    expect(await isVerified(id)).toBe(1);
  });

  test('when the first attempt is refused for now then the worker sends it later with a fresh link that works', async () => {
    busy = true;
    const res = await h.api(alice).post('/sender/save').type('form').send(senderFields(place, { from_email: 'later@busy.example' })).expect(503);
    expect(res.body.errors).toContain('try /sender/resend-mail again');
    const id = Number((await h.runtime.db('senders').where({ user_id: alice.user_id, from_email: 'later@busy.example' }).first('id')).id);
    expect(mailTo('later@busy.example')).toEqual([]);

    busy = false;
    await runWorker();
    const [mail] = mailTo('later@busy.example');
    const token = verificationToken(mail.parsed.text);
    expect(mail.parsed.html).toContain(`/verify-sender/${token}"`);
    expect(JSON.stringify(await ledger('later@busy.example'))).not.toContain(token);
    await verify(token).expect(200);
    expect(await isVerified(id)).toBe(1);
  });

  test('when a newer mail replaced one still waiting for a retry then the older one is never sent', async () => {
    busy = true;
    await h.api(alice).post('/sender/save').type('form').send(senderFields(place, { from_email: 'twice@busy.example' })).expect(503);
    const id = Number((await h.runtime.db('senders').where({ user_id: alice.user_id, from_email: 'twice@busy.example' }).first('id')).id);
    busy = false;
    await h.api(alice).get(`/sender/resend-mail?sender_id=${id}`).expect(200);
    const mails = mailTo('twice@busy.example');
    expect(mails).toHaveLength(1);

    await runWorker();
    expect(mailTo('twice@busy.example')).toHaveLength(1);
    const [older, newer] = await ledger('twice@busy.example');
    expect([older.state, newer.state]).toEqual([MESSAGE_STATE.suppressed, MESSAGE_STATE.sent]);
    await verify(verificationToken(mails[0].parsed.text)).expect(200);
  });

  test('when ledger rows from before kept tokens then the migration removes them, and one still waiting is sent with a fresh link', async () => {
    const sent = await addSender(h, alice, place, { from_email: 'old.sent@shop.example' });
    const waiting = await addSender(h, alice, place, { from_email: 'old.waiting@shop.example' });
    const oldPayload = (token: string) => JSON.stringify({
      from: 'Campaigns <no-reply@campaigns.test>',
      subject: 'Confirm your sender address',
      html: `<p><a href="http://campaigns.test/verify-sender/${token}">Confirm</a></p>`,
      text: `http://campaigns.test/verify-sender/${token}`,
    });
    const now = nowValue();
    const row = (email: string, state: number, token: string) => ({
      user_id: alice.user_id, kind: MESSAGE_KIND.system, email, email_key: email, priority: 0, state,
      available_at: now, payload: oldPayload(token), created_at: now, updated_at: now,
    });
    const sentToken = 'S'.repeat(43);
    const waitingToken = 'W'.repeat(43);
    await insertId(h.runtime.db, 'send_messages', row('old.sent@shop.example', MESSAGE_STATE.sent, sentToken));
    await insertId(h.runtime.db, 'send_messages', row('old.waiting@shop.example', MESSAGE_STATE.queued, waitingToken));
    await h.runtime.db('senders').where({ id: sent }).update({ verify_token_hash: sha256(sentToken), verify_message_id: null });
    await h.runtime.db('senders').where({ id: waiting }).update({ verify_token_hash: sha256(waitingToken), verify_message_id: null });

    await scrubStoredTokens(h.runtime.db);

    const all = JSON.stringify(await h.runtime.db('send_messages').where({ kind: MESSAGE_KIND.system }).select('payload'));
    expect(all).not.toContain(sentToken);
    expect(all).not.toContain(waitingToken);
    sink.messages.splice(0);
    await runWorker();
    const [mail] = mailTo('old.waiting@shop.example');
    await verify(verificationToken(mail.parsed.text)).expect(200);
    expect(await isVerified(waiting)).toBe(1);
    expect(mailTo('old.sent@shop.example')).toEqual([]);
  });
});
