import request from 'supertest';
import { sha256 } from '../../src/lib/crypto';
import { addSender, berlin, Place, PLAIN_TIME, senderFields, verificationToken } from '../support/fixtures';
import { expectDeleteIdRules, NOT_FOUND, failed } from '../support/expectations';
import { TestAccount, TIMESTAMP, useHarness } from '../support/harness';
import { useSmtpSink } from '../support/smtp';

describe('senders', () => {
  // Addresses at refused.example answer 550, to show what a failed verification mail does.
  const sink = useSmtpSink({
    onRecipient: (address) => (address.endsWith('@refused.example') ? { code: 550, message: 'No such mailbox' } : undefined),
  });
  const h = useHarness({ SMTP_URL: () => sink.url });

  const [alice, bob] = h.accounts(2);
  let place: Place;

  beforeAll(async () => {
    place = await berlin(h);
  });

  const web = () => request(h.runtime.app);
  const mailTo = (address: string) => sink.messages.filter((m) => m.to.includes(address));

  /** The token of the n-th (1-based) verification mail to `address`; the API answers after the SMTP server accepted it. */
  function tokenOf(address: string, nth = 1): string {
    const mails = mailTo(address);
    expect(mails.length).toBeGreaterThanOrEqual(nth);
    return verificationToken(mails[nth - 1].parsed.text);
  }

  async function details(account: TestAccount, id: number) {
    return (await h.api(account).get(`/sender/details?sender_id=${id}`).expect(200)).body.message.sender;
  }

  test('when a sender is saved then it is listed unverified and a verification mail arrives', async () => {
    const fields = senderFields(place, { from_email: 'hello@shop.example' });
    const res = await h.api(alice).post('/sender/save').type('form').send(fields).expect(200);
    expect(res.body).toEqual({ status: 'success', message: 'Added Successfully' });

    const list = await h.api(alice).get('/senders').expect(200);
    expect(list.body.status).toBe('success');
    expect(list.body.message.senders[0]).toEqual({
      id: expect.any(Number),
      user_id: alice.user_id,
      from_name: 'News Desk',
      from_email: 'hello@shop.example',
      reply_to_email: 'replies@example.com',
      country_id: place.countryId,
      state_id: place.stateId,
      city_id: place.cityId,
      zip_code: '10115',
      company_address: 'Unter den Linden 1',
      company_address2: 'Floor 2',
      nickname: fields.nickname,
      is_verified: 0,
      utr: expect.stringMatching(/^[0-9a-f]{16}$/),
      send_at: expect.stringMatching(PLAIN_TIME),
      created_at: expect.stringMatching(TIMESTAMP),
      updated_at: expect.stringMatching(TIMESTAMP),
      deleted_at: null,
      domain_status: 'unauthenticated',
    });

    const [mail] = mailTo('hello@shop.example');
    expect(mail.parsed.subject).toBe('Confirm your sender address');
    expect(mail.parsed.from?.value).toEqual([{ name: 'Campaigns', address: 'no-reply@campaigns.test' }]);
    expect(mail.parsed.text).toMatch(/^http:\/\/campaigns\.test\/verify-sender\/[\w-]{43}$/m);
    expect(mail.parsed.html).toContain(`href="http://campaigns.test/verify-sender/${tokenOf('hello@shop.example')}"`);
  });

  test('when the link is followed then the sender is verified, and a second use changes nothing', async () => {
    const id = await addSender(h, alice, place, { from_email: 'verify.me@shop.example' });
    const token = tokenOf('verify.me@shop.example');

    const page = await web().get(`/verify-sender/${token}`).expect(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    expect(page.text).toContain('Sender verified');
    expect(page.text).toContain('verify.me@shop.example');
    const verified = await details(alice, id);
    expect(verified.is_verified).toBe(1);

    const again = await web().get(`/verify-sender/${token}`).expect(404);
    expect(again.text).toContain('invalid or has already been used');
    expect(await details(alice, id)).toEqual(verified);
  });

  test('when the token is stored then only its sha256 is kept, and it is cleared once used', async () => {
    const id = await addSender(h, alice, place, { from_email: 'hash.only@shop.example' });
    const token = tokenOf('hash.only@shop.example');
    const row = await h.runtime.db('senders').where({ id }).first();
    expect(JSON.stringify(row)).not.toContain(token);
    expect(row.verify_token_hash).toBe(sha256(token));
    await web().get(`/verify-sender/${token}`).expect(200);
    expect((await h.runtime.db('senders').where({ id }).first()).verify_token_hash).toBeNull();
  });

  test('when the token is unknown then the page says so with 404 and does not echo the token', async () => {
    const res = await web().get('/verify-sender/%3Cscript%3Ealert(1)%3C%2Fscript%3E').expect(404);
    expect(res.text).toContain('Link invalid or used');
    expect(res.text).not.toContain('<script>');
  });

  test('when a link scanner sends HEAD then the sender stays unverified', async () => {
    const id = await addSender(h, alice, place, { from_email: 'scanned@shop.example' });
    await web().head(`/verify-sender/${tokenOf('scanned@shop.example')}`).expect(200);
    expect((await details(alice, id)).is_verified).toBe(0);
    await web().get(`/verify-sender/${tokenOf('scanned@shop.example')}`).expect(200);
    expect((await details(alice, id)).is_verified).toBe(1);
  });

  test('when required fields are missing then all six are reported together', async () => {
    const res = await h.api(alice).post('/sender/save').field('zip_code', '10115').expect(422);
    expect(res.body).toEqual(failed({
      from_name: ['The from name field is required.'],
      from_email: ['The from email field is required.'],
      reply_to_email: ['The reply to email field is required.'],
      country_id: ['The country id field is required.'],
      company_address: ['The company address field is required.'],
      nickname: ['The nickname field is required.'],
    }));
  });

  test('when values are too long, malformed or outside the geography then 422 says which', async () => {
    const long = await h.api(alice).post('/sender/save').type('form')
      .send(senderFields(place, { company_address: 'x'.repeat(256), company_address2: 'y'.repeat(256), from_email: 'not-an-email' }))
      .expect(422);
    expect(long.body).toEqual(failed({
      from_email: ['The from email must be a valid email address.'],
      company_address: ['The company address may not be greater than 255 characters.'],
      company_address2: ['The company address2 may not be greater than 255 characters.'],
    }));
    const geo = await h.api(alice).post('/sender/save').type('form')
      .send(senderFields(place, { country_id: '999999', state_id: String(place.foreignStateId) }))
      .expect(422);
    expect(geo.body.errors).toEqual({
      country_id: ['The selected country id is invalid.'],
      state_id: ['The selected state id is invalid.'],
      city_id: ['The selected city id is invalid.'],
    });
    const foreign = await h.api(alice).post('/sender/save').type('form')
      .send(senderFields(place, { state_id: String(place.foreignStateId), city_id: '' }))
      .expect(422);
    expect(foreign.body.errors).toEqual({ state_id: ['The selected state id is invalid.'] });
    const exact = await h.api(alice).post('/sender/save').type('form')
      .send(senderFields(place, { company_address: 'x'.repeat(255), state_id: '', city_id: '', zip_code: '', company_address2: '' }))
      .expect(200);
    expect(exact.body.message).toBe('Added Successfully');
    const saved = (await h.api(alice).get('/senders').expect(200)).body.message.senders[0];
    expect(saved).toMatchObject({ state_id: null, city_id: null, zip_code: '', company_address2: '' });
  });

  test('when the list is asked by POST then it answers like GET', async () => {
    const get = await h.api(alice).get('/senders').expect(200);
    const post = await h.api(alice).post('/senders').expect(200);
    expect(post.body).toEqual(get.body);
  });

  test('when updated without a new from_email then it stays verified and no mail is sent', async () => {
    const id = await addSender(h, alice, place, { from_email: 'steady@shop.example' });
    await web().get(`/verify-sender/${tokenOf('steady@shop.example')}`).expect(200);
    const res = await h.api(alice).post('/sender/update').type('form')
      .send({ ...senderFields(place, { from_email: 'STEADY@shop.example', from_name: 'Renamed' }), sender_id: id })
      .expect(200);
    expect(res.body).toEqual({ status: 'success', message: 'Updated Successfully' });
    expect(await details(alice, id)).toMatchObject({ from_name: 'Renamed', from_email: 'STEADY@shop.example', is_verified: 1 });
    expect(mailTo('steady@shop.example')).toHaveLength(1);
    expect(mailTo('STEADY@shop.example')).toHaveLength(0);
  });

  test('when from_email changes then it is unverified again, the new address gets a link and the old link is void', async () => {
    const id = await addSender(h, alice, place, { from_email: 'old@shop.example' });
    const oldToken = tokenOf('old@shop.example');
    await h.api(alice).post('/sender/update').type('form')
      .send({ ...senderFields(place, { from_email: 'new@shop.example' }), sender_id: id })
      .expect(200);
    expect((await details(alice, id)).is_verified).toBe(0);
    await web().get(`/verify-sender/${oldToken}`).expect(404);
    expect((await details(alice, id)).is_verified).toBe(0);
    await web().get(`/verify-sender/${tokenOf('new@shop.example')}`).expect(200);
    expect((await details(alice, id)).is_verified).toBe(1);

    await h.api(alice).post('/sender/update').type('form')
      .send({ ...senderFields(place, { from_email: 'newer@shop.example' }), sender_id: id })
      .expect(200);
    expect((await details(alice, id)).is_verified).toBe(0);
  });

  test('when update misses fields then 422 lists them with sender_id', async () => {
    const res = await h.api(alice).post('/sender/update').type('form').send({ from_name: 'x' }).expect(422);
    expect(Object.keys(res.body.errors).sort()).toEqual(['company_address', 'country_id', 'from_email', 'nickname', 'reply_to_email', 'sender_id']);
    expect(res.body.errors.sender_id).toEqual(['The sender id field is required.']);
  });

  test('when resend-mail is asked then a new link arrives and replaces the previous one', async () => {
    const id = await addSender(h, alice, place, { from_email: 'again@shop.example' });
    const first = tokenOf('again@shop.example');
    const res = await h.api(alice).get(`/sender/resend-mail?sender_id=${id}`).expect(200);
    expect(res.body).toEqual({ status: 'success', message: 'Verification Mail Send' });
    const second = tokenOf('again@shop.example', 2);
    expect(second).not.toBe(first);
    await web().get(`/verify-sender/${first}`).expect(404);
    await web().get(`/verify-sender/${second}`).expect(200);

    const verified = await h.api(alice).get(`/sender/resend-mail?sender_id=${id}`).expect(409);
    expect(verified.body).toEqual({ status: 'failed', errors: 'This sender is already verified; there is no mail to resend.' });
    expect(mailTo('again@shop.example')).toHaveLength(2);
  });

  test('when the mail server refuses the address then the sender is kept and 503 says to resend later', async () => {
    const res = await h.api(alice).post('/sender/save').type('form')
      .send(senderFields(place, { from_email: 'nobody@refused.example' }))
      .expect(503);
    expect(res.body).toEqual({
      status: 'failed',
      errors: 'The sender is saved, but its verification mail could not be sent; try /sender/resend-mail again in a moment.',
    });
    const [sender] = (await h.api(alice).get('/senders').expect(200)).body.message.senders;
    expect(sender).toMatchObject({ from_email: 'nobody@refused.example', is_verified: 0, send_at: null });
  });

  test('when deleted then success comes under errors, the sender is gone and its link is void', async () => {
    const id = await addSender(h, alice, place, { from_email: 'gone@shop.example' });
    const res = await h.api(alice).delete(`/sender/delete?sender_id=${id}`).expect(200);
    expect(res.body).toEqual({ status: 'success', errors: 'Deleted Successfully' });
    await h.api(alice).get(`/sender/details?sender_id=${id}`).expect(404, NOT_FOUND);
    const list = await h.api(alice).get('/senders').expect(200);
    expect(list.body.message.senders.map((s: { id: number }) => s.id)).not.toContain(id);
    await web().get(`/verify-sender/${tokenOf('gone@shop.example')}`).expect(404);
    await h.api(alice).delete(`/sender/delete?sender_id=${id}`).expect(404);
    await h.api(alice).get(`/sender/resend-mail?sender_id=${id}`).expect(404);
  });

  test('when another account addresses a sender then it is not found and unchanged', async () => {
    const id = await addSender(h, alice, place, { from_email: 'private@shop.example' });
    await h.api(bob).get(`/sender/details?sender_id=${id}`).expect(404, NOT_FOUND);
    await h.api(bob).post('/sender/update').type('form').send({ ...senderFields(place), sender_id: id }).expect(404, NOT_FOUND);
    await h.api(bob).get(`/sender/resend-mail?sender_id=${id}`).expect(404, NOT_FOUND);
    await h.api(bob).delete(`/sender/delete?sender_id=${id}`).expect(404, NOT_FOUND);
    expect((await h.api(bob).get('/senders').expect(200)).body.message.senders).toEqual([]);
    expect(await details(alice, id)).toMatchObject({ from_email: 'private@shop.example', deleted_at: null });
    expect(mailTo('private@shop.example')).toHaveLength(1);
  });

  test('when sender_id is missing or not an integer then 422', async () => {
    const missing = await h.api(alice).get('/sender/details').expect(422);
    expect(missing.body).toEqual({ status: 'failed', errors: { sender_id: ['The sender id field is required.'] } });
    const bad = await h.api(alice).get('/sender/resend-mail?sender_id=abc').expect(422);
    expect(bad.body.errors).toEqual({ sender_id: ['The sender id must be an integer.'] });
    await expectDeleteIdRules(h.api(alice), '/sender/delete', 'sender_id');
  });
});
