import type { Knex } from 'knex';
import { loadConfig } from './src/config';
import { migrationSource } from './migrations';

/** For the knex CLI (`npx knex --knexfile dist/knexfile.js migrate:status`); the service migrates itself. */
const config = loadConfig();

const knexConfig: Knex.Config = config.databaseUrl
  ? { client: 'pg', connection: config.databaseUrl, migrations: { migrationSource } }
  : {
      client: 'better-sqlite3',
      connection: { filename: config.sqliteFile },
      useNullAsDefault: true,
      migrations: { migrationSource },
    };

export default knexConfig;
