import { createApiRouter } from '../../src/api';
import type { DescribedRoute } from '../../src/api/routes';
import { AUDIT_ACTIONS, SINGLE_SEND_STATUS } from '../../src/lib/constants';
import { createDashboard } from '../../src/web';
import { addContact, addContactType, audienceOf, Audience, berlin, countryId, singleSendBody } from '../support/fixtures';
import { TestAccount, useHarness } from '../support/harness';
import { databaseSnapshot } from '../support/db-snapshot';
import { useSmtpSink } from '../support/smtp';
import { addRoleKey } from '../support/team';
import { signIn, WebClient } from '../support/web';

type Entry = { id: number; action: string; actor: { type: string; id: number | null; name: string }; record_type: string | null; record_id: string | null; summary: string };

/**
 * The audit log covers every route that changes or exports something with exactly one entry,
 * and a privacy request names the address only by its keyed hash.
 */
describe('audit log: one entry for each change or export, through every route', () => {
  const sink = useSmtpSink();
  const h = useHarness({ SMTP_URL: () => sink.url });

  let owner: TestAccount;
  let editorKey: TestAccount;
  let web: WebClient;
  let audience: Audience;

  beforeAll(async () => {
    owner = await h.account();
    editorKey = await addRoleKey(h, owner, 'editor');
    web = await signIn(h, owner);
    audience = await audienceOf(h, owner, await berlin(h));
  });

  /**
   * Every row of every table but the log itself and the bookkeeping of being signed in or
   * calling (sessions, rate-limit windows, a key's last use), which a read moves too.
   */
  const snapshot = () => databaseSnapshot(h.runtime.db, { skipTables: ['audit_log', 'sessions'], skipTablesLike: ['rate'], skipColumns: ['last_used_at', 'last_seen_at'] });

  const lastId = async (): Promise<number> => Number((await h.runtime.db('audit_log').where({ user_id: owner.user_id }).max({ m: 'id' }).first())?.m ?? 0);
  async function entriesSince(after: number): Promise<Entry[]> {
    const { auditLog } = (await h.api(owner).get('/audit-log?per_page=100').expect(200)).body.message;
    return (auditLog as Entry[]).filter((e) => e.id > after).reverse();
  }
  const actorOf = (e: Entry) => [e.actor.type, e.actor.name];

  test('when an editor erases an address then the erasure is one entry naming the editor and a keyed hash of the address, and earlier entries lose the address', async () => {
    const typeId = await addContactType(h, owner, 'Erasures');
    await addContact(h, owner, { contact_type_id: typeId, email: 'Erin.Gone@example.com', first_name: 'Erin', country: await countryId(h, 'FR') });
    const created = (await entriesSince(0)).filter((e) => e.action === 'contact.created').pop()!;
    expect(created.summary).toBe('Erin.Gone@example.com');

    const before = await lastId();
    await h.api(editorKey).post('/contacts/erase').send({ email: 'erin.gone@EXAMPLE.com' }).expect(200);
    const [erased, ...more] = await entriesSince(before);
    expect(more).toEqual([]);
    expect([erased.action, ...actorOf(erased), erased.record_type]).toEqual(['contact.erased', 'api_key', 'editor key', 'contact']);
    expect(erased.record_id).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(JSON.stringify(erased).toLowerCase()).not.toContain('erin.gone');
    expect(erased.summary).toBe('An address erased: 1 contacts, 0 messages, 0 enrolments, 0 signups');
    // The earlier entry keeps who did what, not the address.
    expect((await entriesSince(0)).find((e) => e.id === created.id)!.summary).toBe('(erased)');

    // "Was this address erased, and by whom?" is answered from the hash alone, however the address is written.
    const ctx = { userId: owner.user_id };
    const asked = await h.runtime.services.privacy.erasures(ctx, 'ERIN.GONE@example.com');
    expect(asked.map((e) => [e.id, e.actor.name])).toEqual([[erased.id, 'editor key']]);
    expect(await h.runtime.services.privacy.erasures(ctx, 'someone.else@example.com')).toEqual([]);
    // Another account's hash of the same address is another hash.
    const other = await h.account();
    expect(await h.runtime.services.privacy.erasures({ userId: other.user_id }, 'erin.gone@example.com')).toEqual([]);
  });

  test('when the dashboard erases an address or downloads everything held about one then each is one entry naming the person', async () => {
    let before = await lastId();
    await web.post('/contacts/privacy/erase', { email: 'page.erase@example.com', confirm: '1' }).expect(303);
    expect((await entriesSince(before)).map((e) => [e.action, e.actor.type])).toEqual([['contact.erased', 'user']]);
    before = await lastId();
    await web.get('/contacts/privacy/export.json?email=page.erase%40example.com').expect(200);
    const [exported, ...more] = await entriesSince(before);
    expect(more).toEqual([]);
    expect([exported.action, exported.actor.type, exported.summary]).toEqual(['contact.privacy_exported', 'user', 'Everything held about an address, as JSON']);
  });

  test('when everything held about an address is exported through the API then it is one entry naming the key, without the address', async () => {
    const before = await lastId();
    await h.api(editorKey).get('/contacts/privacy-export?email=nobody.here%40example.com').expect(200);
    const entries = await entriesSince(before);
    expect(entries.map((e) => [e.action, ...actorOf(e), e.record_type])).toEqual([['contact.privacy_exported', 'api_key', 'editor key', 'contact']]);
    expect(JSON.stringify(entries)).not.toContain('nobody.here');
  });

  test('when a sent send is resent to non-openers and an A/B test is saved then each is one entry on its send', async () => {
    const original = (await h.api(owner).post('/single/send/create').send(singleSendBody(audience, { schedule_type: 1, schedule_date: '2099-01-01', schedule_time: '09:00:00' })).expect(200)).body.message.utr;
    await h.runtime.db('single_sends').where({ utr: original }).update({ status: SINGLE_SEND_STATUS.completed, due_at: null });
    let before = await lastId();
    const resent = (await h.api(editorKey).post('/single/send/resend').send({ utr: original, subject: 'In case you missed it' }).expect(200)).body.message.utr;
    expect((await entriesSince(before)).map((e) => [e.action, e.actor.name, e.record_type, e.record_id])).toEqual([['single_send.resent', 'editor key', 'single_send', resent]]);

    const draft = (await h.api(owner).post('/single/send/create').send(singleSendBody(audience, { schedule_type: 1, schedule_date: '2099-01-01', schedule_time: '09:00:00' })).expect(200)).body.message.utr;
    before = await lastId();
    await h.api(editorKey)
      .post('/single/send/ab/save')
      .send({ utr: draft, variants: [{ subject: 'Plain' }, { subject: 'Curious?' }], test_percent: 50, winner_metric: 'opens', wait_minutes: 60 })
      .expect(200);
    expect((await entriesSince(before)).map((e) => [e.action, e.actor.name, e.record_id])).toEqual([['single_send.ab_test_saved', 'editor key', draft]]);
  });

  /**
   * Every route of both faces, called by the owner with the ids of real records under the names
   * routes read them by: whatever a route does with that request, a route that changed a row
   * left exactly one entry (one that changed nothing at most one, "unchanged"), an export that
   * answered success exactly one, a refused request (4xx) and a read none. Which routes change
   * or export is read from the route tables, as the permission check reads it.
   */
  /** The walk in parts, each its own test of a few routes in the walk's order. */
  const PARTS = 30;
  interface Walk {
    query: string;
    values: Record<string, unknown>;
    fill: (path: string) => string;
    routes: { face: 'api' | 'web'; method: string; path: string; effect: string; public?: boolean }[];
  }
  let walk: Walk | undefined;
  const outcomes: string[] = [];
  const reached: string[] = [];
  const answers = new Map<string, number>();

  const removes = (r: { method: string; path: string }) => r.method === 'DELETE' || /delete|erase|cancel|logout|sign-out|end$/.test(r.path);

  async function prepareWalk(): Promise<Walk> {
    const typeId = await addContactType(h, owner, 'Walked');
    const contactId = await addContact(h, owner, { contact_type_id: typeId, email: 'walked@example.com', first_name: 'Walt', country: await countryId(h, 'FR') });
    const utr = (await h.api(owner).post('/single/send/create').send(singleSendBody(audience, { schedule_type: 1, schedule_date: '2099-01-01', schedule_time: '09:00:00' })).expect(200)).body.message.utr;
    const values: Record<string, unknown> = {
      id: typeId, contact_type_id: typeId, contact_id: contactId, utr, sender_id: audience.senderId, groupId: audience.groupId, group_id: audience.groupId,
      segment_id: audience.segmentId, email: 'walked@example.com', name: 'Walked on', format: 'csv',
    };
    const api = createApiRouter(h.runtime.config, h.runtime.services, h.runtime.logger).table.routes().filter((r: DescribedRoute) => !r.doc.public);
    const dashboard = createDashboard(h.runtime.config, h.runtime.services, h.runtime.logger).described.filter((r) => !r.open);
    return {
      values,
      query: new URLSearchParams(Object.fromEntries(Object.entries(values).map(([k, v]) => [k, String(v)]))).toString(),
      fill: (path: string) => path.replace(/:utr\b/g, utr).replace(/:id\b/g, String(typeId)).replace(/:\w+/g, '1'),
      // Removals last, so the records the other routes name are still there when they are called.
      routes: [
        ...api.map((r) => ({ face: 'api' as const, method: r.method, path: r.path, effect: r.effect })),
        ...dashboard.map((r) => ({ face: 'web' as const, method: r.method, path: r.path, effect: r.effect })),
      ].sort((a, b) => Number(removes(a)) - Number(removes(b))),
    };
  }

  async function check(route: Walk['routes'][number], w: Walk): Promise<void> {
    const { face, method, path, effect } = route;
    const before = await lastId();
    const rows = await snapshot();
    const form = Object.fromEntries(Object.entries(w.values).map(([k, v]) => [k, String(v)]));
    const client = h.api(owner);
    const { status, headers, text } =
      face === 'api'
        ? method === 'GET' ? await client.get(`${path}?${w.query}`) : method === 'DELETE' ? await client.delete(`${path}?${w.query}`) : await client.post(`${path}?${w.query}`).send(w.values)
        : method === 'GET' ? await web.get(`${w.fill(path)}?${w.query}`) : await web.post(`${w.fill(path)}?${w.query}`, form);
    const changed = (await snapshot()) !== rows;
    const actions = (await h.runtime.db('audit_log').where({ user_id: owner.user_id }).where('id', '>', before).select('action')).map((r) => String(r.action));
    const expected = effect === 'reads' || status >= 400 ? [0] : effect === 'exports' || changed ? [1] : [0, 1];
    if (status < 400 && effect !== 'reads') reached.push(`${face} ${method} ${path}`);
    answers.set(`${face} ${method} ${path}`, status);
    if (status >= 500 || (changed && effect === 'reads') || !expected.includes(actions.length) || actions.some((a) => !(AUDIT_ACTIONS as readonly string[]).includes(a))) {
      outcomes.push(`${face} ${method} ${path} (${effect}) answered ${status}, ${changed ? 'changed rows' : 'changed nothing'} and left ${JSON.stringify(actions)}`);
    }
    // The original pair's new secret (the owner rotated it): the walk goes on with it.
    const rotated = /id="new-secret-key">([^<]+)</.exec(text ?? '');
    if (rotated) owner = { ...owner, secret_key: rotated[1], headers: { PublicKey: owner.public_key, SecretKey: rotated[1] } };
    // A route that ends the session (signing out) is checked like any other; the walk goes on signed in again.
    if (face === 'web' && status === 303 && String(headers.location).startsWith('/login')) web = await signIn(h, owner);
  }

  /**
   * Every route of both faces, called by the owner with the ids of real records under the names
   * routes read them by: whatever a route does with that request, a route that changed a row
   * left exactly one entry (one that changed nothing at most one, "unchanged"), an export that
   * answered success exactly one, a refused request (4xx) and a read none. Which routes change
   * or export is read from the route tables, as the permission check reads it.
   */
  describe('every route', () => {
    beforeAll(async () => {
      walk = await prepareWalk();
    });

    test.each(Array.from({ length: PARTS }, (_, i) => i))('when every route of both faces is called (part %i) then each change or export that succeeds leaves exactly one entry and every read none', async (part) => {
      const w = walk!;
      const size = Math.ceil(w.routes.length / PARTS);
      const mine = w.routes.slice(part * size, (part + 1) * size);
      const start = outcomes.length;
      for (const route of mine) await check(route, w);
      expect(outcomes.slice(start)).toEqual([]);
    });
  });

  test('when the walk is over then it reached real changes and exports of both faces, not only refusals', () => {
    if (process.env.AUDIT_WALK_REPORT) console.log(reached.join('\n'));
    // One generic request per route: most are refused for a field they miss; these are the floor of what it reaches.
    const floor = ['api POST /contacts/erase', 'api GET /contacts/privacy-export', 'api GET /contacts/export', 'api GET /single/send/pause', 'web POST /single-sends/:utr/pause', 'web GET /contacts/privacy/export.json'];
    expect(floor.map((r) => [r, answers.get(r)]).filter(([, status]) => Number(status) >= 400)).toEqual([]);
    expect(reached).toEqual(expect.arrayContaining(floor));
    expect(reached.length).toBeGreaterThan(25);
  });
});
