import type { Knex } from 'knex';
import { migrationSource } from '../../migrations';
import { runSeeds } from '../../seeds';

/** Brings the schema up to date and (re)applies the idempotent reference-data seeds. */
export async function migrateAndSeed(db: Knex): Promise<void> {
  await db.migrate.latest({ migrationSource });
  await runSeeds(db);
}
