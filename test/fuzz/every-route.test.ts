import fs from 'node:fs';
import path from 'node:path';
import type { Router } from 'express';
import request from 'supertest';
import { createApiRouter } from '../../src/api';
import { createDashboard } from '../../src/web';
import { schedulePreviewRouter } from '../../src/web/schedule-preview';
import { createTrackingRouter } from '../../src/web/tracking';
import { createUnsubscribeRouter } from '../../src/web/unsubscribe';
import { verifySenderRouter } from '../../src/web/verify-sender';
import { createWebViewRouter } from '../../src/web/web-view';
import { createArchiveRouter } from '../../src/web/archive';
import { addAutomation, audienceOf, berlin } from '../support/fixtures';
import { useHarness } from '../support/harness';
import { signIn, WebClient } from '../support/web';

/**
 * A seeded fuzz over every route of the API's and the dashboard's route tables (and the public
 * pages' routers): random methods, parameters, values and body encodings, some of them lying.
 * Whatever comes in, nothing answers 5xx and every JSON answer is the reference's envelope.
 * FUZZ_SEED=<n> replays another run; a failure names the seed and each request.
 */
const SEED = Number(process.env.FUZZ_SEED ?? 20261123);
const ROUNDS = { api: 2, web: 2, public: 3 };
/** A few seconds on a quiet machine; the margin is for a machine shared with other test runs. */
const VOLUME_TIMEOUT_MS = 180_000;

/** mulberry32: small, fast and the same sequence on every machine for a seed. */
function random(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n: number) => Math.floor(next() * n);
  const pick = <T>(list: readonly T[]): T => list[int(list.length)];
  const chance = (p: number) => next() < p;
  const shuffle = <T>(list: T[]): T[] => {
    for (let i = list.length - 1; i > 0; i -= 1) {
      const j = int(i + 1);
      [list[i], list[j]] = [list[j], list[i]];
    }
    return list;
  };
  return { int, pick, chance, shuffle };
}

type Route = readonly [method: string, path: string];

function routesOf(router: Router): Route[] {
  const layers = router.stack as { route?: { path: string; methods: Record<string, boolean> } }[];
  return layers.flatMap((layer) => (layer.route ? Object.keys(layer.route.methods).map((m): Route => [m.toUpperCase(), layer.route!.path]) : []));
}

