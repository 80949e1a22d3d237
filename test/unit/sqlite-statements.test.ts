import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createDb } from '../../src/db';
import { cachedStatement, Connection, STATEMENTS_PER_CONNECTION } from '../../src/db/sqlite-client';

interface SqliteDatabase extends Connection {
  exec(sql: string): void;
  close(): void;
}
// better-sqlite3 ships no types; these tests need only these calls.
const Database = require('better-sqlite3') as new (file: string) => SqliteDatabase;

describe('prepared statements kept per SQLite connection', () => {
  test('when knex runs the same query twice, inside and outside a transaction, then SQLite prepares it once', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stmt-'));
    const db = createDb({ databaseUrl: undefined, sqliteFile: path.join(dir, 'db.sqlite3') });
    try {
      await db.schema.createTable('t', (t) => {
        t.increments('id');
        t.string('name');
      });
      const conn = (await db.client.acquireConnection()) as SqliteDatabase;
      await db.client.releaseConnection(conn);
      const prepare = jest.spyOn(conn, 'prepare');
      await db('t').insert({ name: 'a' });
      await db('t').insert({ name: 'b' });
      expect(await db('t').where({ name: 'a' }).first('id')).toEqual({ id: 1 });
      await db.transaction(async (trx) => {
        expect(await trx('t').where({ name: 'b' }).first('id')).toEqual({ id: 2 });
      });
      const selects = prepare.mock.calls.filter(([sql]) => String(sql).startsWith('select'));
      const inserts = prepare.mock.calls.filter(([sql]) => String(sql).startsWith('insert'));
      expect(selects).toHaveLength(1);
      expect(inserts).toHaveLength(1);
    } finally {
      await db.destroy();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  test('when a statement is busy iterating then the same SQL gets a fresh statement that runs', () => {
    const conn = new Database(':memory:');
    conn.exec('create table t (a); insert into t values (1), (2)');
    const first = cachedStatement(conn, 'select a from t') as unknown as { iterate(): Iterator<unknown> };
    const rows = first.iterate();
    rows.next();
    const second = cachedStatement(conn, 'select a from t');
    expect(second).not.toBe(first);
    expect(second.all()).toEqual([{ a: 1 }, { a: 2 }]);
    rows.return?.();
    expect(cachedStatement(conn, 'select a from t')).toBe(first);
    conn.close();
  });

  test('when more distinct queries run than the cache holds then the least recently used is dropped', () => {
    const conn = new Database(':memory:');
    const kept = cachedStatement(conn, 'select 0');
    for (let i = 1; i <= STATEMENTS_PER_CONNECTION; i += 1) {
      cachedStatement(conn, `select ${i}`);
      if (i === STATEMENTS_PER_CONNECTION / 2) expect(cachedStatement(conn, 'select 0')).toBe(kept);
    }
    const prepare = jest.spyOn(conn, 'prepare');
    expect(cachedStatement(conn, 'select 0')).toBe(kept);
    cachedStatement(conn, `select ${STATEMENTS_PER_CONNECTION}`);
    expect(prepare).not.toHaveBeenCalled();
    cachedStatement(conn, 'select 1');
    expect(prepare).toHaveBeenCalledTimes(1);
    conn.close();
  });
});
