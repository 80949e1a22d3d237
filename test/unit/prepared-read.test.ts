import { preparedRead } from '../../src/db/prepared';
import { useHarness } from '../support/harness';

describe('reads compiled once and kept prepared (src/db/prepared)', () => {
  const h = useHarness();

  const typesWithOwner = (userId: number) =>
    h.runtime.db('contact_types')
      .join('accounts', 'accounts.id', 'contact_types.user_id')
      .where('contact_types.user_id', userId)
      .select('contact_types.*', 'accounts.*')
      .orderBy('contact_types.id');

  test('when a prepared read runs with different arguments then it answers what the knex query answers, a column named twice included', async () => {
    const alice = await h.account();
    const bob = await h.account();
    await h.runtime.services.contactTypes.add({ userId: alice.user_id }, { name: 'Buyers' });
    await h.runtime.services.contactTypes.add({ userId: alice.user_id }, { name: 'Leads' });
    const read = preparedRead(h.runtime.db, typesWithOwner);
    for (const id of [alice.user_id, bob.user_id, alice.user_id, 999999]) {
      const expected = await typesWithOwner(id);
      const rows = await read(id);
      expect(rows).toEqual(expected);
      expect(rows.map((r) => Object.keys(r))).toEqual(expected.map((r: object) => Object.keys(r)));
    }
  });

  test('when a prepared read runs then knex reports the query with its bindings', async () => {
    const alice = await h.account();
    const read = preparedRead(h.runtime.db, typesWithOwner);
    const seen: { sql: string; bindings: unknown[] }[] = [];
    const listener = (q: { sql: string; bindings: unknown[] }) => seen.push(q);
    h.runtime.db.on('query', listener);
    try {
      await read(alice.user_id);
    } finally {
      h.runtime.db.removeListener('query', listener);
    }
    expect(seen).toHaveLength(1);
    expect(seen[0].sql).toMatch(/contact_types/);
    expect(seen[0].bindings).toEqual([alice.user_id]);
  });

  test('when a transaction is open then a prepared read outside it sees only what was committed', async () => {
    const alice = await h.account();
    const read = preparedRead(h.runtime.db, typesWithOwner);
    let during: unknown[] | undefined;
    let reading: Promise<unknown[]> | undefined;
    await h.runtime.db.transaction(async (trx) => {
      await trx('contact_types').insert({ user_id: alice.user_id, name: 'Pending', created_at: new Date().toISOString(), updated_at: new Date().toISOString() });
      reading = read(alice.user_id).then((rows) => (during = rows));
      await new Promise((resolve) => setTimeout(resolve, 50));
      await trx.rollback();
    }).catch(() => undefined);
    await reading;
    expect(during).toEqual([]);
  });
});
