import { addContactType, countryId } from '../support/fixtures';
import { TestAccount, useHarness } from '../support/harness';
import { asFragment, signIn, WebClient } from '../support/web';

/**
 * The Contacts page pages by contact id: Next and Previous links carry the id of the last and
 * the first contact shown, so a page is what follows the one a person saw, whatever changed
 * meanwhile, and a deep page costs what the first does.
 */
describe('dashboard contacts, paged by id', () => {
  const h = useHarness();
  let france = 0;

  beforeAll(async () => {
    france = await countryId(h, 'FR');
  });

  /** An account of `n` contacts p0…p(n-1) (three in four named Gull, the others Tern) and its signed-in client. */
  async function accountOf(n: number): Promise<{ account: TestAccount; web: WebClient; newestFirst: () => Promise<string[]> }> {
    const account = await h.account();
    const type = await addContactType(h, account, 'Birds');
    const now = new Date().toISOString();
    await h.runtime.db('contacts').insert(
      Array.from({ length: n }, (_, i) => ({
        user_id: account.user_id,
        contact_type_id: type,
        email: `p${i}@example.com`,
        email_key: `p${i}@example.com`,
        first_name: i % 4 ? 'Gull' : 'Tern',
        country: france,
        created_at: now,
        updated_at: now,
      })),
    );
    const newestFirst = async (): Promise<string[]> =>
      h.runtime.db('contacts').where({ user_id: account.user_id }).whereNull('deleted_at').orderBy('id', 'desc').pluck('email');
    return { account, web: await signIn(h, account), newestFirst };
  }

  /** What a person reads on the page: the contacts shown in order, "from–to of total", and the pager's links. */
  function read(html: string) {
    const link = (pattern: RegExp) => pattern.exec(html)?.[1]?.replace(/&amp;/g, '&');
    return {
      emails: [...html.matchAll(/<td>(p\d+@example\.com)<\/td>/g)].map((m) => m[1]),
      position: /<span class="muted">([\d,]+–[\d,]+ of [\d,]+)<\/span>/.exec(html)?.[1],
      first: link(/href="([^"]+)">First</),
      prev: link(/href="([^"]+)" rel="prev"/),
      next: link(/href="([^"]+)" rel="next"/),
      last: link(/href="([^"]+)">Last</),
      deleteAction: link(/<form id="contact-list-delete-one" method="post" action="([^"]+)"/),
    };
  }

  const idOf = async (account: TestAccount, email: string) =>
    Number((await h.runtime.db('contacts').where({ user_id: account.user_id, email_key: email }).first('id')).id);

  test('when Next, Next, Previous, Last and First are clicked then each shows its 50 contacts newest first with its position', async () => {
    const { web, newestFirst } = await accountOf(120);
    const all = await newestFirst();

    const one = read((await web.get('/contacts').expect(200)).text);
    expect(one).toMatchObject({ emails: all.slice(0, 50), position: '1–50 of 120', first: undefined, prev: undefined });

    const two = read((await web.get(one.next!).expect(200)).text);
    expect(one.next).toMatch(/^\/contacts\?after=\d+&page=2$/);
    expect(two).toMatchObject({ emails: all.slice(50, 100), position: '51–100 of 120' });

    const three = read((await web.get(two.next!).expect(200)).text);
    expect(three).toMatchObject({ emails: all.slice(100), position: '101–120 of 120', next: undefined, last: undefined });

    const back = read((await web.get(three.prev!).expect(200)).text);
    expect(three.prev).toMatch(/^\/contacts\?before=\d+&page=2$/);
    expect(back).toMatchObject({ emails: all.slice(50, 100), position: '51–100 of 120' });

    const last = read((await web.get(back.last!).expect(200)).text);
    expect(last).toMatchObject({ emails: all.slice(100), position: '101–120 of 120', next: undefined });

    const first = read((await web.get(last.first!).expect(200)).text);
    expect(last.first).toBe('/contacts');
    expect(first).toMatchObject({ emails: all.slice(0, 50), position: '1–50 of 120', prev: undefined });
  });

  test('when contacts are deleted between two clicks then Next shows the contacts after the last one seen, none skipped or repeated', async () => {
    const { account, web, newestFirst } = await accountOf(120);
    const all = await newestFirst();

    const one = read((await web.get('/contacts').expect(200)).text);
    await h.api(account).delete(`/contacts/delete?contact_id=${await idOf(account, all[10])}`).expect(200);
    const two = read((await web.get(one.next!).expect(200)).text);
    expect(two).toMatchObject({ emails: all.slice(50, 100), position: '51–100 of 119' });

    // One on the page being read and the first of the next page go.
    for (const email of [all[60], all[100]]) await h.api(account).delete(`/contacts/delete?contact_id=${await idOf(account, email)}`).expect(200);
    const three = read((await web.get(two.next!).expect(200)).text);
    expect(three).toMatchObject({ emails: all.slice(101), position: '99–117 of 117', next: undefined });
  });

  test('when a contact is deleted from a deep page through htmx then the same page comes back without it, filled from below, and Next goes on from there', async () => {
    const { account, web, newestFirst } = await accountOf(120);
    const all = await newestFirst();
    const two = read((await web.get(read((await web.get('/contacts').expect(200)).text).next!).expect(200)).text);
    expect(two.deleteAction).toMatch(/^\/contacts\/delete\?after=\d+&page=2$/);

    const form = `_csrf=${web.csrf}&ids=${await idOf(account, all[55])}`;
    const res = await asFragment(web.agent.post(two.deleteAction!).type('form').send(form), 'contact-list').expect(200);
    expect(res.text.trimStart()).toMatch(/^<div id="contact-list">/);
    expect(res.text).toContain('Contact deleted.');
    const after = read(res.text);
    const left = all.filter((e) => e !== all[55]);
    expect(after).toMatchObject({ emails: left.slice(50, 100), position: '51–100 of 119' });
    expect(after.next).toMatch(/^\/contacts\?after=\d+&page=3$/);
    expect(read((await web.get(after.next!).expect(200)).text)).toMatchObject({ emails: left.slice(100), position: '101–119 of 119' });
  });

  test('when the list is searched then its pages go by id within the matches, keeping the search, also as htmx fragments', async () => {
    const { web, newestFirst } = await accountOf(120);
    const gulls = (await newestFirst()).filter((e) => Number(/\d+/.exec(e)![0]) % 4 !== 0);
    expect(gulls).toHaveLength(90);

    const one = read((await web.get('/contacts?search=gull').expect(200)).text);
    expect(one).toMatchObject({ emails: gulls.slice(0, 50), position: '1–50 of 90' });
    expect(one.next).toMatch(/^\/contacts\?search=gull&after=\d+&page=2$/);

    const fragment = await asFragment(web.get(one.next!), 'contact-list').expect(200);
    expect(fragment.text.trimStart()).toMatch(/^<div id="contact-list">/);
    const two = read(fragment.text);
    expect(two).toMatchObject({ emails: gulls.slice(50), position: '51–90 of 90', next: undefined });
    expect(two.prev).toMatch(/^\/contacts\?search=gull&before=\d+&page=1$/);
    expect(two.first).toBe('/contacts?search=gull');

    expect(read((await web.get(two.prev!).expect(200)).text)).toMatchObject({ emails: gulls.slice(0, 50), position: '1–50 of 90' });
    expect(read((await web.get(one.last!).expect(200)).text)).toMatchObject({ emails: gulls.slice(50), position: '51–90 of 90' });
  });

  test('when an old ?page=2 address is opened then it still shows the second page, with links that go on by id', async () => {
    const { web, newestFirst } = await accountOf(120);
    const all = await newestFirst();
    const two = read((await web.get('/contacts?page=2').expect(200)).text);
    expect(two).toMatchObject({ emails: all.slice(50, 100), position: '51–100 of 120' });
    expect(two.next).toMatch(/^\/contacts\?after=\d+&page=3$/);
    expect(read((await web.get(two.next!).expect(200)).text)).toMatchObject({ emails: all.slice(100), position: '101–120 of 120' });
    // A page past the end shows the last one rather than an empty list.
    expect(read((await web.get('/contacts?page=9').expect(200)).text)).toMatchObject({ emails: all.slice(100), position: '101–120 of 120' });
  });

  test('when a cursor names no contact id then the first page is shown, never an error', async () => {
    const { web, newestFirst } = await accountOf(120);
    const all = await newestFirst();
    for (const query of ['after=abc', 'after=-5', 'before=-1', 'after=0', 'after=1.5', 'after=1e3', 'after[]=7', 'before=abc&page=7', 'last=yes', 'after=99999999999999999999']) {
      const page = read((await web.get(`/contacts?${query}`).expect(200)).text);
      expect({ query, ...page }).toMatchObject({ query, emails: all.slice(0, 50), position: '1–50 of 120' });
    }
  });
});
