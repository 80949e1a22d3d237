import type { Knex } from 'knex';
import { migrations, migrationSource } from '../migrations';
import { runSeeds } from '../seeds';

/** This build's migrations, in the order they run. */
export const MIGRATION_NAMES: readonly string[] = migrations.map(([name]) => name);

/** Brings the schema up to date and (re)applies the idempotent reference-data seeds. */
export async function migrateAndSeed(db: Knex): Promise<void> {
  if (!(await upToDate(db))) await db.migrate.latest({ migrationSource });
  await runSeeds(db);
}

/**
 * True when the database records exactly this build's migrations as run (knex records each in
 * the migration's own transaction). A restart then reads one table instead of taking knex's
 * migration lock and querying the catalogue six times (~10 ms of a start on PostgreSQL). Anything
 * else (a new database, a migration to run, a database migrated by a newer build) goes through
 * knex, which runs what is missing or refuses what it does not know.
 */
async function upToDate(db: Knex): Promise<boolean> {
  let recorded: { name: string }[];
  try {
    recorded = await db('knex_migrations').select('name');
  } catch {
    return false; // no migration table yet
  }
  const names = new Set(recorded.map((row) => row.name));
  return names.size === migrations.length && migrations.every(([name]) => names.has(name));
}

/** Runs the next migration of this build that the database has not run (a restore stops at its backup's schema). */
export async function migrateOne(db: Knex): Promise<void> {
  await db.migrate.up({ migrationSource });
}
