import request from 'supertest';
import { Harness, TestAccount, useHarness } from '../support/harness';
import { OidcProvider, useOidcProvider } from '../support/oidc';

const CALLBACK = 'http://campaigns.test/login/sso/callback';

type Person = { sub: string; email: string; email_verified?: boolean };

/**
 * The browser's trip: the dashboard's SSO link, the provider (which signs `person` in), and back
 * to the callback with the provider's answer; `alter` changes that answer as an attacker would.
 */
async function signInVia(h: Harness, provider: OidcProvider, person: Person, alter: (callback: URL) => void = () => {}) {
  await provider.nextLogin(person);
  const browser = request.agent(h.runtime.app);
  const start = await browser.get('/login/sso?next=%2Fcontacts').expect(303);
  const authorize = new URL(start.headers.location);
  expect(authorize.origin).toBe(provider.issuer);
  expect(authorize.searchParams.get('code_challenge_method')).toBe('S256');
  expect(authorize.searchParams.get('state')).toBeTruthy();
  expect(authorize.searchParams.get('nonce')).toBeTruthy();
  const atProvider = request.agent(provider.issuer);
  let location = start.headers.location as string;
  for (let hops = 0; hops < 10 && !location.startsWith(CALLBACK); hops += 1) {
    const url = new URL(location, provider.issuer);
    location = (await atProvider.get(url.pathname + url.search)).headers.location;
    expect(location).toBeTruthy();
  }
  const callback = new URL(location);
  alter(callback);
  const back = await browser.get(callback.pathname + callback.search);
  return { browser, back };
}

