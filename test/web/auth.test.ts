import { createHash } from 'node:crypto';
import request from 'supertest';
import { SIGN_IN_FAILED, SIGN_IN_LIMITED } from '../../src/web/auth';
import { useHarness } from '../support/harness';
import { metaCsrf, PASSWORD, setCookie, signIn } from '../support/web';

describe('dashboard sign-in', () => {
  // A low limit, so the limiter is reached in a few requests (per email 3, per address 12).
  const h = useHarness({ LOGIN_RATE_LIMIT: '3' });
  const [alice] = h.accounts(1);

  async function signInForm(agent = request.agent(h.runtime.app)) {
    const page = await agent.get('/login').expect(200);
    return { agent, token: metaCsrf(page.text), page };
  }

  test('when a page is asked for without a session then it redirects to sign-in, remembering the page', async () => {
    const res = await request(h.runtime.app).get('/contact-types').expect(303);
    expect(res.headers.location).toBe('/login?next=%2Fcontact-types');
    const home = await request(h.runtime.app).get('/').expect(303);
    expect(home.headers.location).toBe('/login');
  });

  test('when an htmx request has no session then htmx is told to load the sign-in page whole', async () => {
    const res = await request(h.runtime.app).get('/contact-types').set({ 'HX-Request': 'true', 'HX-Request-Type': 'partial' }).expect(401);
    expect(res.headers['hx-redirect']).toBe('/login?next=%2Fcontact-types');
    expect(res.text).toBe('');
  });

  test('when the sign-in page is shown then its token cookie is HttpOnly and SameSite=Strict and the page has a strict CSP', async () => {
    const res = await request(h.runtime.app).get('/login').expect(200);
    expect(setCookie(res, 'cc_signin')).toMatch(/^cc_signin=[\w-]+; Path=\/; HttpOnly; SameSite=Strict$/);
    expect(res.text).toContain('<input type="hidden" name="_csrf" value="');
    expect(res.headers['content-security-policy']).toBe(
      "default-src 'self';script-src 'self';style-src 'self';img-src 'self' data:;font-src 'self';connect-src 'self';" +
        "frame-src 'self';form-action 'self';frame-ancestors 'none';base-uri 'none';object-src 'none'",
    );
  });

  test('when the password is right then a session cookie is set and only its hash is stored', async () => {
    const { agent, token } = await signInForm();
    const res = await agent.post('/login').type('form').send({ _csrf: token, email: alice.email.toUpperCase(), password: PASSWORD, next: '/settings' }).expect(303);
    expect(res.headers.location).toBe('/settings');
    const cookie = setCookie(res, 'cc_session') ?? '';
    expect(cookie).toMatch(/^cc_session=[\w-]{43}; Max-Age=1209600; Path=\/; Expires=.+; HttpOnly; SameSite=Lax$/);
    const value = cookie.split(';')[0].split('=')[1];
    const rows = await h.runtime.db('sessions').where({ account_id: alice.user_id });
    expect(rows.map((r) => r.id)).toContain(createHash('sha256').update(value).digest('hex'));
    expect(rows.map((r) => r.id)).not.toContain(value);
    await agent.get('/settings').expect(200);
  });

  test('when next points to another site then sign-in goes home instead', async () => {
    const { agent, token } = await signInForm();
    const res = await agent.post('/login').type('form').send({ _csrf: token, email: alice.email, password: PASSWORD, next: '//evil.example/x' }).expect(303);
    expect(res.headers.location).toBe('/');
  });

  test('when the password is wrong or the email unknown then both answers are the same sentence', async () => {
    const bob = await h.account();
    const { agent, token } = await signInForm();
    const wrong = await agent.post('/login').type('form').send({ _csrf: token, email: bob.email, password: 'nope' }).expect(401);
    const unknown = await agent.post('/login').type('form').send({ _csrf: token, email: 'nobody@example.com', password: 'nope' }).expect(401);
    const message = (html: string) => /<p class="flash flash-error" role="alert">([^<]*)<\/p>/.exec(html)?.[1];
    expect(message(wrong.text)).toBe(SIGN_IN_FAILED);
    expect(message(unknown.text)).toBe(SIGN_IN_FAILED);
    expect(wrong.text.replace(/value="[^"]*"/g, '')).toBe(unknown.text.replace(/value="[^"]*"/g, ''));
    expect(setCookie(wrong, 'cc_session')).toBeUndefined();
  });

  test('when the sign-in form comes without its token then it is refused with a 403 page', async () => {
    const { agent } = await signInForm();
    const res = await agent.post('/login').type('form').send({ email: alice.email, password: PASSWORD }).expect(403);
    expect(res.text).toContain('This form has expired or did not come from this site.');
    expect(setCookie(res, 'cc_session')).toBeUndefined();
    // A token without its cookie (another browser's) is refused too.
    const { token } = await signInForm();
    await request(h.runtime.app).post('/login').type('form').send({ _csrf: token, email: alice.email, password: PASSWORD }).expect(403);
  });

  test('when an email fails too often from one client then that client is refused, even the right password, with a message that says nothing about the account', async () => {
    const carol = await h.account();
    const { agent, token } = await signInForm();
    const attempt = (email: string, password: string) => agent.post('/login').type('form').send({ _csrf: token, email, password });
    for (let i = 0; i < 3; i += 1) await attempt(carol.email, 'wrong').expect(401);
    const limited = await attempt(carol.email, PASSWORD).expect(429);
    expect(limited.text).toContain(SIGN_IN_LIMITED);
    expect(limited.headers['retry-after']).toBeDefined();

    for (let i = 0; i < 3; i += 1) await attempt('ghost@example.com', 'wrong').expect(401);
    const ghost = await attempt('ghost@example.com', 'wrong').expect(429);
    expect(ghost.text).toContain(SIGN_IN_LIMITED);
    // Another address is not held back by carol's failures.
    await attempt(alice.email, PASSWORD).expect(303);
  });

  test('when the user signs out then the session is gone and its cookie no longer works', async () => {
    const web = await signIn(h, alice);
    const before = await h.runtime.db('sessions').where({ account_id: alice.user_id }).count({ n: '*' }).first();
    const res = await web.post('/logout').expect(303);
    expect(res.headers.location).toBe('/login');
    expect(setCookie(res, 'cc_session')).toMatch(/^cc_session=; Path=\/; Expires=Thu, 01 Jan 1970/);
    const after = await h.runtime.db('sessions').where({ account_id: alice.user_id }).count({ n: '*' }).first();
    expect(Number(after?.n)).toBe(Number(before?.n) - 1);
    await web.get('/').expect(303);
  });

  test('when sign-out comes without the token then it is refused and the session stays', async () => {
    const web = await signIn(h, alice);
    await web.postWithoutToken('/logout').expect(403);
    await web.agent.post('/logout').set('X-CSRF-Token', 'forged').expect(403);
    await web.get('/').expect(200);
  });

  test('when a session has expired then it no longer signs in', async () => {
    const web = await signIn(h, alice);
    await h.runtime.db('sessions').where({ account_id: alice.user_id }).update({ expires_at: new Date(Date.now() - 1000).toISOString() });
    await web.get('/').expect(303);
  });
});

