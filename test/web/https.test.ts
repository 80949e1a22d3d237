import request from 'supertest';
import { useHarness } from '../support/harness';
import { metaCsrf, PASSWORD, setCookie } from '../support/web';

describe('dashboard behind https', () => {
  const h = useHarness({ BASE_URL: 'https://campaigns.test' });

  test('when BASE_URL is https then cookies are Secure, __Host- prefixed, and the CSP upgrades requests', async () => {
    const account = await h.account();
    const agent = request.agent(h.runtime.app);
    const page = await agent.get('/login').expect(200);
    expect(setCookie(page, '__Host-cc_signin')).toMatch(/; Path=\/; HttpOnly; Secure; SameSite=Strict$/);
    expect(page.headers['content-security-policy']).toMatch(/;upgrade-insecure-requests$/);

    // supertest speaks http, so the Secure cookie is sent back by hand.
    const signInCookie = (setCookie(page, '__Host-cc_signin') ?? '').split(';')[0];
    const res = await request(h.runtime.app)
      .post('/login')
      .set('Cookie', signInCookie)
      .type('form')
      .send({ _csrf: metaCsrf(page.text), email: account.email, password: PASSWORD })
      .expect(303);
    expect(setCookie(res, '__Host-cc_session')).toMatch(/; Path=\/; Expires=.+; HttpOnly; Secure; SameSite=Lax$/);
  });

  test('when BASE_URL is https then the public pages ask browsers to upgrade requests and to remember https', async () => {
    const res = await request(h.runtime.app).get('/unsubscribe/not-a-token').expect(404);
    expect(res.headers['content-security-policy']).toMatch(/;upgrade-insecure-requests$/);
    expect(res.headers['strict-transport-security']).toMatch(/^max-age=\d+/);
    expect(res.headers['cross-origin-opener-policy']).toBe('same-origin');
  });
});

describe('public pages on a plain-http BASE_URL', () => {
  const h = useHarness({ BASE_URL: 'http://host.example' });

  test('when BASE_URL is plain http then no page asks browsers to upgrade requests to https', async () => {
    for (const path of ['/unsubscribe/not-a-token', '/verify-sender/not-a-token', '/login', '/api/v1/contacts-type']) {
      const res = await request(h.runtime.app).get(path);
      expect({ path, csp: res.headers['content-security-policy'] ?? '' }).toEqual({ path, csp: expect.not.stringContaining('upgrade-insecure-requests') });
      expect({ path, hsts: res.headers['strict-transport-security'] }).toEqual({ path, hsts: undefined });
    }
  });
});
