import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { useHarness } from '../support/harness';

/**
 * The API's short way through the app (one route lookup, helmet's headers replayed, no
 * compression without Accept-Encoding, the envelope written as one Buffer) answers exactly
 * what the routers answer. supertest always asks for gzip, so these requests are plain
 * node:http ones, as a client without Accept-Encoding sends them.
 */
describe('API answers taken the short way are the routers\' answers', () => {
  const h = useHarness();
  let server: http.Server;
  let port: number;

  beforeAll(async () => {
    server = http.createServer(h.runtime.app);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  type Raw = { status: number; headers: [string, string][]; body: string };
  function raw(method: string, path: string, headers: Record<string, string>): Promise<Raw> {
    return new Promise((resolve, reject) => {
      const req = http.request({ host: '127.0.0.1', port, method, path, headers, agent: false }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const pairs: [string, string][] = [];
          for (let i = 0; i < res.rawHeaders.length; i += 2) pairs.push([res.rawHeaders[i], res.rawHeaders[i + 1]]);
          resolve({ status: res.statusCode!, headers: pairs, body: Buffer.concat(chunks).toString() });
        });
      });
      req.on('error', reject);
      req.end();
    });
  }
  /** The headers that differ between two answers by design: the date and the request id. */
  const stable = (r: Raw) => r.headers.filter(([name]) => name !== 'Date' && name !== 'X-Request-Id');

  test('when a listed path is asked exactly and with a trailing slash (which the routers answer) then status, headers in order and body are the same', async () => {
    const alice = await h.account();
    await h.api(alice).post('/contacts-type/add').type('form').send({ name: 'Buyers' }).expect(200);
    const exact = await raw('GET', '/api/v1/contacts-type', alice.headers);
    const routed = await raw('GET', '/api/v1/contacts-type/', alice.headers);
    expect(exact.status).toBe(200);
    expect(stable(exact)).toEqual(stable(routed));
    expect(exact.body).toBe(routed.body);
    expect(JSON.parse(exact.body).message.contactTypes.map((t: { name: string }) => t.name)).toEqual(['Buyers']);
  });

  test('when the request has no Accept-Encoding then the JSON answer still varies on it, after Content-Type, Content-Length and a weak ETag', async () => {
    const alice = await h.account();
    const res = await raw('GET', '/api/v1/contacts-type', alice.headers);
    const names = res.headers.map(([name]) => name);
    expect(names.slice(names.indexOf('Content-Type'), names.indexOf('Vary') + 1)).toEqual(['Content-Type', 'Content-Length', 'ETag', 'Vary']);
    expect(Object.fromEntries(res.headers)).toMatchObject({
      'Content-Type': 'application/json; charset=utf-8',
      'Content-Length': String(Buffer.byteLength(res.body)),
      ETag: expect.stringMatching(/^W\/"[0-9a-f]+-[\w+/]+"$/),
      Vary: 'Accept-Encoding',
      'X-Content-Type-Options': 'nosniff',
      'Content-Security-Policy': expect.stringContaining("default-src 'self'"),
    });
  });

  test('when the ETag is sent back then the answer is 304, as Express answers it', async () => {
    const alice = await h.account();
    const first = await raw('GET', '/api/v1/contacts-type', alice.headers);
    const etag = Object.fromEntries(first.headers).ETag;
    const again = await raw('GET', '/api/v1/contacts-type', { ...alice.headers, 'If-None-Match': etag });
    expect(again.status).toBe(304);
    expect(again.body).toBe('');
  });

  test('when the keys are missing, wrong, or the method is not the route\'s then the failures are the reference\'s', async () => {
    const alice = await h.account();
    const missing = await raw('GET', '/api/v1/contacts-type', {});
    expect(missing.status).toBe(401);
    expect(JSON.parse(missing.body)).toEqual({ status: 'failed', errors: { PublicKey: ['The public key field is required.'], SecretKey: ['The secret key field is required.'] } });
    const wrong = await raw('GET', '/api/v1/contacts-type', { PublicKey: alice.public_key, SecretKey: 'sk_wrong' });
    expect(wrong.status).toBe(401);
    expect(JSON.parse(wrong.body)).toEqual({ status: 'failed', errors: 'Invalid API keys' });
    const method = await raw('DELETE', '/api/v1/contacts-type', alice.headers);
    expect(method.status).toBe(405);
    expect(Object.fromEntries(method.headers).Allow).toBe('GET, HEAD');
    const unknown = await raw('GET', '/api/v1/contacts-typo', alice.headers);
    expect(unknown.status).toBe(404);
    expect(JSON.parse(unknown.body)).toEqual({ status: 'failed', errors: 'Not Found' });
  });

  test('when a hot read runs then knex still reports it as a query', async () => {
    const alice = await h.account();
    await h.api(alice).get('/contacts-type').expect(200);
    const seen: string[] = [];
    const listener = (q: { sql: string }) => seen.push(q.sql);
    h.runtime.db.on('query', listener);
    try {
      await raw('GET', '/api/v1/contacts-type', alice.headers);
    } finally {
      h.runtime.db.removeListener('query', listener);
    }
    expect(seen.some((sql) => /from\s+[`"]?contact_types[`"]?/i.test(sql))).toBe(true);
  });
});