describe('single sign-on (OpenID Connect against oidc-provider)', () => {
  const provider = useOidcProvider(CALLBACK);
  const h = useHarness({
    OIDC_ISSUER: () => provider.issuer,
    OIDC_CLIENT_ID: 'campaigns-dashboard',
    OIDC_CLIENT_SECRET: 'a-client-secret-for-tests',
    OIDC_ALLOWED_DOMAINS: 'acme.test, example.com',
    OIDC_DEFAULT_ROLE: 'analyst',
  });
  let acme: TestAccount;

  beforeAll(async () => {
    acme = await h.account('owner@acme.test');
  });

  const viaProvider = (person: Person, alter?: (callback: URL) => void) => signInVia(h, provider, person, alter);

  /** The same sign-in without the attack goes through (so the refusal came from the attack alone, and the tampering was used up). */
  async function worksWithoutTheAttack() {
    const { back } = await viaProvider({ sub: 'owner-subject', email: 'owner@acme.test' });
    expect(back.status).toBe(303);
  }

  test('when the owner signs in at the provider then the dashboard opens where they were going, linked to the provider\'s subject', async () => {
    const { browser, back } = await viaProvider({ sub: 'owner-subject', email: 'owner@acme.test' });
    expect(back.status).toBe(303);
    expect(back.headers.location).toBe('/contacts');
    await browser.get('/contacts').expect(200);
    const owner = await h.runtime.db('team_users').where({ user_id: acme.user_id, role: 'owner' }).first();
    expect(owner).toMatchObject({ sso_subject: 'owner-subject', sso_issuer: provider.issuer });
    const entry = await h.runtime.db('audit_log').where({ user_id: acme.user_id, action: 'user.signed_in' }).orderBy('id', 'desc').first();
    expect(entry).toMatchObject({ actor_id: owner.id, summary: 'With single sign-on' });
  });

  test('when a person known by the provider\'s subject comes back under another address then they are that person, and another subject with their address is refused', async () => {
    const owner = await h.runtime.db('team_users').where({ user_id: acme.user_id, role: 'owner' }).first();
    expect(owner.sso_subject).toBe('owner-subject');
    const renamed = await viaProvider({ sub: 'owner-subject', email: 'o.wner@acme.test' });
    expect(renamed.back.status).toBe(303);
    await renamed.browser.get('/contacts').expect(200);
    const entry = await h.runtime.db('audit_log').where({ user_id: acme.user_id, action: 'user.signed_in' }).orderBy('id', 'desc').first();
    expect(entry).toMatchObject({ actor_id: owner.id });
    expect(await h.runtime.db('team_users').where({ email_key: 'o.wner@acme.test' }).first()).toBeUndefined();

    const impostor = await viaProvider({ sub: 'someone-else', email: 'owner@acme.test' });
    expect(impostor.back.status).toBe(401);
    expect(impostor.back.text).toContain('Your address cannot sign in here.');
    await impostor.browser.get('/contacts').expect(303);
    expect(await h.runtime.db('team_users').where({ id: owner.id }).first()).toMatchObject({ sso_subject: 'owner-subject', email_key: 'owner@acme.test' });
  });

  test('when someone new from the account\'s domain signs in then they join it with OIDC_DEFAULT_ROLE', async () => {
    const { back } = await viaProvider({ sub: 'new-person', email: 'ann@acme.test' });
    expect(back.status).toBe(303);
    const ann = await h.runtime.db('team_users').where({ email_key: 'ann@acme.test' }).first();
    expect(ann).toMatchObject({ user_id: acme.user_id, role: 'analyst', status: 'active', password_hash: null });
  });

  test('when the address is of a domain not allowed, or not verified, then no session opens', async () => {
    for (const person of [{ sub: 'outsider', email: 'eve@elsewhere.test' }, { sub: 'unverified', email: 'bob@acme.test', email_verified: false }]) {
      const { browser, back } = await viaProvider(person);
      expect(back.status).toBe(401);
      expect(back.text).toContain('Your address cannot sign in here.');
      await browser.get('/contacts').expect(303);
    }
    expect(await h.runtime.db('team_users').whereIn('email_key', ['eve@elsewhere.test', 'bob@acme.test']).first()).toBeUndefined();
  });

  test('when the state coming back is forged then the code is not used and no session opens', async () => {
    const { browser, back } = await viaProvider({ sub: 'owner-subject', email: 'owner@acme.test' }, (callback) => callback.searchParams.set('state', 'forged-state'));
    expect(back.status).toBe(401);
    expect(back.text).toContain('Single sign-on did not work.');
    await browser.get('/contacts').expect(303);
    await worksWithoutTheAttack();
  });

  test('when the callback comes without the browser\'s sealed state then it is refused', async () => {
    const { back } = await viaProvider({ sub: 'owner-subject', email: 'owner@acme.test' }, () => {});
    expect(back.status).toBe(303);
    const stranger = request.agent(h.runtime.app);
    const replay = await stranger.get('/login/sso/callback?code=abc&state=def').expect(401);
    expect(replay.text).toContain('Single sign-on did not work.');
  });

  test('when the ID token is for another audience then it is refused', async () => {
    await provider.tamper('audience');
    const { browser, back } = await viaProvider({ sub: 'owner-subject', email: 'owner@acme.test' });
    expect(back.status).toBe(401);
    expect(back.text).toContain('Single sign-on did not work.');
    await browser.get('/contacts').expect(303);
    await worksWithoutTheAttack();
  });

  test('when the ID token has expired then it is refused', async () => {
    await provider.tamper('expired');
    const { browser, back } = await viaProvider({ sub: 'owner-subject', email: 'owner@acme.test' });
    expect(back.status).toBe(401);
    await browser.get('/contacts').expect(303);
    await worksWithoutTheAttack();
  });

  test('when the ID token is signed by a key the provider never published then it is refused', async () => {
    await provider.tamper('unpublished-key');
    const { browser, back } = await viaProvider({ sub: 'owner-subject', email: 'owner@acme.test' });
    expect(back.status).toBe(401);
    expect(back.text).toContain('Single sign-on did not work.');
    await browser.get('/contacts').expect(303);
    await worksWithoutTheAttack();
  });

  test('when single sign-on is set up then the sign-in page offers it', async () => {
    const page = await request(h.runtime.app).get('/login').expect(200);
    expect(page.text).toContain('Sign in with single sign-on');
  });
});

describe('single sign-on without OIDC_ALLOWED_DOMAINS', () => {
  const provider = useOidcProvider(CALLBACK);
  const h = useHarness({
    OIDC_ISSUER: () => provider.issuer,
    OIDC_CLIENT_ID: 'campaigns-dashboard',
    OIDC_CLIENT_SECRET: 'a-client-secret-for-tests',
    OIDC_DEFAULT_ROLE: 'editor',
  });
  let shared: TestAccount;

  beforeAll(async () => {
    // An owner at a domain that many people share (a webmail provider, say).
    shared = await h.account('founder@webmail.test');
  });

  test('when a stranger at the domain of an account\'s owner signs in then they do not join that account: domains join only when listed', async () => {
    const { browser, back } = await signInVia(h, provider, { sub: 'stranger', email: 'stranger@webmail.test' });
    expect(back.status).toBe(401);
    expect(back.text).toContain('Your address cannot sign in here.');
    await browser.get('/contacts').expect(303);
    expect(await h.runtime.db('team_users').where({ email_key: 'stranger@webmail.test' }).first()).toBeUndefined();
    expect(await h.runtime.db('team_users').where({ user_id: shared.user_id }).pluck('email_key')).toEqual(['founder@webmail.test']);
  });

  test('when the owner, already in the team by address, signs in then they get in', async () => {
    const { back } = await signInVia(h, provider, { sub: 'founder', email: 'founder@webmail.test' });
    expect(back.status).toBe(303);
  });
});
