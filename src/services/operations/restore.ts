import path from 'node:path';
import type { Knex } from 'knex';
import { rowsPerInsert } from '../../db/dialect';
import { createDb, isPostgres } from '../../db';
import { applicationTables, hasMigrationTable, hasRows, prepareRestore, resetSequences, storedValue, tableShape } from '../../db/snapshot';
import { BackupFileError, BackupHeader, BackupSignatureError, readBackup } from '../../lib/backup-file';

/**
 * Tables the start of the service fills with reference data (geography, reserved fields,
 * design templates, the seeds' markers): a database holding only these counts as empty, and a
 * restore replaces them with the backup's rows, whose ids the other tables refer to.
 */
const SEEDED_TABLES = new Set(['app_settings', 'cities', 'countries', 'design_templates', 'fields', 'states']);

/** Rows per INSERT at most: bigger statements cost memory and save little. */
const INSERT_ROWS = 500;

/** The restore would overwrite something or cannot trust its file: nothing was written. */
export class RestoreRefused extends Error {}

export interface RestoreDeps {
  db: Knex;
  /** The install's app secret: the backup must be signed with it. */
  appSecret: string;
  /** This build's migrations, in order. */
  migrationNames: readonly string[];
  /** Runs the next migration of this build that the database has not run. */
  migrateOne(db: Knex): Promise<void>;
  /** Brings the schema up to this build and seeds the reference data (what every start does). */
  finish(db: Knex): Promise<void>;
}

export interface RestoreSummary {
  schema: string;
  tables: number;
  rows: number;
  target: 'postgres' | 'sqlite';
}

/** Reads the whole file once, checking every checksum and its signature, before anything is written. */
async function verify(file: string, appSecret: string): Promise<{ header: BackupHeader; tables: Map<string, number>; columns: Map<string, string[]> }> {
  let header: BackupHeader | undefined;
  const tables = new Map<string, number>();
  const columns = new Map<string, string[]>();
  try {
    for await (const entry of readBackup(file, appSecret)) {
      if (entry.kind === 'header') header = entry.header;
      else if (entry.kind === 'table') columns.set(entry.name, entry.columns);
      else if (entry.kind === 'end') tables.set(entry.name, entry.rows);
    }
  } catch (err) {
    if (err instanceof BackupSignatureError) throw new RestoreRefused(`${path.basename(file)} cannot be trusted: ${err.message}`);
    if (err instanceof BackupFileError) throw new RestoreRefused(`${path.basename(file)} is not an intact backup: ${err.message}`);
    throw err;
  }
  return { header: header!, tables, columns };
}

/**
 * The tables and columns of the schema a backup names: its migrations run on an empty SQLite
 * database in memory (every migration makes the same tables and columns on both kinds of
 * database; the SQLite-only search index is left out of both lists).
 */
async function schemaOf(deps: RestoreDeps, migrations: number): Promise<Map<string, Set<string>>> {
  const scratch = createDb({ databaseUrl: undefined, sqliteFile: ':memory:' });
  try {
    for (let done = 0; done < migrations; done += 1) await deps.migrateOne(scratch);
    const schema = new Map<string, Set<string>>();
    for (const table of await applicationTables(scratch)) schema.set(table, new Set((await tableShape(scratch, table)).columns));
    return schema;
  } finally {
    await scratch.destroy();
  }
}

/** A backup's rows must fit the schema its header names; one that does not is refused before the target is touched. */
async function checkFits(deps: RestoreDeps, header: BackupHeader, columns: Map<string, string[]>): Promise<void> {
  const schema = await schemaOf(deps, header.migrations.length);
  for (const [table, names] of columns) {
    const known = schema.get(table);
    const unknown = known ? names.find((name) => !known.has(name)) : undefined;
    if (known && unknown === undefined) continue;
    const what = known ? `its table ${table} has a column ${unknown}` : `it has a table ${table}`;
    throw new RestoreRefused(
      `the backup says its schema is ${header.schema}, but ${what} that this schema does not have: its rows do not fit the schema it names, so it cannot be loaded. Nothing was written.`,
    );
  }
}

