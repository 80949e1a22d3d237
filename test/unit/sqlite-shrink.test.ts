import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import knex from 'knex';
import { createDb } from '../../src/db';
import { releaseFreePages } from '../../src/db/pruning';

/** How the SQLite file hands freed pages back after old rows were pruned. */
describe('SQLite file shrinking after pruning', () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'shrink-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  /** A file as an older version made it (no auto-vacuum), with `rows` of 4 KB, of which `deleted` are deleted. */
  async function olderFile(rows: number, deleted: number): Promise<string> {
    const file = path.join(dir, 'old.sqlite3');
    const raw = knex({ client: 'better-sqlite3', connection: { filename: file }, useNullAsDefault: true });
    try {
      await raw.raw('pragma journal_mode = WAL');
      await raw.raw('create table t (id integer primary key, body text)');
      for (let i = 0; i < rows; i += 100) await raw('t').insert(Array.from({ length: 100 }, () => ({ body: 'x'.repeat(4000) })));
      await raw('t').where('id', '<=', deleted).delete();
      await raw.raw('pragma wal_checkpoint(truncate)');
    } finally {
      await raw.destroy();
    }
    return file;
  }

  const pragma = async (db: ReturnType<typeof createDb>, name: string) => Number(Object.values((await db.raw(`pragma ${name}`))[0])[0]);

  test('when a file of an older version has a quarter or more free then one VACUUM shrinks it and leaves it in incremental mode', async () => {
    const file = await olderFile(4000, 3000);
    const sizeBefore = fs.statSync(file).size;
    const db = createDb({ databaseUrl: undefined, sqliteFile: file });
    try {
      expect(await pragma(db, 'auto_vacuum')).toBe(0);
      expect(await releaseFreePages(db)).toBeGreaterThan(2900);
      expect(await pragma(db, 'auto_vacuum')).toBe(2);
      expect(await pragma(db, 'freelist_count')).toBe(0);
      expect(fs.statSync(file).size).toBeLessThan(sizeBefore / 2);
      expect(await pragma(db, 'page_count')).toBeGreaterThan(900);
    } finally {
      await db.destroy();
    }
  });

  test('when little of an older file is free then it is left as it is (no VACUUM for a few pages)', async () => {
    const file = await olderFile(4000, 100);
    const db = createDb({ databaseUrl: undefined, sqliteFile: file });
    try {
      expect(await releaseFreePages(db)).toBe(0);
      expect(await pragma(db, 'auto_vacuum')).toBe(0);
      expect(await pragma(db, 'freelist_count')).toBeGreaterThan(90);
    } finally {
      await db.destroy();
    }
  });

  test('when a file this service created loses rows then its free pages go back in steps, with no VACUUM', async () => {
    const db = createDb({ databaseUrl: undefined, sqliteFile: path.join(dir, 'new.sqlite3') });
    try {
      expect(await pragma(db, 'auto_vacuum')).toBe(2);
      await db.schema.createTable('t', (t) => {
        t.increments('id');
        t.text('body');
      });
      for (let i = 0; i < 3000; i += 100) await db('t').insert(Array.from({ length: 100 }, () => ({ body: 'x'.repeat(4000) })));
      const pages = await pragma(db, 'page_count');
      await db('t').where('id', '<=', 2500).delete();
      expect(await releaseFreePages(db)).toBeGreaterThan(2400);
      expect(await pragma(db, 'freelist_count')).toBe(0);
      expect(await pragma(db, 'page_count')).toBeLessThan(pages - 2400);
    } finally {
      await db.destroy();
    }
  });
});
