import type { Knex } from 'knex';

// Knex's better-sqlite3 dialect class, which knex neither exports from its entry point nor
// types: sqlite-client.ts extends it to keep prepared statements. An upgrade that moves or
// changes it breaks here and nowhere else.

/** The members of knex's better-sqlite3 client that the caching client uses. */
export interface KnexBetterSqlite3Client {
  _formatBindings(bindings: unknown[] | undefined): unknown[];
}

// eslint-disable-next-line @typescript-eslint/no-require-imports
export const BetterSqlite3Client = require('knex/lib/dialects/better-sqlite3') as new (config: Knex.Config) => KnexBetterSqlite3Client;
