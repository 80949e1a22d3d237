import request from 'supertest';
import { boot, Runtime } from '../../src/boot';
import { createLogger } from '../../src/logger';
import { sha256 } from '../../src/lib/crypto';
import { createRateLimitsService } from '../../src/services/accounts/rate-limits';
import { useHarness } from '../support/harness';

const onPostgres = Boolean(process.env.DATABASE_URL);

describe('API_RATE_LIMIT across web processes', () => {
  const h = useHarness({ API_RATE_LIMIT: '3' });
  let other: Runtime;

  beforeAll(async () => {
    // A second process's runtime over the same database.
    other = await boot(h.runtime.config, createLogger('silent'));
  });
  afterAll(() => other.close());

  test(
    onPostgres
      ? 'when two web processes serve one key pair then the limit counts their requests together (429 on the fourth)'
      : 'when two web processes on SQLite serve one key pair then each counts its own requests',
    async () => {
      const alice = await h.account();
      const keys = { PublicKey: alice.public_key, SecretKey: alice.secret_key };
      const get = (app: Runtime['app']) => request(app).get('/api/v1/contacts-type').set(keys);
      await get(h.runtime.app).expect(200);
      await get(other.app).expect(200);
      await get(h.runtime.app).expect(200);
      const fourth = await get(other.app).expect(onPostgres ? 429 : 200);
      if (onPostgres) {
        expect(fourth.body).toEqual({ status: 'failed', errors: 'Too Many Requests' });
        expect(Number(fourth.headers['retry-after'])).toBeGreaterThan(0);
        // Counted once per request, under the key's hash (a client chooses the key).
        const row = await h.runtime.db('api_rate_windows').where({ key: sha256(`pk:${alice.public_key}`) }).first();
        expect(Number(row.hits)).toBe(4);
      }
    },
  );

  test('when hits are counted in the database then a new window starts over and windows of the past are dropped', async () => {
    const db = h.runtime.db;
    const counts = createRateLimitsService({ db });
    await db('api_rate_windows').insert({ key: sha256('stale'), window_start: 0, hits: 7 });
    await db('api_rate_windows').insert({ key: sha256('again'), window_start: 60_000, hits: 9 });
    const first = await counts.hit('again', 60_000);
    expect(first.hits).toBe(1);
    expect(first.resetAt.getTime() % 60_000).toBe(0);
    expect(first.resetAt.getTime()).toBeGreaterThan(Date.now());
    expect((await counts.hit('again', 60_000)).hits).toBe(2);
    expect(await db('api_rate_windows').where({ key: sha256('stale') }).first()).toBeUndefined();
    await counts.unhit('again');
    expect((await counts.hit('again', 60_000)).hits).toBe(2);
    await counts.reset('again');
    expect(await db('api_rate_windows').where({ key: sha256('again') }).first()).toBeUndefined();
  });
});
