import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import knex, { Knex } from 'knex';
import type { Config } from '../config';
import { CachingBetterSqlite3Client } from './sqlite-client';

export type Db = Knex;

export interface DbOptions {
  databaseUrl: string | undefined;
  sqliteFile: string;
  /** SQLite's page cache in KiB (default 16 MiB). */
  sqliteCacheKib?: number;
  /** PostgreSQL pool size; SQLite always uses one connection. */
  poolMax?: number;
}

/** Builds the Knex instance for PostgreSQL (when a URL is given) or SQLite (WAL mode). */
export function createDb(options: DbOptions | Config): Db {
  if (options.databaseUrl) {
    return knex({
      client: 'pg',
      connection: withDefaultUser(options.databaseUrl),
      pool: { min: 0, max: 'poolMax' in options && options.poolMax ? options.poolMax : 10 },
    });
  }
  fs.mkdirSync(path.dirname(options.sqliteFile), { recursive: true });
  const cacheKib = 'sqliteCacheKib' in options && options.sqliteCacheKib ? options.sqliteCacheKib : 16 * 1024;
  return knex({
    // better-sqlite3 with its prepared statements kept (the client's name stays 'better-sqlite3').
    client: CachingBetterSqlite3Client as unknown as typeof Knex.Client,
    connection: { filename: options.sqliteFile },
    useNullAsDefault: true,
    pool: {
      min: 1,
      max: 1,
      // A connection closed under the service (the file's volume went away, say) is replaced by a
      // new one on the next query, which then says what is wrong, instead of failing for ever.
      validate: (conn: { open: boolean }) => conn.open,
      afterCreate(conn: { pragma(sql: string): unknown }, done: (err: Error | null, conn: unknown) => void) {
        // Before the first table of a new file: freed pages can then be handed back in small steps (src/db/pruning.ts).
        conn.pragma('auto_vacuum = INCREMENTAL');
        conn.pragma('journal_mode = WAL');
        conn.pragma('synchronous = NORMAL');
        conn.pragma('foreign_keys = ON');
        conn.pragma('busy_timeout = 5000');
        // Deleted content is overwritten, not left in free pages (a privacy erasure must erase).
        conn.pragma('secure_delete = ON');
        // Negative: a size in KiB. Pages read stay in the OS cache too, so a large one buys little.
        conn.pragma(`cache_size = -${Math.floor(cacheKib)}`);
        done(null, conn);
      },
    },
  });
}

/** Like libpq, a URL without a user name connects as the operating-system user. */
export function withDefaultUser(url: string): string {
  const parsed = new URL(url);
  if (parsed.username) return url;
  parsed.username = process.env.PGUSER || process.env.USER || os.userInfo().username;
  return parsed.toString();
}

export function isPostgres(db: Knex): boolean {
  return db.client.config.client === 'pg';
}
