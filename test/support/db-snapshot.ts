import type { Knex } from 'knex';

/** Tables no request changes: the reference geography and the migrations' own. */
const FIXED_TABLES = ['countries', 'states', 'cities', 'knex_migrations', 'knex_migrations_lock'];

/**
 * Every row of every table as one text, to compare before and after a request: `skipTables`
 * (and any table whose name contains one of `skipTablesLike`) and the `skipColumns` of every row
 * are left out, for what a request moves without changing anything (a key's last use).
 */
export async function databaseSnapshot(db: Knex, options: { skipTables?: string[]; skipTablesLike?: string[]; skipColumns?: string[] } = {}): Promise<string> {
  const tables: string[] =
    db.client.config.client === 'pg'
      ? (await db.raw('select tablename as name from pg_tables where schemaname = current_schema() order by 1')).rows.map((r: { name: string }) => r.name)
      : (await db.raw("select name from sqlite_master where type = 'table' and name not like 'sqlite_%' order by 1")).map((r: { name: string }) => r.name);
  const skipped = [...FIXED_TABLES, ...(options.skipTables ?? [])];
  const parts: string[] = [];
  for (const table of tables.filter((t) => !skipped.includes(t) && !(options.skipTablesLike ?? []).some((part) => t.includes(part)))) {
    const rows = (await db(table).select('*')) as Record<string, unknown>[];
    const plain = rows.map((row) => {
      const kept = Object.fromEntries(Object.entries(row).filter(([column]) => !(options.skipColumns ?? []).includes(column)));
      return JSON.stringify(kept, (_k, v) => (v instanceof Date ? v.toISOString() : v));
    });
    parts.push(`${table}:${plain.sort().join('\n')}`);
  }
  return parts.join('\n\n');
}
