import request from 'supertest';
import { sha256 } from '../../src/lib/crypto';
import { emailKey } from '../../src/lib/email-key';
import { MESSAGE_KIND } from '../../src/lib/constants';
import { addCustomField, sendingFixtures, testWorker } from '../support/fixtures';
import { useHarness } from '../support/harness';
import { useSmtpSink } from '../support/smtp';

/** The confirmation link of a mail's text part. */
function confirmLink(text: string | undefined): string {
  const match = /http:\/\/campaigns\.test(\/subscribe\/confirm\/[\w-]+)/.exec(text ?? '');
  if (!match) throw new Error(`no confirmation link in: ${text}`);
  return match[1];
}

/** The public signup form and its double opt-in link, as a visitor and a mail reader use them. */
describe('signup forms: /subscribe/<id> and the confirmation link', () => {
  const sink = useSmtpSink({ emptyBeforeEach: true });
  const h = useHarness({ TRUST_PROXY: 'loopback', SIGNUP_RATE_LIMIT: '4', SMTP_URL: () => sink.url });
  const f = sendingFixtures(h);

  const [alice, bob] = h.accounts(2);
  let readers: number;
  let news: number;
  let offers: number;
  let formId: string;
  let client = 0;
  beforeAll(async () => {
    const ctx = { userId: alice.user_id };
    const { services } = h.runtime;
    readers = await services.contactTypes.add(ctx, { name: 'Readers' });
    news = await f.group(alice.user_id, 'News', 1);
    offers = await f.group(alice.user_id, 'Offers', 1);
    await f.group(alice.user_id, 'Internal', 0);
    await addCustomField(h, alice, 'age', 'number');
    const id = await services.signupForms.add(ctx, {
      name: 'Weekly letter',
      contact_type_id: readers,
      fields: ['first_name', 'last_name', 'age'],
      group_ids: [news, offers],
      thank_you: 'Thanks for joining!',
    });
    formId = (await services.signupForms.get(ctx, id)).public_id;
  });

  /** Each test posts from its own client address (TRUST_PROXY=loopback reads X-Forwarded-For), so the per-client limit is its own. */
  const visitor = () => {
    client += 1;
    const ip = `203.0.113.${client}`;
    const agent = request(h.runtime.app);
    return {
      ip,
      get: (path: string) => agent.get(path).set('X-Forwarded-For', ip),
      post: (path: string, form: Record<string, unknown> = {}) => agent.post(path).set('X-Forwarded-For', ip).type('form').send(form),
    };
  };
  const contactOf = (email: string) => h.runtime.db('contacts').where({ user_id: alice.user_id, email_key: emailKey(email) }).whereNull('deleted_at').first();
  const mailTo = (address: string) => sink.messages.filter((m) => m.to.some((to) => emailKey(to) === emailKey(address)));
  const signupsOf = (email: string) => h.runtime.db('signups').where({ email_key: emailKey(email) }).orderBy('id');

  test('when the form is opened then it asks the email, the chosen fields and offers the displayed groups, with a hidden honeypot and no script', async () => {
    const res = await visitor().get(`/subscribe/${formId}`).expect(200);
    expect(res.text).toContain('<h1>Weekly letter</h1>');
    expect(res.text).toContain('name="email"');
    expect(res.text).toContain('name="first_name"');
    expect(res.text).toContain('name="custom_field[age]" type="number"');
    expect(res.text).toContain(`name="groups" value="${news}" checked`);
    expect(res.text).toContain(`name="groups" value="${offers}" checked`);
    expect(res.text).not.toContain('Internal');
    expect(res.text).toMatch(/<div class="hp" aria-hidden="true">[\s\S]*name="website" type="text" tabindex="-1"/);
    expect(res.text).not.toContain('<script');
    expect(res.headers['content-security-policy']).toContain("script-src 'self'");
  });

  test('when a valid form is posted then a confirmation mail with a link arrives, and nothing is created before the link is confirmed', async () => {
    const v = visitor();
    const res = await v.post(`/subscribe/${formId}`, { email: 'Nina@Example.org', first_name: 'Nina', last_name: 'Berg', 'custom_field[age]': '31', groups: String(news), website: '' }).expect(200);
    expect(res.text).toContain('Check your inbox');
    expect(res.text).toContain('Nina@Example.org');
    const [mail] = mailTo('Nina@Example.org');
    expect(mail.parsed.subject).toBe('Confirm your subscription: Weekly letter');
    const link = confirmLink(mail.parsed.text);
    expect(mail.parsed.html).toContain(`http://campaigns.test${link}"`);
    // The ledger keeps the mail without its link; the signup keeps only the token's hash.
    const ledger = await h.runtime.db('send_messages').where({ email_key: emailKey('nina@example.org'), kind: MESSAGE_KIND.system });
    expect(ledger).toHaveLength(1);
    expect(JSON.stringify(ledger)).not.toContain(link.split('/').pop());
    const [signup] = await signupsOf('nina@example.org');
    expect(signup.token_hash).toBe(sha256(link.split('/').pop()!));
    expect(signup).toMatchObject({ requested_ip: v.ip, confirmed_at: null, contact_id: null });

    const page = await v.get(link).expect(200);
    expect(page.text).toContain('Confirm your subscription');
    expect(page.text).toContain('<button type="submit">Confirm subscription</button>');
    expect(await contactOf('nina@example.org')).toBeUndefined();
    await request(h.runtime.app).head(link).expect(200);
    expect(await contactOf('nina@example.org')).toBeUndefined();
  });

  test('when the form names a verified sender then the confirmation mail comes from its name and address; an unverified or another account’s sender is refused', async () => {
    const ctx = { userId: alice.user_id };
    const { services } = h.runtime;
    await visitor().post(`/subscribe/${formId}`, { email: 'pia@example.org', website: '' }).expect(200);
    const [plain] = mailTo('pia@example.org');
    // Without a sender: the service's own address, as before.
    expect(plain.parsed.from?.value[0].address).toMatch(/^no-reply@/);

    const sender = await f.sender(alice.user_id, { from_name: 'Acme News', from_email: 'news@acme.test' });
    const id = await services.signupForms.add(ctx, { name: 'Acme letter', contact_type_id: readers, fields: [], group_ids: [], thank_you: '', sender_id: sender });
    const publicId = (await services.signupForms.get(ctx, id)).public_id;
    await visitor().post(`/subscribe/${publicId}`, { email: 'omar@example.org', website: '' }).expect(200);
    const [mail] = mailTo('omar@example.org');
    expect(mail.parsed.from?.value).toEqual([{ name: 'Acme News', address: 'news@acme.test' }]);

    const unverified = await f.sender(alice.user_id, { is_verified: 0, from_email: 'new@acme.test' });
    const theirs = await f.sender(bob.user_id, { from_email: 'bob@bob.test' });
    for (const sender_id of [unverified, theirs]) {
      await expect(services.signupForms.add(ctx, { name: 'Bad', contact_type_id: readers, fields: [], group_ids: [], thank_you: '', sender_id })).rejects.toMatchObject({
        fields: { sender_id: ['Choose one of your verified senders.'] },
      });
    }
  });

  test('when the link is confirmed then the contact exists with its fields, the unchosen group lists the address, consent is recorded and confirming again changes nothing', async () => {
    const v = visitor();
    await f.globalUnsubscribe(alice.user_id, 'omar@example.org');
    await v.post(`/subscribe/${formId}`, { email: 'omar@example.org', first_name: 'Omar', 'custom_field[age]': '40', groups: String(news), website: '' }).expect(200);
    const link = confirmLink(mailTo('omar@example.org')[0].parsed.text);

    const confirmer = visitor();
    const done = await confirmer.post(link).expect(200);
    expect(done.text).toContain('Subscription confirmed');
    expect(done.text).toContain('Thanks for joining!');
    const contact = await contactOf('omar@example.org');
    expect(contact).toMatchObject({ contact_type_id: readers, first_name: 'Omar', email: 'omar@example.org', country: null });
    const details = await h.api(alice).get(`/contacts/details?contact_id=${contact.id}`).expect(200);
    expect(details.body.message.contact.custom_field.age.field_value).toBe('40');
    // Chose News, left Offers unticked: on Offers' unsubscribe list only; a confirmed opt-in lifts the global unsubscribe.
    const groups = await h.runtime.db('unsubscribe_group_recipients').where({ email_key: 'omar@example.org' }).pluck('unsubscribe_groups_id');
    expect(groups.map(Number)).toEqual([offers]);
    expect(await h.runtime.db('global_unsubscribes').where({ email_key: 'omar@example.org' }).first()).toBeUndefined();
    const consents = await h.runtime.services.signups.consents({ userId: alice.user_id }, 'Omar@example.org');
    expect(consents).toEqual([
      expect.objectContaining({ form_name: 'Weekly letter', requested_ip: v.ip, confirmed_ip: confirmer.ip, groups: ['News'] }),
    ]);
    expect(consents[0].confirmed_at).toMatch(/^\d{4}-\d{2}-\d{2}T/);

    const again = await confirmer.post(link).expect(200);
    expect(again.text).toContain('already confirmed; nothing changed');
    expect(await h.runtime.db('contacts').where({ email_key: 'omar@example.org' })).toHaveLength(1);
    expect(await h.runtime.services.signups.consents({ userId: alice.user_id }, 'omar@example.org')).toHaveLength(1);
  });

  test('when a confirmed address asks for its data then the export lists the consent, and erasing it deletes the consent and its link stops working', async () => {
    const v = visitor();
    await v.post(`/subscribe/${formId}`, { email: 'ruth@example.org', groups: String(offers), website: '' }).expect(200);
    const link = confirmLink(mailTo('ruth@example.org')[0].parsed.text);
    await v.post(link).expect(200);
    const exported = (await h.api(alice).get('/contacts/privacy-export?email=ruth@example.org').expect(200)).body.message.privacy;
    expect(exported.signups).toEqual([
      expect.objectContaining({ form_name: 'Weekly letter', group_ids: [offers], requested_ip: v.ip, confirmed_ip: v.ip }),
    ]);
    const erased = await h.api(alice).post('/contacts/erase').send({ email: 'ruth@example.org' }).expect(200);
    expect(erased.body.erased).toMatchObject({ contacts: 1, signups: 1 });
    expect(await signupsOf('ruth@example.org')).toEqual([]);
    await v.get(link).expect(404);
    const after = (await h.api(alice).get('/contacts/privacy-export?email=ruth@example.org').expect(200)).body.message.privacy;
    expect(after.signups).toEqual([]);
  });

  test('when a contact of the account signs up again then its fields are updated, not duplicated', async () => {
    const v = visitor();
    const id = await f.contact(alice.user_id, readers, 'pia@example.org', { first_name: 'Old', country: 75 });
    await v.post(`/subscribe/${formId}`, { email: 'PIA@example.org', first_name: 'Pia', groups: [String(news), String(offers)], website: '' }).expect(200);
    await v.post(confirmLink(mailTo('PIA@example.org')[0].parsed.text)).expect(200);
    const rows = await h.runtime.db('contacts').where({ email_key: 'pia@example.org' }).whereNull('deleted_at');
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ id, first_name: 'Pia', country: 75 });
  });

  test('when the honeypot is filled then the visitor sees the same answer, and nothing is stored or sent', async () => {
    const res = await visitor().post(`/subscribe/${formId}`, { email: 'robot@example.org', first_name: 'Bot', website: 'http://spam.example' }).expect(200);
    expect(res.text).toContain('Check your inbox');
    expect(await signupsOf('robot@example.org')).toEqual([]);
    expect(await h.runtime.db('send_messages').where({ email_key: 'robot@example.org' })).toEqual([]);
    expect(sink.messages).toEqual([]);
  });

  test('when the email is invalid then the form comes back (422) with a plain message, the typed values and ticks kept', async () => {
    const res = await visitor().post(`/subscribe/${formId}`, { email: 'not-an-address', first_name: 'Quinn <b>', 'custom_field[age]': 'old', groups: String(offers), website: '' }).expect(422);
    expect(res.text).toContain('Enter a valid email address, like name@example.com.');
    expect(res.text).toContain('Enter a number.');
    expect(res.text).toContain('value="not-an-address"');
    expect(res.text).toContain('value="Quinn &lt;b&gt;"');
    expect(res.text).toContain(`name="groups" value="${offers}" checked`);
    expect(res.text).not.toContain(`name="groups" value="${news}" checked`);
    expect(res.text).not.toContain('custom_field[age] must');

    const empty = await visitor().post(`/subscribe/${formId}`, { website: '' }).expect(422);
    expect(empty.text).toContain('Enter your email address.');
    expect(sink.messages).toEqual([]);
  });

  test('when a bounced (suppressed) address signs up then it is refused with a plain message and nothing is sent', async () => {
    await h.api(alice).post('/suppressions/save').type('form').send({ email_address: 'gone@example.org' }).expect(200);
    const res = await visitor().post(`/subscribe/${formId}`, { email: 'gone@example.org', website: '' }).expect(422);
    expect(res.text).toContain('We cannot send email to this address. Please use another one.');
    expect(sink.messages).toEqual([]);
  });

  test('when one client posts more than SIGNUP_RATE_LIMIT forms in an hour then it gets a 429 page, and other clients do not', async () => {
    const v = visitor();
    for (let i = 0; i < 4; i += 1) await v.post(`/subscribe/${formId}`, { email: `burst${i}@example.org`, website: '' }).expect(200);
    const limited = await v.post(`/subscribe/${formId}`, { email: 'burst4@example.org', website: '' }).expect(429);
    expect(limited.text).toContain('Too many sign-ups came from your connection');
    expect(limited.headers['retry-after']).toBeDefined();
    expect(await signupsOf('burst4@example.org')).toEqual([]);
    await visitor().post(`/subscribe/${formId}`, { email: 'burst4@example.org', website: '' }).expect(200);
  });

  test('when one address is signed up over and over then it gets at most 3 confirmation mails a day', async () => {
    for (let i = 0; i < 3; i += 1) await visitor().post(`/subscribe/${formId}`, { email: 'victim@example.org', website: '' }).expect(200);
    const capped = await visitor().post(`/subscribe/${formId}`, { email: 'Victim@example.org', website: '' }).expect(429);
    expect(capped.text).toContain('already sent several confirmation emails');
    expect(mailTo('victim@example.org')).toHaveLength(3);
  });

  test('when 20 sign-ups of one address arrive at once then exactly 3 confirmation mails go out and the rest are told so', async () => {
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) => visitor().post(`/subscribe/${formId}`, { email: i % 2 ? 'Crowd@example.org' : 'crowd@example.org', website: '' })),
    );
    expect(answers.map((a) => a.status).sort()).toEqual([...Array(3).fill(200), ...Array(17).fill(429)]);
    expect(mailTo('crowd@example.org')).toHaveLength(3);
    expect(await signupsOf('crowd@example.org')).toHaveLength(3);
  });

  test('when a link is forged, unknown or expired then a plain page answers and nothing is created', async () => {
    const v = visitor();
    const forged = await v.get('/subscribe/confirm/not-a-real-token').expect(404);
    expect(forged.text).toContain('This link is not valid');
    await v.post('/subscribe/confirm/not-a-real-token').expect(404);

    await v.post(`/subscribe/${formId}`, { email: 'late@example.org', website: '' }).expect(200);
    const link = confirmLink(mailTo('late@example.org')[0].parsed.text);
    await h.runtime.db('signups').where({ email_key: 'late@example.org' }).update({ expires_at: new Date(Date.now() - 1000).toISOString() });
    const expired = await v.get(link).expect(410);
    expect(expired.text).toContain('This link has expired');
    const posted = await v.post(link).expect(410);
    expect(posted.text).toContain('This link has expired');
    expect(await contactOf('late@example.org')).toBeUndefined();
  });

  test('when the form id is unknown, malformed or of a deleted form then the page is a 404', async () => {
    const v = visitor();
    await v.get('/subscribe/0123456789abcdef').expect(404);
    await v.get('/subscribe/%ZZ').expect(400);
    await v.post('/subscribe/0123456789abcdef', { email: 'x@example.org', website: '' }).expect(404);
    const ctx = { userId: bob.user_id };
    const type = await h.runtime.services.contactTypes.add(ctx, { name: 'Bob readers' });
    const id = await h.runtime.services.signupForms.add(ctx, { name: 'Bob letter', contact_type_id: type, fields: [], group_ids: [], thank_you: '' });
    const { public_id: bobForm } = await h.runtime.services.signupForms.get(ctx, id);
    await v.get(`/subscribe/${bobForm}`).expect(200);
    await h.runtime.services.signupForms.remove(ctx, id);
    await v.get(`/subscribe/${bobForm}`).expect(404);
  });

  test('when a welcome automation targets the contact type then a confirmed signup gets the welcome mail from the worker', async () => {
    const sender = await f.sender(alice.user_id);
    const automation = await f.automation(alice.user_id, { type: 'welcome', contactType: readers, groupId: news });
    await f.schedule(alice.user_id, automation, { senderId: sender, subject: 'Welcome ((first_name))', waitingPeriod: 1, waitingType: 'instantly' });
    const { utr } = await h.runtime.db('automations').where({ id: automation }).first('utr');
    await h.api(alice).get(`/automations/set-live?utr=${utr}`).expect(200);

    const v = visitor();
    await v.post(`/subscribe/${formId}`, { email: 'wendy@example.org', first_name: 'Wendy', groups: String(news), website: '' }).expect(200);
    await v.post(confirmLink(mailTo('wendy@example.org')[0].parsed.text)).expect(200);
    const { worker, close } = testWorker(h, sink.url);
    await worker.runOnce().finally(close);
    expect(mailTo('wendy@example.org').map((m) => m.parsed.subject)).toEqual(['Confirm your subscription: Weekly letter', 'Welcome Wendy']);
  });
});
