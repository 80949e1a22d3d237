import type { Knex } from 'knex';
import { isPostgres } from '../../db';
import { applicationTables, beginSnapshot, keysetPage, portableValue, tableShape } from '../../db/snapshot';
import { BackupWriter } from '../../lib/backup-file';

/** Rows read per query: memory stays flat however large a table is. */
const PAGE_ROWS = 1000;

export interface BackupSummary {
  schema: string;
  tables: number;
  rows: number;
}

/**
 * Writes every table of the database to `file` (lib/backup-file.ts), as one consistent
 * snapshot taken while the service goes on working: one read transaction, each table read in
 * primary-key pages and written through gzip as it is read; signed with the app secret.
 */
export async function writeBackup(db: Knex, file: string, appSecret: string): Promise<BackupSummary> {
  const writer = new BackupWriter(file, appSecret);
  try {
    const schema = await db.transaction(async (trx) => {
      await beginSnapshot(trx);
      const migrations: string[] = (await trx('knex_migrations').orderBy('id').select('name')).map((r: { name: string }) => r.name);
      if (!migrations.length) throw new Error('the database has no schema yet: nothing to back up');
      const latest = migrations[migrations.length - 1];
      await writer.header({ schema: latest, migrations, source: isPostgres(db) ? 'postgres' : 'sqlite', created_at: new Date().toISOString() });
      for (const name of await applicationTables(trx)) {
        const shape = await tableShape(trx, name);
        await writer.beginTable(name, shape.columns);
        let after: Knex.Value[] | undefined;
        for (;;) {
          const page: Array<Record<string, unknown>> = await keysetPage(trx, shape, after, PAGE_ROWS);
          for (const row of page) await writer.row(shape.columns.map((column) => portableValue(row[column], shape.types[column])));
          if (page.length < PAGE_ROWS) break;
          const last = page[page.length - 1];
          after = shape.key.map((column) => (column === 'rowid' ? last.__rowid : last[column]) as Knex.Value);
        }
        await writer.endTable();
      }
      return latest;
    });
    const { tables, rows } = await writer.finish();
    return { schema, tables, rows };
  } catch (err) {
    await writer.abort();
    throw err;
  }
}