describe('sign-in limits per client', () => {
  // Limit 2: 2 failures per email and client, 8 per client. Each attempt hashes a password, which
  // is slow on purpose: the timeout leaves room for a machine shared with other test runs.
  const PROXIED = { LOGIN_RATE_LIMIT: '2', TRUST_PROXY: 'loopback' };
  const ATTEMPTS_TIMEOUT_MS = 90_000;

  async function signInAttempts(app: Parameters<typeof request.agent>[0], forwardedFor?: string) {
    const agent = request.agent(app);
    const page = await agent.get('/login').expect(200);
    const token = metaCsrf(page.text);
    return (email: string, password: string) => {
      const test = agent.post('/login').type('form');
      if (forwardedFor) test.set('X-Forwarded-For', forwardedFor);
      return test.send({ _csrf: token, email, password });
    };
  }

  describe('behind a trusted proxy', () => {
    const h = useHarness(PROXIED);

    test('when another client fails too often for an email then its owner still signs in from their own client', async () => {
      const dora = await h.account();
      const attacker = await signInAttempts(h.runtime.app, '203.0.113.9');
      for (let i = 0; i < 2; i += 1) await attacker(dora.email, 'guess').expect(401);
      expect((await attacker(dora.email, 'guess').expect(429)).text).toContain(SIGN_IN_LIMITED);
      // The attacker learns nothing from the right password either.
      await attacker(dora.email, PASSWORD).expect(429);

      const owner = await signInAttempts(h.runtime.app, '198.51.100.7');
      const res = await owner(dora.email, PASSWORD).expect(303);
      expect(setCookie(res, 'cc_session')).toBeDefined();
    }, ATTEMPTS_TIMEOUT_MS);

    test('when one client fails for many emails then it is refused altogether, and other clients are not', async () => {
      const erin = await h.account();
      const sprayer = await signInAttempts(h.runtime.app, '203.0.113.10');
      for (let i = 0; i < 8; i += 1) await sprayer(`victim${i}@example.com`, 'guess').expect(401);
      await sprayer(erin.email, PASSWORD).expect(429);
      await (await signInAttempts(h.runtime.app, '198.51.100.8'))(erin.email, PASSWORD).expect(303);
    }, ATTEMPTS_TIMEOUT_MS);
  });

  describe('with no proxy configured', () => {
    const h = useHarness({ LOGIN_RATE_LIMIT: '2' });

    test('when a client changes X-Forwarded-For then it is still the same client, held to its limit', async () => {
      const fay = await h.account();
      for (let i = 0; i < 8; i += 1) await (await signInAttempts(h.runtime.app, `203.0.113.${20 + i}`))(`victim${i}@example.com`, 'guess').expect(401);
      await (await signInAttempts(h.runtime.app, '198.51.100.9'))(fay.email, PASSWORD).expect(429);
    }, ATTEMPTS_TIMEOUT_MS);
  });
});

