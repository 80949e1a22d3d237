import request from 'supertest';
import type { Harness, TestAccount } from './harness';
import { untilRead } from './wait';

export const PASSWORD = 'correct horse battery staple';

/** A browser-like client of the dashboard: keeps cookies, knows its CSRF token. */
export interface WebClient {
  agent: ReturnType<typeof request.agent>;
  csrf: string;
  get(path: string): request.Test;
  /** A form post carrying the CSRF token as a hidden field, as the pages' forms do. */
  post(path: string, form?: Record<string, string>): request.Test;
  /** The same form post with no token at all. */
  postWithoutToken(path: string, form?: Record<string, string>): request.Test;
}

export function metaCsrf(html: string): string {
  const match = /<meta name="csrf-token" content="([^"]+)">/.exec(html);
  if (!match) throw new Error('no csrf-token meta tag in the page');
  return match[1];
}

/** The cookie pair `name=value` a response sets, or undefined. */
export function setCookie(res: request.Response, name: string): string | undefined {
  const cookies = ([] as string[]).concat(res.headers['set-cookie'] ?? []);
  return cookies.find((c) => c.startsWith(`${name}=`));
}

/** Opens the sign-in page and posts its form: the agent then holds a session cookie. */
export async function signIn(h: Harness, account: TestAccount): Promise<WebClient> {
  const agent = request.agent(h.runtime.app);
  const page = await agent.get('/login').expect(200);
  const res = await agent
    .post('/login')
    .type('form')
    .send({ _csrf: metaCsrf(page.text), email: account.email, password: PASSWORD })
    .expect(303);
  if (!setCookie(res, 'cc_session')) throw new Error('sign-in set no session cookie');
  const home = await agent.get('/').expect(200);
  const csrf = metaCsrf(home.text);
  return {
    agent,
    csrf,
    get: (path) => agent.get(path),
    post: (path, form = {}) => agent.post(path).type('form').send({ _csrf: csrf, ...form }),
    postWithoutToken: (path, form = {}) => agent.post(path).type('form').send(form),
  };
}

/** The same request as htmx would send it for a swap into the element with this id. */
export function asFragment(test: request.Test, targetId: string): request.Test {
  return test.set({ 'HX-Request': 'true', 'HX-Request-Type': 'partial', 'HX-Target': `div#${targetId}` });
}

/** A boosted navigation (htmx swaps the body). */
export function asBoosted(test: request.Test): request.Test {
  return test.set({ 'HX-Request': 'true', 'HX-Request-Type': 'full', 'HX-Boosted': 'true' });
}

export interface TwoAccounts {
  /** The signed-in account. */
  alice: TestAccount;
  /** Another account, whose records alice must never reach. */
  bob: TestAccount;
  /** Alice's dashboard client. */
  web: WebClient;
}

/** Two accounts and alice's signed-in client, filled in beforeAll (the usual start of a web test file). */
export function useTwoAccounts(h: Harness): TwoAccounts {
  const t = {} as TwoAccounts;
  beforeAll(async () => {
    t.alice = await h.account();
    t.bob = await h.account();
    t.web = await signIn(h, t.alice);
  });
  return t;
}

/**
 * Reads an import's progress fragment as its page polls it, until it stops asking for itself
 * (the import finished): answers the last fragment.
 */
export async function importProgressUntilDone(web: WebClient, id: number): Promise<string> {
  const progress = async () => (await asFragment(web.get(`/contacts/import/${id}`), 'import-progress').expect(200)).text;
  return untilRead(progress, (text) => !text.includes('hx-trigger="every 1s"'), 5_000, 'the import to finish');
}
