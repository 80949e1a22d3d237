import request from 'supertest';
import { generate } from 'otplib';
import { hashPassword } from '../../src/lib/crypto';
import { emailKey } from '../../src/lib/email-key';
import { nowValue } from '../../src/db/dialect';
import { TestAccount, useHarness } from '../support/harness';
import { metaCsrf, PASSWORD, setCookie, signIn, WebClient } from '../support/web';

/** A code of the app `steps` periods from now: each sign-in of a test takes a step of its own (a code is accepted once). */
const codeAt = (secret: string, steps = 0) => generate({ secret, epoch: Math.floor(Date.now() / 1000) + steps * 30 });

describe('two-step sign-in (TOTP)', () => {
  const h = useHarness({ LOGIN_RATE_LIMIT: '4' });
  let alice: TestAccount;
  let web: WebClient;
  let secret = '';
  let recovery: string[] = [];

  /** Email and password on the sign-in page; answers the agent and the response. */
  async function password(email: string, pass = PASSWORD) {
    const agent = request.agent(h.runtime.app);
    const page = await agent.get('/login').expect(200);
    const res = await agent.post('/login').type('form').send({ _csrf: metaCsrf(page.text), email, password: pass });
    return { agent, res, csrf: metaCsrf(page.text) };
  }

  const codeStep = (s: { agent: ReturnType<typeof request.agent>; csrf: string }, code: string) => s.agent.post('/login/code').type('form').send({ _csrf: s.csrf, code });

  beforeAll(async () => {
    alice = await h.account();
    web = await signIn(h, alice);
  });

  test('when a person turns it on then the QR code and key are shown, a right code turns it on and ten recovery codes are shown once, stored hashed', async () => {
    await web.post('/two-factor/begin').expect(303);
    const page = await web.get('/two-factor').expect(200);
    expect(page.text).toContain('<svg');
    expect(page.text).not.toMatch(/<script(?! src)/);
    secret = /<code class="secret-key">([A-Z2-7]+)<\/code>/.exec(page.text)![1];
    const wrong = await web.post('/two-factor/confirm', { code: '000000' }).expect(422);
    expect(wrong.text).toContain('The code is not right. Enter the six digits your app shows now.');
    const shown = await web.post('/two-factor/confirm', { code: await codeAt(secret) }).expect(200);
    recovery = [...shown.text.matchAll(/<li><code>([a-z0-9]{5}-[a-z0-9]{5})<\/code><\/li>/g)].map((m) => m[1]);
    expect(recovery).toHaveLength(10);
    expect(new Set(recovery).size).toBe(10);

    const owner = await h.runtime.db('team_users').where({ user_id: alice.user_id, role: 'owner' }).first();
    expect(owner.totp_enabled_at).not.toBeNull();
    expect(String(owner.totp_secret_sealed)).not.toContain(secret);
    const stored = await h.runtime.db('team_user_recovery_codes').where({ team_user_id: owner.id }).pluck('code_hash');
    expect(stored).toHaveLength(10);
    for (const code of recovery) expect(stored.join(' ')).not.toContain(code.replace('-', ''));
    expect((await web.get('/two-factor').expect(200)).text).toContain('You have 10 unused recovery codes left.');
    const entry = await h.runtime.db('audit_log').where({ user_id: alice.user_id, action: 'user.two_factor_enabled' }).first();
    expect(entry).toMatchObject({ actor_type: 'user', actor_id: owner.id });
  });

  test('when a person turns it on then their sessions opened before end, and the browser that turned it on stays signed in', async () => {
    const bob = await h.account();
    const before = await signIn(h, bob);
    const elsewhere = await signIn(h, bob);
    await before.get('/contacts').expect(200);
    await elsewhere.post('/two-factor/begin').expect(303);
    const key = /<code class="secret-key">([A-Z2-7]+)<\/code>/.exec((await elsewhere.get('/two-factor')).text)![1];
    const shown = await elsewhere.post('/two-factor/confirm', { code: await codeAt(key) }).expect(200);
    expect(shown.text).toContain('your other browsers were signed out');

    await before.get('/contacts').expect(303).expect('Location', '/login?next=%2Fcontacts');
    await elsewhere.get('/contacts').expect(200);
    const member = await h.runtime.db('team_users').where({ user_id: bob.user_id, role: 'owner' }).first();
    expect(Number((await h.runtime.db('sessions').where({ team_user_id: member.id }).count({ n: '*' }).first())?.n)).toBe(1);
  });

  test('when the password is right then no session opens until the code: a wrong code is refused, a right one signs in, and the same code again is refused', async () => {
    const s = await password(alice.email);
    expect(s.res.status).toBe(303);
    expect(s.res.headers.location).toBe('/login/code');
    expect(setCookie(s.res, 'cc_session')).toBeUndefined();
    await s.agent.get('/contacts').expect(303).expect('Location', '/login?next=%2Fcontacts');

    const wrong = await codeStep(s, '123456').expect(401);
    expect(wrong.text).toContain('The code is not right, or it was used already.');
    const code = await codeAt(secret, 1);
    const right = await codeStep(s, code).expect(303);
    expect(setCookie(right, 'cc_session')).toBeDefined();
    await s.agent.get('/contacts').expect(200);

    const again = await password(alice.email);
    await codeStep(again, code).expect(401);
  });

  test('when a recovery code is used then it signs in once, and is refused the second time', async () => {
    const first = await password(alice.email);
    await codeStep(first, recovery[0].toUpperCase()).expect(303);
    const second = await password(alice.email);
    const refused = await codeStep(second, recovery[0]).expect(401);
    expect(refused.text).toContain('The code is not right, or it was used already.');
    const signedIn = await h.runtime.db('audit_log').where({ user_id: alice.user_id, action: 'user.signed_in', summary: 'With a recovery code' }).first();
    expect(signedIn).toBeDefined();
  });

  test('when the code step is reached without a right password then it leads back to the sign-in page', async () => {
    const agent = request.agent(h.runtime.app);
    await agent.get('/login/code').expect(303).expect('Location', '/login');
    const page = await agent.get('/login').expect(200);
    const forged = await agent.post('/login/code').set('Cookie', `cc_2fa=1.${Date.now() + 60_000}.forged; ${setCookie(page, 'cc_signin')}`).type('form').send({ _csrf: metaCsrf(page.text), code: '123456' }).expect(401);
    expect(forged.text).toContain('The sign-in took too long. Enter your email and password again.');
  });

  test('when an account requires it then a person without it is sent to turn it on and can open nothing else until they do', async () => {
    const bob = await h.account();
    const bobWeb = await signIn(h, bob);
    await bobWeb.post('/settings/two-factor', { two_factor_required: '1' }).expect(303);
    const now = nowValue();
    const email = `editor-${bob.user_id}@example.org`;
    await h.runtime.db('team_users').insert({
      user_id: bob.user_id, email, email_key: emailKey(email), name: 'Eddie', role: 'editor', status: 'active',
      password_hash: await hashPassword(PASSWORD), created_at: now, updated_at: now,
    });
    const s = await password(email);
    expect(s.res.status).toBe(303);
    expect(s.res.headers.location).toBe('/two-factor');
    await s.agent.get('/contacts').expect(303).expect('Location', '/two-factor');
    const page = await s.agent.get('/two-factor').expect(200);
    expect(page.text).toContain('This account requires two-step sign-in.');
    // An editor does not see the account-wide switch.
    expect(page.text).not.toContain('Stop requiring it');
    const csrf = metaCsrf(page.text);
    await s.agent.post('/two-factor/begin').type('form').send({ _csrf: csrf }).expect(303);
    const setup = await s.agent.get('/two-factor').expect(200);
    const key = /<code class="secret-key">([A-Z2-7]+)<\/code>/.exec(setup.text)![1];
    await s.agent.post('/two-factor/confirm').type('form').send({ _csrf: csrf, code: await codeAt(key) }).expect(200);
    await s.agent.get('/contacts').expect(200);
  });
});

describe('two-step sign-in: wrong codes count toward the sign-in limit', () => {
  const h = useHarness({ LOGIN_RATE_LIMIT: '2' });

  test('when codes are guessed past the limit then even the right code is refused with the limit\'s message', async () => {
    const carol = await h.account();
    const web = await signIn(h, carol);
    await web.post('/two-factor/begin').expect(303);
    const key = /<code class="secret-key">([A-Z2-7]+)<\/code>/.exec((await web.get('/two-factor')).text)![1];
    await web.post('/two-factor/confirm', { code: await codeAt(key) }).expect(200);

    const agent = request.agent(h.runtime.app);
    const page = await agent.get('/login').expect(200);
    const csrf = metaCsrf(page.text);
    await agent.post('/login').type('form').send({ _csrf: csrf, email: carol.email, password: PASSWORD }).expect(303);
    for (const guess of ['111111', '222222']) await agent.post('/login/code').type('form').send({ _csrf: csrf, code: guess }).expect(401);
    const limited = await agent.post('/login/code').type('form').send({ _csrf: csrf, code: await codeAt(key, 1) }).expect(429);
    expect(limited.text).toContain('Too many sign-in attempts. Wait a few minutes and try again.');
  });
});
