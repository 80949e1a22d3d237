import type { Knex } from 'knex';
import { isPostgres } from './index';

/**
 * WAL pages SQLite lets grow while an import writes before a commit copies them back into the
 * database file (its default is 1,000). An import's batches rewrite the same index pages over
 * and over: checkpointed every 10,000 pages, each reaches the file once where it did up to ten
 * times (5% of an import's time). Restored once the last import running ends.
 */
const IMPORT_WAL_AUTOCHECKPOINT = 10_000;
const bulkWriters = new WeakMap<Knex, { running: number; before: number }>();

/** Runs an import (`fn`) with the database set for long runs of writes (see above; nothing on PostgreSQL). */
export async function withBulkWrites<T>(db: Knex, fn: () => Promise<T>): Promise<T> {
  if (isPostgres(db)) return fn();
  let state = bulkWriters.get(db);
  if (!state) {
    const [row] = (await db.raw('pragma wal_autocheckpoint')) as { wal_autocheckpoint: number }[];
    // Another import may have started meanwhile.
    state = bulkWriters.get(db) ?? { running: 0, before: Number(row?.wal_autocheckpoint ?? 1000) };
    bulkWriters.set(db, state);
  }
  if (state.running++ === 0) await db.raw(`pragma wal_autocheckpoint = ${IMPORT_WAL_AUTOCHECKPOINT}`);
  try {
    return await fn();
  } finally {
    if (--state.running === 0) {
      bulkWriters.delete(db);
      await db.raw(`pragma wal_autocheckpoint = ${state.before}`);
    }
  }
}

