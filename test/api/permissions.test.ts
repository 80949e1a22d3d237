import { createApiRouter } from '../../src/api';
import type { DescribedRoute } from '../../src/api/routes';
import { PERMISSIONS, permissionOf } from '../../src/http/permissions';
import { TEAM_ROLES, TeamRole } from '../../src/lib/constants';
import { createDashboard } from '../../src/web';
import { addContactType } from '../support/fixtures';
import { TestAccount, useHarness } from '../support/harness';
import { databaseSnapshot } from '../support/db-snapshot';
import { useSmtpSink } from '../support/smtp';
import { addMember, addRoleKey, signInMember } from '../support/team';
import { signIn, WebClient } from '../support/web';

const REFUSED = { status: 'failed', errors: 'You do not have permission to do this.' };

/**
 * Every role against every route of both faces, from the one permission declaration: a route
 * the role may not use answers 403 and leaves every row of the database as it was; a route it
 * may use never answers 403.
 */
describe('permissions by role', () => {
  const sink = useSmtpSink();
  const h = useHarness({ SMTP_URL: () => sink.url });

  let owner: TestAccount;
  const keys = {} as Record<TeamRole, TestAccount>;
  const web = {} as Record<TeamRole, WebClient>;
  let typeId: number;

  beforeAll(async () => {
    owner = await h.account();
    typeId = await addContactType(h, owner);
    for (const role of TEAM_ROLES) keys[role] = role === 'owner' ? owner : await addRoleKey(h, owner, role);
    web.owner = await signIn(h, owner);
    for (const role of ['admin', 'editor', 'analyst'] as const) {
      const member = await addMember(h, sink, owner, role);
      web[role] = await signInMember(h, owner, member.email);
    }
  });

  /** Every row of every table, but the key's last use (which a refused request still records). */
  const snapshot = () => databaseSnapshot(h.runtime.db, { skipColumns: ['last_used_at'] });

  /** A path pattern with its parameters filled (the permission is checked before any of them is read). */
  const filled = (path: string) => path.replace(/:utr\b/g, 'UTR1').replace(/:\w+/g, '1');

  /** A body that would be a change if it got through: ids and names every route might read. */
  const body = () => ({ id: typeId, name: 'Changed', email: 'someone@else.example', role: 'admin', strIds: [1, 2, 3], url: 'http://127.0.0.1:9/x', events: ['contact.created'] });

  function callApi(route: DescribedRoute, key: TestAccount) {
    const api = h.api(key);
    const path = `${route.path}?id=${typeId}`;
    if (route.method === 'GET') return api.get(path);
    if (route.method === 'DELETE') return api.delete(path);
    return api.post(path).send(body());
  }

  const apiRoutes = () => createApiRouter(h.runtime.config, h.runtime.services, h.runtime.logger).table.routes().filter((r) => !r.doc.public);

  test('when the declaration is read then every role may read what an editor may, only owners and admins reach the team, keys, webhooks, domains, relays and settings', () => {
    for (const area of ['team', 'apiKeys', 'webhooks', 'domains', 'relays', 'settings'] as const) {
      expect([PERMISSIONS[area].read, PERMISSIONS[area].write]).toEqual([['owner', 'admin'], ['owner', 'admin']]);
    }
    for (const area of ['audience', 'campaigns'] as const) {
      expect(PERMISSIONS[area].read).toEqual(['owner', 'admin', 'editor', 'analyst']);
      expect(PERMISSIONS[area].write).toEqual(['owner', 'admin', 'editor']);
    }
    expect(() => permissionOf('api', 'GET', '/nothing-declared')).toThrow(/belongs to no area/);
  });

  test.each(TEAM_ROLES)('when a %s key calls every API route then each route its role may not call answers 403 and nothing changes', async (role) => {
    const routes = apiRoutes();
    const refused = routes.filter((r) => !r.permission!.roles.includes(role));
    const before = await snapshot();
    for (const route of refused) {
      const res = await callApi(route, keys[role]);
      expect({ route: `${route.method} ${route.path}`, status: res.status, body: res.body }).toEqual({ route: `${route.method} ${route.path}`, status: 403, body: REFUSED });
    }
    expect(await snapshot()).toBe(before);
    if (role === 'owner') expect(refused).toEqual([]);
    if (role === 'analyst') expect(refused.filter((r) => r.method === 'GET').map((r) => r.permission!.area)).toEqual(expect.not.arrayContaining(['audience']));
  });

  test.each(TEAM_ROLES)('when a %s key reads every list it may read then none answers 403', async (role) => {
    const reads = apiRoutes().filter((r) => r.method === 'GET' && r.permission!.ability === 'read' && r.permission!.roles.includes(role));
    expect(reads.length).toBeGreaterThan(0);
    for (const route of reads) {
      const res = await callApi(route, keys[role]);
      expect({ route: `${route.method} ${route.path}`, status: res.status === 403 ? 403 : 'not 403' }).toEqual({ route: `${route.method} ${route.path}`, status: 'not 403' });
    }
  });

  test('when an editor key works on the audience and campaigns then it may, and webhooks, users, API keys and settings are refused', async () => {
    const editor = h.api(keys.editor);
    await editor.post('/contacts-type/add').send({ name: 'Editors list' }).expect(200);
    for (const [method, path] of [['GET', '/webhooks'], ['GET', '/users'], ['GET', '/api-keys'], ['POST', '/users/invite'], ['POST', '/webhooks/save'], ['GET', '/notification-recipients']] as const) {
      const res = method === 'GET' ? await editor.get(path) : await editor.post(path).send({ email: 'x@team.example', role: 'editor', url: 'http://127.0.0.1:9/x', events: ['contact.created'] });
      expect([path, res.status, res.body]).toEqual([path, 403, REFUSED]);
    }
  });

  test('when an analyst key sends a write that would succeed for the owner then it is refused, nothing changes, and the same request by the owner works', async () => {
    const writes: [string, Record<string, unknown>][] = [
      ['/contacts-type/add', { name: 'Analysts list' }],
      ['/unsubscribes-groups/save', { group_name: 'Weekly', description: 'Weekly news', is_display: 1 }],
    ];
    for (const [path, fields] of writes) {
      const before = await snapshot();
      const res = await h.api(keys.analyst).post(path).send(fields);
      expect([path, res.status, res.body]).toEqual([path, 403, REFUSED]);
      expect(await snapshot()).toBe(before);
      await h.api(owner).post(path).send(fields).expect(200);
    }
  });

  const webRoutes = () => createDashboard(h.runtime.config, h.runtime.services, h.runtime.logger);

  test('when every registered route of both faces is walked then each that changes something, by its method or by its own declaration, is refused to an analyst and nothing changes', async () => {
    // What changes is read from the route tables themselves (the method, or `effect` where the
    // route is registered), the same declaration the permission check reads: no list here.
    // Everyone changes their own profile (password, sessions, two-step sign-in): nothing of the account's.
    const api = apiRoutes().filter((r) => r.effect === 'changes' && r.permission!.area !== 'self');
    const dashboard = webRoutes().described.filter((r) => !r.open && r.effect === 'changes' && permissionOf('web', r.method, r.path, r.effect).area !== 'self');
    const changingGets = api.filter((r) => r.method === 'GET').map((r) => r.path);
    // The GETs of the reference that change state are among them (one declaration each, where registered).
    expect(changingGets).toEqual(expect.arrayContaining(['/single/send/pause', '/single/send/resume', '/single/send/cancel', '/automations/pause', '/single/send/duplicate']));
    expect(api.length).toBeGreaterThan(changingGets.length);
    expect(dashboard.length).toBeGreaterThan(0);
    const before = await snapshot();
    for (const route of api) {
      expect(route.permission!.roles).not.toContain('analyst');
      const res = await callApi(route, keys.analyst);
      expect([route.method, route.path, res.status, res.body]).toEqual([route.method, route.path, 403, REFUSED]);
    }
    for (const route of dashboard) {
      const res = route.method === 'GET' ? await web.analyst.get(filled(route.path)) : await web.analyst.post(filled(route.path), { name: 'Changed', email: 'someone@else.example', role: 'admin' });
      expect([route.method, route.path, res.status]).toEqual([route.method, route.path, 403]);
    }
    expect(await snapshot()).toBe(before);
  });

  test.each(TEAM_ROLES)('when a %s signed in to the dashboard opens or posts to every page then each one the role may not use is refused with 403 and nothing changes', async (role) => {
    const dashboard = webRoutes();
    const open = new Set(dashboard.publicRoutes.map(([m, p]) => `${m} ${p}`));
    const routes = dashboard.routes.filter(([m, p]) => !open.has(`${m} ${p}`));
    const refused = routes.filter(([method, path]) => !permissionOf('web', method, path).roles.includes(role));
    const before = await snapshot();
    for (const [method, path] of refused) {
      const res = method === 'GET' ? await web[role].get(filled(path)) : await web[role].post(filled(path), { name: 'Changed', email: 'someone@else.example', role: 'admin' });
      expect([method, path, res.status]).toEqual([method, path, 403]);
      expect(res.text).toContain('You do not have permission to do this.');
    }
    expect(await snapshot()).toBe(before);
    if (role === 'owner') expect(refused).toEqual([]);
    // The original key pair acts as the owner: only the owner may be shown a new secret of it.
    if (role === 'admin') expect(refused).toEqual([['POST', '/api-keys/rotate']]);
    if (role === 'editor') expect(refused.map(([, p]) => p)).toEqual(expect.arrayContaining(['/team', '/api-keys', '/webhook-endpoints', '/settings']));
  });

  test.each(TEAM_ROLES)('when a %s opens every page it may read then none is refused, and the menu links only to those', async (role) => {
    const dashboard = webRoutes();
    const open = new Set(dashboard.publicRoutes.map(([m, p]) => `${m} ${p}`));
    const pages = dashboard.routes.filter(([m, p]) => m === 'GET' && !open.has(`GET ${p}`) && !p.includes(':') && permissionOf('web', m, p).roles.includes(role));
    const local = (href: string) => href.startsWith('/') && !href.startsWith('//') && !/^\/(assets|docs|api|vendor)\b/.test(href);
    const offered: string[] = [];
    for (const [, path] of pages) {
      const res = await web[role].get(path);
      expect([path, res.status === 403 ? 403 : 'not 403']).toEqual([path, 'not 403']);
      // What the page offers is what the role may use: its forms' targets and its links.
      for (const m of res.text.matchAll(/<form\b[^>]*>/g)) {
        const method = /method="post"/i.test(m[0]) ? 'POST' : 'GET';
        const action = /action="([^"]*)"/.exec(m[0])?.[1] ?? path;
        if (!local(action)) continue;
        offered.push(`${method} ${action}`);
        expect([path, method, action, permissionOf('web', method, action.replace(/[?#].*$/, '')).roles.includes(role)]).toEqual([path, method, action, true]);
      }
      for (const m of res.text.matchAll(/<a\b[^>]*href="([^"]*)"/g)) {
        if (!local(m[1])) continue;
        offered.push(`GET ${m[1]}`);
        expect([path, m[1], permissionOf('web', 'GET', m[1].replace(/[?#].*$/, '')).roles.includes(role)]).toEqual([path, m[1], true]);
      }
    }
    // Editors are offered the forms that change the audience; analysts none of them.
    expect(offered.includes('GET /contacts/new')).toBe(role !== 'analyst');
    const home = await web[role].get('/').expect(200);
    const links = [...home.text.matchAll(/<li><a href="([^"]+)"/g)].map((m) => m[1]);
    for (const link of links) expect([link, permissionOf('web', 'GET', link).roles.includes(role)]).toEqual([link, true]);
    expect(links.includes('/team')).toBe(role === 'owner' || role === 'admin');
    expect(links).toContain('/profile');
  });
});
