import { KeyCache } from '../../src/services/accounts/key-cache';
import { useHarness } from '../support/harness';

describe('API keys authenticated from a short-lived in-process cache', () => {
  const h = useHarness();

  function accountsQueries(): { count(): number; stop(): void } {
    let n = 0;
    const listener = (q: { sql: string }) => {
      if (/\bfrom\s+[`"]?accounts[`"]?/i.test(q.sql)) n += 1;
    };
    h.runtime.db.on('query', listener);
    return { count: () => n, stop: () => h.runtime.db.removeListener('query', listener) };
  }

  test('when a key pair was just authenticated then the next requests read no account from the database', async () => {
    const alice = await h.account();
    await h.api(alice).get('/contacts-type').expect(200);
    const queries = accountsQueries();
    try {
      await h.api(alice).get('/contacts-type').expect(200);
      await h.api(alice).get('/contacts-type').expect(200);
      expect(queries.count()).toBe(0);
    } finally {
      queries.stop();
    }
  });

  test('when the secret is wrong then the cached pair still refuses it with 401 Invalid API keys', async () => {
    const bob = await h.account();
    await h.api(bob).get('/contacts-type').expect(200);
    const res = await h.api().get('/contacts-type').set({ PublicKey: bob.public_key, SecretKey: 'sk_wrong' }).expect(401);
    expect(res.body).toEqual({ status: 'failed', errors: 'Invalid API keys' });
  });

  test('when a cached pair\'s secret is rotated in this process then the old secret is refused at once', async () => {
    const carol = await h.account();
    await h.api(carol).get('/contacts-type').expect(200);
    const secret = await h.runtime.services.accounts.rotateSecret({ userId: carol.user_id });
    const res = await h.api(carol).get('/contacts-type').expect(401);
    expect(res.body).toEqual({ status: 'failed', errors: 'Invalid API keys' });
    await h.api().get('/contacts-type').set({ PublicKey: carol.public_key, SecretKey: secret }).expect(200);
  });

  test('when the lifetime has passed then the pair is read again (a change by another process shows)', () => {
    let now = 1000;
    const cache = new KeyCache<{ id: number }>(5000, 10, () => now);
    cache.set('pk_a', { id: 1 }, 'hash');
    now += 4999;
    expect(cache.get('pk_a')).toEqual({ account: { id: 1 }, secretHash: 'hash', expiresAt: 6000 });
    now += 1;
    expect(cache.get('pk_a')).toBeUndefined();
  });

  test('when more pairs are cached than allowed then the oldest is dropped, and a lifetime of 0 caches nothing', () => {
    const cache = new KeyCache<{ id: number }>(5000, 2);
    cache.set('pk_a', { id: 1 }, 'a');
    cache.set('pk_b', { id: 2 }, 'b');
    cache.set('pk_c', { id: 3 }, 'c');
    expect([cache.get('pk_a'), cache.get('pk_b')?.account, cache.get('pk_c')?.account]).toEqual([undefined, { id: 2 }, { id: 3 }]);
    const off = new KeyCache<{ id: number }>(0);
    off.set('pk_a', { id: 1 }, 'a');
    expect(off.get('pk_a')).toBeUndefined();
  });
});
