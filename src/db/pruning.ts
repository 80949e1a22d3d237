import type { Knex } from 'knex';
import { isPostgres } from './index';

/**
 * Deletes at most `limit` rows of `table` that `where` selects, in one short statement, and
 * answers how many went. Rows are named by the database's own row address (PostgreSQL's ctid,
 * SQLite's rowid), so a table with any key, or none, is pruned the same way.
 */
export async function deleteSome(db: Knex | Knex.Transaction, table: string, where: (query: Knex.QueryBuilder) => void, limit: number): Promise<number> {
  const address = isPostgres(db as Knex) ? 'ctid' : 'rowid';
  const chosen = db(table).select(address).modify(where).limit(limit);
  return Number(await db(table).whereIn(address, chosen).delete());
}

/** The smallest number of free pages worth a whole-file VACUUM, and its share of the file. */
const VACUUM_WORTH = { pages: 2048, share: 0.25 } as const;
/** Pages handed back per step of an incremental vacuum: each step holds the write lock briefly. */
const PAGES_PER_STEP = 1024;

/**
 * Lets the SQLite file shrink after rows were deleted: SQLite keeps freed pages for reuse, so
 * the file never gets smaller by itself. A file in incremental auto-vacuum mode (every file this
 * service creates, src/db/index.ts) hands its free pages back in small steps; an older file
 * gets one VACUUM, which rewrites it in that mode, when a quarter of it or more is free. Then
 * the write-ahead log is checkpointed and truncated. Answers the pages handed back.
 * PostgreSQL needs nothing: autovacuum makes deleted rows' space reusable for new rows.
 */
export async function releaseFreePages(db: Knex): Promise<number> {
  if (isPostgres(db)) return 0;
  const pragma = async (name: string) => Number(Object.values(((await db.raw(`pragma ${name}`)) as Record<string, unknown>[])[0] ?? {})[0] ?? 0);
  const free = await pragma('freelist_count');
  if (free === 0) return 0;
  if ((await pragma('auto_vacuum')) === 2) {
    for (let left = free; left > 0; ) {
      await db.raw(`pragma incremental_vacuum(${PAGES_PER_STEP})`);
      const now = await pragma('freelist_count');
      if (now >= left) break;
      left = now;
    }
  } else {
    const pages = await pragma('page_count');
    if (free < VACUUM_WORTH.pages || free < pages * VACUUM_WORTH.share) return 0;
    await db.raw('pragma auto_vacuum = incremental');
    await db.raw('vacuum');
  }
  await db.raw('pragma wal_checkpoint(truncate)');
  return free - (await pragma('freelist_count'));
}
