/**
 * Segment refresh over BENCH_ROWS contacts (default 1,000,000, loaded through the CSV import
 * service) on a fresh SQLite and a fresh PostgreSQL database: a three-condition segment
 * (text, date range on a custom datetime, custom number) is saved (first fill) and refreshed
 * twice (nothing changed, then after 1% of the contacts changed). An `or` segment with a much
 * larger membership shows the cost of the inserts. Prints the times; target ≤3 s.
 * Run: `npm run bench:segments` (BENCH_DB=sqlite or postgres for one of them).
 */
import { boot } from '../src/boot';
import { loadConfig } from '../src/config';
import { createLogger } from '../src/logger';
import { withContactsCsv } from './lib/contacts-csv';
import { DbKind, freshDb, machineLine, seconds } from './lib/server';

const ROWS = Number(process.env.BENCH_ROWS ?? 1_000_000);
const KINDS = (process.env.BENCH_DB ?? 'sqlite,postgres').split(',') as DbKind[];

const THREE_CONDITIONS = {
  select_field: ['city', 'joined', 'age'],
  select_operator: ['starts with', 'is between', 'greater than'],
  value: ['City 1', '2025-03-01', '2025-08-31', '30'],
  query_type: 'and',
};
const WIDE_OR = { select_field: ['age', 'country'], select_operator: ['less than', 'is'], value: ['45', 'France'], query_type: 'or' };

async function timed<T>(label: string, run: () => Promise<T>): Promise<T> {
  const start = process.hrtime.bigint();
  const result = await run();
  console.log(`  ${label}: ${seconds(start).toFixed(2)} s`);
  return result;
}

async function benchOne(kind: DbKind, csv: string): Promise<void> {
  const db = await freshDb(kind, 'segments');
  const runtime = await boot(loadConfig({ ...db.env, DATA_DIR: db.dir, LOG_LEVEL: 'silent' }), createLogger('silent'));
  try {
    const { services } = runtime;
    const account = await services.accounts.create({ email: 'bench@example.com', password: 'bench bench bench' });
    const ctx = { userId: account.user_id };
    const type = await services.contactTypes.add(ctx, { name: 'Bench' });
    await services.fields.addCustom(ctx, { field_name: 'age', field_type: 'number' });
    await services.fields.addCustom(ctx, { field_name: 'joined', field_type: 'datetime-local' });
    console.log(`${kind}:`);
    const summary = await timed(`load ${ROWS} contacts (import service)`, () => services.contactImport.importFile(ctx, type, csv));
    const members = async (id: number) => (await services.segments.get(ctx, id)).segment_emails_count;

    const id = await timed('save three-condition segment (first fill)', () => services.segments.save(ctx, { segment_name: 'Three', contact_type_id: type, ...THREE_CONDITIONS }));
    console.log(`    ${await members(id)} of ${summary.created} contacts match`);
    await timed('refresh, nothing changed', () => services.segments.refresh(ctx, id));
    // 1% of the contacts change city: some leave, others join.
    await runtime.db('contacts').where({ user_id: ctx.userId }).whereRaw('id % 100 = 0').update({ city: runtime.db.raw("case when city like 'City 1%' then 'Elsewhere' else 'City 1x' end") });
    const changed = await timed('refresh after 1% of contacts changed', () => services.segments.refresh(ctx, id));
    console.log(`    ${changed.joined} joined, ${changed.left} left`);

    const wide = await timed('save wide `or` segment (first fill)', () => services.segments.save(ctx, { segment_name: 'Wide', contact_type_id: type, ...WIDE_OR }));
    console.log(`    ${await members(wide)} contacts match`);
    await timed('refresh wide segment, nothing changed', () => services.segments.refresh(ctx, wide));
    console.log(`  ${machineLine()}`);
  } finally {
    await runtime.close();
    await db.drop();
  }
}

async function main(): Promise<void> {
  console.log(machineLine());
  await withContactsCsv(ROWS, {}, async (csv) => {
    for (const kind of KINDS) await benchOne(kind, csv);
  });
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
