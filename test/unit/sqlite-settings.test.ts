import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../src/config';
import { createDb } from '../../src/db';

describe('SQLite memory settings', () => {
  async function cacheSize(env: Record<string, string>, kind: 'server' | 'worker' = 'server'): Promise<number> {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cache-'));
    const db = createDb(loadConfig({ SQLITE_FILE: path.join(dir, 'db.sqlite3'), ...env }, kind));
    try {
      const rows = await db.raw('pragma cache_size');
      return Number(rows[0].cache_size);
    } finally {
      await db.destroy();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }

  test('when SQLITE_CACHE_MB is unset then the page cache is bounded at 16 MiB, and when set then at that size', async () => {
    expect(await cacheSize({})).toBe(-16 * 1024);
    expect(await cacheSize({ SQLITE_CACHE_MB: '4' })).toBe(-4 * 1024);
  });

  test('when a worker alone (no HTTP) leaves SQLITE_CACHE_MB unset then its page cache is bounded at 4 MiB, and when set then at that size', async () => {
    expect(await cacheSize({}, 'worker')).toBe(-4 * 1024);
    expect(await cacheSize({ SQLITE_CACHE_MB: '16' }, 'worker')).toBe(-16 * 1024);
  });

  test('when SQLITE_CACHE_MB is not a positive integer then the start stops with a one-line message', () => {
    expect(() => loadConfig({ SQLITE_CACHE_MB: '0' })).toThrow('SQLITE_CACHE_MB must be an integer of at least 1, got "0"');
  });
});
