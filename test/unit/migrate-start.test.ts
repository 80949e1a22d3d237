import { migrations } from '../../migrations';
import { migrateAndSeed } from '../../src/migrate';
import { useHarness } from '../support/harness';

describe('migrations at start', () => {
  const h = useHarness();

  test('when every migration of this build is recorded then a restart reads the record and takes no migration lock', async () => {
    const { db } = h.runtime;
    const queries: string[] = [];
    const seen = (q: { sql: string }) => queries.push(q.sql);
    db.on('query', seen);
    try {
      await migrateAndSeed(db);
    } finally {
      db.removeListener('query', seen);
    }
    expect(queries.filter((sql) => sql.includes('knex_migrations')).map((sql) => sql.replace(/[`"]/g, ''))).toEqual(['select name from knex_migrations']);
    expect(queries.some((sql) => sql.includes('knex_migrations_lock'))).toBe(false);
  });

  test('when the database records a migration this build does not know then start refuses it instead of running on', async () => {
    const { db } = h.runtime;
    await db('knex_migrations').insert({ name: '29991231_0000_from-a-newer-build', batch: 99, migration_time: new Date() });
    try {
      await expect(migrateAndSeed(db)).rejects.toThrow(/29991231_0000_from-a-newer-build/);
    } finally {
      await db('knex_migrations').where({ name: '29991231_0000_from-a-newer-build' }).delete();
    }
  });

  test('when a migration is not recorded then start runs it through knex, and stops when it fails', async () => {
    const { db } = h.runtime;
    // One that creates a table on both databases (some migrations change nothing on SQLite).
    const [lastName] = migrations.find(([name]) => name.endsWith('_worker-heartbeats'))!;
    const row = await db('knex_migrations').where({ name: lastName }).first();
    await db('knex_migrations').where({ name: lastName }).delete();
    const queries: string[] = [];
    const seen = (q: { sql: string }) => queries.push(q.sql);
    db.on('query', seen);
    try {
      // What the migration creates (a table or a column) exists already, so running it again
      // fails, and so does the start, with the database's reason. (better-sqlite3's error comes from outside jest's
      // realm: toThrow() misses it, so its message is matched as a property.)
      await expect(migrateAndSeed(db)).rejects.toMatchObject({ message: expect.stringMatching(/already exists|duplicate column/) });
    } finally {
      db.removeListener('query', seen);
      await db('knex_migrations').where({ name: lastName }).delete();
      await db('knex_migrations').insert(row);
    }
    expect(queries.some((sql) => sql.includes('knex_migrations_lock'))).toBe(true);
  });
});