/** The parameter names the code reads (rules, req.query/req.body) and the forms send, so values land where they are read. */
function fieldNames(): string[] {
  const names = new Set<string>(['strIds', 'page', 'per_page', 'search', '_csrf', 'utr', 'id']);
  const read = (dir: string, patterns: RegExp[]) => {
    for (const file of fs.readdirSync(dir, { recursive: true }) as string[]) {
      if (!/\.(ts|njk)$/.test(file)) continue;
      const text = fs.readFileSync(path.join(dir, file), 'utf8');
      for (const pattern of patterns) for (const m of text.matchAll(pattern)) names.add(m[1]);
    }
  };
  const root = path.join(__dirname, '..', '..');
  read(path.join(root, 'src'), [/field\('([\w[\]]+)'/g, /req\.(?:query|body)\??\.(\w+)/g, /\bbody\.(\w+)/g]);
  read(path.join(root, 'views'), [/name="([\w[\]]+)"/g]);
  return [...names].sort();
}

interface Pools {
  ids: number[];
  utrs: string[];
  names: string[];
}

function valueMaker(r: ReturnType<typeof random>, pools: Pools) {
  const scalars: (() => unknown)[] = [
    () => String(r.pick(pools.ids)),
    () => r.pick(pools.ids),
    () => r.pick(pools.utrs),
    () => r.pick(pools.utrs).toUpperCase(),
    () => String(r.int(5)),
    () => r.pick(['0', '-1', '1.5', '99999999999999999999', '2147483648', '1e3', 'NaN', 'Infinity']),
    () => r.pick(['', ' ', 'abc', 'Zoë Müller', '李', '<script>alert(1)</script>', "' OR 1=1 --", '%', '_', '\\', '((first_name))']),
    () => r.pick(['a@example.com', 'A@EXAMPLE.COM', 'not-an-email', 'a@b', 'x@example.com, y@example.com', ` a@example.com ,${'b'.repeat(70)}@example.com`]),
    () => r.pick(['contacts_1', `contacts_${r.pick(pools.ids)}`, `segments_${r.pick(pools.ids)}`, 'segments_x', 'contacts_']),
    () => r.pick(['2026-11-23', '0000-00-00', '2026-13-45', '12:30', '25:99:00', '2026-11-23T10:00', '2026-11-23 10:00:00']),
    () => r.pick(['is', 'contains', 'is between', 'greater than', 'is empty', 'and', 'or', 'welcome', 'custom', 'instantly', 'days', 'text', 'number', 'datetime-local']),
    () => r.pick(['true', 'false', 'on', '1', true, false, null]),
    () => `ctl${r.pick(['\u0000', '\u0001', '\u0007', '\u001b', '\u001f', '\u000b'])}x`,
    () => `tab\tcr\rlf\n`,
    () => 'x'.repeat(r.pick([255, 256, 1000, 5000])),
    () => r.pick(pools.names),
  ];
  const value = (depth = 0): unknown => {
    if (depth < 2 && r.chance(0.12)) return Array.from({ length: r.int(4) }, () => value(depth + 1));
    if (depth < 2 && r.chance(0.06)) return Object.fromEntries(Array.from({ length: r.int(3) + 1 }, () => [r.pick(pools.names), value(depth + 1)]));
    return r.pick(scalars)();
  };
  return value;
}

/** `a[b][0]=v` pairs of a value, as a form would send it. */
function flatten(prefix: string, value: unknown, out: [string, string][] = []): [string, string][] {
  if (Array.isArray(value)) value.forEach((v, i) => flatten(`${prefix}[${i}]`, v, out));
  else if (value !== null && typeof value === 'object') for (const [k, v] of Object.entries(value)) flatten(`${prefix}[${k}]`, v, out);
  else out.push([prefix, value === null || value === undefined ? '' : String(value)]);
  return out;
}

const formOf = (pairs: [string, string][]) => pairs.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join('&');

/** `{ status: 'success', message }`, the three odd successes with a string under `errors`, or `{ status: 'failed', errors }`. */
function isEnvelope(body: unknown): boolean {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return false;
  const b = body as Record<string, unknown>;
  if (b.status === 'success') return 'message' in b || (typeof b.errors === 'string' && Object.keys(b).length === 2);
  if (b.status !== 'failed' || Object.keys(b).length !== 2) return false;
  if (typeof b.errors === 'string') return b.errors.length > 0;
  return (
    b.errors !== null &&
    typeof b.errors === 'object' &&
    Object.values(b.errors as object).every((messages) => Array.isArray(messages) && messages.length > 0 && messages.every((m) => typeof m === 'string'))
  );
}

describe(`fuzz over every route (seed ${SEED})`, () => {
  const h = useHarness();
  const [alice, bob] = h.accounts(2);
  let web: WebClient;
  const pools: Pools = { ids: [1, 2], utrs: ['00000000-0000-4000-8000-000000000000', 'not-a-utr'], names: [] };

  beforeAll(async () => {
    web = await signIn(h, bob);
    for (const account of [alice, bob]) {
      const a = await audienceOf(h, account, await berlin(h));
      pools.ids.push(a.senderId, a.groupId, a.contactTypeId, a.segmentId);
      pools.utrs.push(await addAutomation(h, account, { unsubscribe_group_id: a.groupId }));
    }
    pools.names = fieldNames();
  });

  /** Each route's `:param` filled with an id, a utr or something else. */
  const fill = (r: ReturnType<typeof random>, value: () => unknown, route: string) =>
    route.replace(/:(\w+)/g, () => {
      // JSON for a structure: one whose keys include `toString` (a field name read from the sources) has no String().
      const text = (x: unknown) => (x !== null && typeof x === 'object' ? JSON.stringify(x) : String(x));
      const v = r.chance(0.7) ? String(r.chance(0.5) ? r.pick(pools.ids) : r.pick(pools.utrs)) : text(value());
      return r.chance(0.1) ? r.pick(['%zz', '%E0%A4%A', '..', '%00']) : encodeURIComponent(v);
    });

  const queryOf = (r: ReturnType<typeof random>, value: () => unknown) => {
    const pairs = Array.from({ length: r.int(4) }, () => flatten(r.pick(pools.names), value())).flat();
    return pairs.length ? `?${formOf(pairs)}` : '';
  };

  /** What the latest withBody sent, for the failure message. */
  let sent = '';
  const ENCODINGS = ['json', 'form', 'form', 'multipart', 'lie', 'junk'];
  /** The dashboard's forms are urlencoded: most fuzzed posts are too, so they reach the routes. */
  const FORM_ENCODINGS = ['form', 'form', 'form', 'form', 'json', 'multipart', 'lie', 'junk'];

  /** A random body in a random encoding: JSON, a form, multipart, a lying Content-Encoding or bytes of nothing. */
  const withBody = (r: ReturnType<typeof random>, value: () => unknown, test: request.Test, extra: [string, string][] = [], kinds = ENCODINGS) => {
    const fields: [string, unknown][] = Array.from({ length: r.int(7) }, () => [r.pick(pools.names), value()]);
    const pairs = [...extra, ...fields.flatMap(([k, v]) => flatten(k, v))];
    const raw = (headers: Record<string, string>, body: string) => test.set(headers).serialize((b: unknown) => b as string).send(body);
    const kind = r.pick(kinds);
    sent = `${kind} ${formOf(pairs).slice(0, 300)}`;
    switch (kind) {
      case 'json':
        return test.send(Object.fromEntries([...extra, ...fields]));
      case 'form':
        return raw({ 'Content-Type': 'application/x-www-form-urlencoded' }, formOf(pairs));
      case 'multipart':
        return pairs.reduce((t, [k, v]) => t.field(k, v), test);
      case 'lie':
        return raw({ 'Content-Type': r.pick(['application/json', 'application/x-www-form-urlencoded']), 'Content-Encoding': r.pick(['gzip', 'deflate', 'br', 'compress']) }, formOf(pairs));
      default:
        return raw({ 'Content-Type': r.pick(['application/json', 'multipart/form-data; boundary=x', 'text/plain', 'application/x-www-form-urlencoded']) }, r.pick(['{', '--x\r\nbroken', '\u0000\u0001', 'a=%zz&b[=1', '[1,2']));
    }
  };

  const wrongMethod = (r: ReturnType<typeof random>, method: string) => (r.chance(0.05) ? r.pick(['GET', 'POST', 'DELETE', 'PUT', 'PATCH', 'OPTIONS', 'HEAD']) : method);

  const send = (agent: request.Agent | ReturnType<typeof request>, method: string, url: string): request.Test => {
    switch (method) {
      case 'GET': return agent.get(url);
      case 'POST': return agent.post(url);
      case 'DELETE': return agent.delete(url);
      case 'PUT': return agent.put(url);
      case 'PATCH': return agent.patch(url);
      case 'HEAD': return agent.head(url);
      default: return agent.options(url);
    }
  };

  const problemsOf = (label: string, res: request.Response, api: boolean): string[] => {
    const problems: string[] = [];
    if (res.status >= 500) problems.push(`${label} → ${res.status}`);
    if (res.status >= 500 && sent) problems.push(`  body: ${sent}`);
    // HEAD, 204 and 304 answers have no body to check.
    const bodyless = label.startsWith('HEAD ') || res.status === 204 || res.status === 304;
    const json = /json/.test(String(res.headers['content-type'] ?? ''));
    // The OpenAPI document is the one JSON answer that is not in the envelope (it is checked against itself).
    const document = label.includes('/api/v1/openapi.json') && res.status === 200;
    if (json && !bodyless && !document && !isEnvelope(res.body)) problems.push(`${label} → ${res.status} not the envelope: ${String(res.text).slice(0, 200)}`);
    if (api && res.status >= 400 && !json) problems.push(`${label} → ${res.status} not JSON`);
    return problems;
  };

  test('when the API gets random requests on every route then no answer is a 5xx and every answer is what the OpenAPI document says', async () => {
    const r = random(SEED);
    const value = valueMaker(r, pools);
    const table = createApiRouter(h.runtime.config, h.runtime.services, h.runtime.logger).table.list();
    const routes = Array.from({ length: ROUNDS.api }, () => r.shuffle([...table])).flat();
    const problems: string[] = [];
    for (const [routeMethod, route] of routes) {
      sent = '';
      const method = wrongMethod(r, routeMethod);
      const url = `/api/v1${route}${queryOf(r, value)}`;
      let test = send(request(h.runtime.app), method, url);
      if (r.chance(0.95)) test = test.set(r.chance(0.97) ? alice.headers : { PublicKey: alice.public_key, SecretKey: 'wrong' });
      if (method === 'POST') test = withBody(r, value, test);
      const res = await test;
      problems.push(...problemsOf(`${method} ${url}`, res, method !== 'HEAD' && method !== 'OPTIONS'));
      try {
        h.openApi.check(res);
      } catch (mismatch) {
        problems.push(`${(mismatch as Error).message}\n  body sent: ${sent}`);
      }
    }
    expect(problems).toEqual([]);
    expect(routes.length).toBe(table.length * ROUNDS.api);
  }, VOLUME_TIMEOUT_MS);

  test('when the dashboard gets random requests on every route then no answer is a 5xx', async () => {
    const r = random(SEED + 1);
    const value = valueMaker(r, pools);
    const table = createDashboard(h.runtime.config, h.runtime.services, h.runtime.logger).routes;
    const routes = Array.from({ length: ROUNDS.web }, () => r.shuffle([...table])).flat();
    const problems: string[] = [];
    for (const [routeMethod, route] of routes) {
      sent = '';
      const method = wrongMethod(r, routeMethod);
      const url = `${fill(r, value, route)}${queryOf(r, value)}`;
      let test = send(web.agent, method, url);
      if (r.chance(0.2)) test = test.set({ 'HX-Request': 'true', 'HX-Target': `div#${r.pick(pools.names)}` });
      if (method === 'POST') {
        // The token as the forms send it, or as htmx sends it (a header), or none.
        const how = r.pick(['field', 'field', 'field', 'header', 'header', 'header', 'header', 'header', 'header', 'none']);
        if (how === 'header') test = test.set('X-CSRF-Token', web.csrf);
        test = withBody(r, value, test, how === 'field' ? [['_csrf', web.csrf]] : [], FORM_ENCODINGS);
      }
      const res = await test;
      problems.push(...problemsOf(`${method} ${url}`, res, false));
      // A fuzzed sign-out (or password change) ends the session: sign in again to keep going.
      if (res.status === 303 && String(res.headers.location ?? '').startsWith('/login')) web = await signIn(h, bob);
    }
    expect(problems).toEqual([]);
    expect(routes.length).toBe(table.length * ROUNDS.web);
  }, VOLUME_TIMEOUT_MS);

  test('when the public pages get random requests then no answer is a 5xx', async () => {
    const r = random(SEED + 2);
    const value = valueMaker(r, pools);
    const { services, logger } = h.runtime;
    const table = [
      ...routesOf(verifySenderRouter(services, logger)),
      ...routesOf(createTrackingRouter(services, logger)),
      ...routesOf(createUnsubscribeRouter(services, logger)),
      ...routesOf(schedulePreviewRouter(services, logger)),
      ...routesOf(createWebViewRouter(services, logger)),
      ...routesOf(createArchiveRouter(services, logger)),
    ];
    const problems: string[] = [];
    for (const [routeMethod, route] of Array.from({ length: ROUNDS.public }, () => r.shuffle([...table])).flat()) {
      sent = '';
      const method = wrongMethod(r, routeMethod);
      const url = `${fill(r, value, route)}${queryOf(r, value)}`;
      let test = send(request(h.runtime.app), method, url);
      if (method === 'POST') test = withBody(r, value, test, r.chance(0.5) ? [['form', 'preferences']] : [['List-Unsubscribe', 'One-Click']]);
      problems.push(...problemsOf(`${method} ${url}`, await test, false));
    }
    expect(problems).toEqual([]);
    expect(table.length).toBeGreaterThanOrEqual(4);
  }, VOLUME_TIMEOUT_MS);
});