async function appliedMigrations(db: Knex): Promise<string[]> {
  if (!(await hasMigrationTable(db))) return [];
  return (await db('knex_migrations').orderBy('id').select('name')).map((r: { name: string }) => r.name);
}

/**
 * Loads a backup into an empty database of either kind, keeping every id: migrates it to the
 * backup's schema, writes every row in one transaction, checks each table's row count, sets
 * PostgreSQL's sequences past the largest ids, then migrates to this build and seeds. Refuses
 * (RestoreRefused, before writing anything) a damaged or unsigned file, a file from a schema this
 * build does not know, one whose tables do not fit the schema it names, and a target that holds
 * data or a newer schema.
 */
export async function restoreBackup(deps: RestoreDeps, file: string): Promise<RestoreSummary> {
  const { db } = deps;
  const { header, tables: counts, columns } = await verify(file, deps.appSecret);

  const known = deps.migrationNames;
  const fits = header.migrations.length <= known.length && header.migrations.every((name) => known.includes(name));
  if (!fits) {
    const unknown = header.migrations.find((name) => !known.includes(name)) ?? header.schema;
    throw new RestoreRefused(`the backup's schema (${header.schema}) is newer than this build's (${known[known.length - 1]}): migration ${unknown} is unknown here; restore with the version that wrote it or a later one`);
  }
  await checkFits(deps, header, columns);
  const applied = await appliedMigrations(db);
  const inBackup = new Set(header.migrations);
  if (applied.some((name) => !inBackup.has(name))) {
    throw new RestoreRefused(`the target database's schema is ahead of the backup's (${header.schema}): restore into a new, empty database`);
  }
  if (applied.length) {
    for (const table of await applicationTables(db)) {
      if (!SEEDED_TABLES.has(table) && (await hasRows(db, table))) {
        throw new RestoreRefused(`the target database is not empty (table ${table} has rows): restore into a new, empty database`);
      }
    }
  }

  // The rows fit the backup's schema: run exactly its migrations (later ones run after the load).
  for (let done = applied.length; done < header.migrations.length; done += 1) await deps.migrateOne(db);

  await db.transaction(async (trx) => {
    await prepareRestore(trx);
    const order = await applicationTables(trx);
    const missing = [...counts.keys()].filter((name) => !order.includes(name));
    if (missing.length) throw new Error(`the backup has table ${missing[0]}, which its schema does not create here`);
    // Whatever the migrations or a start wrote (reference data), children first.
    for (const table of [...order].reverse()) await trx(table).delete();

    let batch: Array<Record<string, unknown>> = [];
    let target: { name: string; columns: string[]; types: Record<string, string>; perInsert: number } | undefined;
    const flush = async () => {
      if (batch.length) await trx(target!.name).insert(batch);
      batch = [];
    };
    for await (const entry of readBackup(file, deps.appSecret)) {
      if (entry.kind === 'table') {
        const shape = await tableShape(trx, entry.name);
        const unknown = entry.columns.find((column) => !shape.columns.includes(column));
        if (unknown) throw new Error(`the backup's table ${entry.name} has column ${unknown}, which its schema does not create here`);
        target = { name: entry.name, columns: entry.columns, types: shape.types, perInsert: Math.min(INSERT_ROWS, rowsPerInsert(trx as unknown as Knex, entry.columns.length)) };
      } else if (entry.kind === 'row') {
        const { columns, types } = target!;
        batch.push(Object.fromEntries(columns.map((column, i) => [column, storedValue(trx, entry.values[i], types[column])])));
        if (batch.length >= target!.perInsert) await flush();
      } else if (entry.kind === 'end') {
        await flush();
        const row = await trx(entry.name).count({ n: '*' }).first();
        if (Number(row?.n) !== entry.rows) throw new Error(`table ${entry.name} holds ${Number(row?.n)} rows after the restore, the backup ${entry.rows}`);
      }
    }
    await resetSequences(trx);
  });

  await deps.finish(db);
  const rows = [...counts.values()].reduce((a, b) => a + b, 0);
  return { schema: header.schema, tables: counts.size, rows, target: isPostgres(db) ? 'postgres' : 'sqlite' };
}
