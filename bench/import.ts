/**
 * CSV import over HTTP: a generated file of BENCH_ROWS rows (default 1,000,000: every reserved
 * column plus two custom fields, 10% updating earlier emails, 1% invalid), then a Mailchimp-style
 * export uploaded with a column mapping and a Windows-1252 semicolon file (BENCH_FILES picks
 * among standard,mailchimp,windows-1252), each uploaded to
 * `POST /contacts/upload-csv` of the built server, on a fresh SQLite and a fresh PostgreSQL
 * database. Prints rows/s (upload + import, as the client sees it), the server's peak RSS and
 * CPU seconds. The import goes to a second start of the server (the first one seeded the fresh
 * database), as a server is started on an existing database. Run: `npm run bench:import` (BENCH_DB=sqlite or postgres for one of them).
 * BENCH_SEGMENTS=n first saves n rule segments on the type (the three conditions of
 * bench/segments.ts), which every batch of the import then keeps current.
 * For the standard file it then prints the limit of the same file in the same run
 * (bench/lib/import-limits.ts) and the import's ratio to it.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ImportStyle, withContactsCsv, writeStyledCsv } from './lib/contacts-csv';
import { callApi, uploadFile } from './lib/http';
import { importLimit, pgMergeLimit } from './lib/import-limits';
import { DbKind, freshDb, machineLine, pgBackendsCpuSeconds, seconds, startServer } from './lib/server';
import { beside, TARGETS } from './lib/targets';

const ROWS = Number(process.env.BENCH_ROWS ?? 1_000_000);
const KINDS = (process.env.BENCH_DB ?? 'sqlite,postgres').split(',') as DbKind[];
const FILES = (process.env.BENCH_FILES ?? 'standard,mailchimp,windows-1252').split(',');
const SEGMENTS = Number(process.env.BENCH_SEGMENTS ?? 0);
/** The rules as indexed form fields (`select_field[0]`, …). */
const SEGMENT_RULES: Record<string, string> = {
  ...Object.fromEntries(['city', 'joined', 'age'].map((v, i) => [`select_field[${i}]`, v])),
  ...Object.fromEntries(['starts with', 'is between', 'greater than'].map((v, i) => [`select_operator[${i}]`, v])),
  ...Object.fromEntries(['City 1', '2025-03-01', '2025-08-31', '30'].map((v, i) => [`value[${i}]`, v])),
  query_type: 'and',
};

async function importOnce(kind: DbKind, csv: string, label = 'standard', extra: Record<string, string> = {}): Promise<number> {
  const db = await freshDb(kind, 'import');
  let server = await startServer(db, { MAX_CSV_MB: '1024' });
  try {
    await callApi(server, 'POST', '/contacts-type/add', { name: 'Bench' });
    const [type] = (await callApi(server, 'GET', '/contacts-type')).message.contactTypes;
    await callApi(server, 'POST', '/custom-fields/save', { field_name: 'age', field_type: 'number' });
    await callApi(server, 'POST', '/custom-fields/save', { field_name: 'joined', field_type: 'datetime-local' });
    for (let i = 0; i < SEGMENTS; i += 1) {
      await callApi(server, 'POST', '/segment/save', { segment_name: `Segment ${i}`, contact_type_id: String(type.id), ...SEGMENT_RULES });
    }
    const startPeak = server.peakRssMiB();
    // The first start migrated and seeded the fresh database (the geography among it) and may
    // still hold that memory; a server is started on an existing database, so the import is
    // measured on a second start, as bench:list does.
    const heldAfterSeeding = Number(/VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${server.pid}/status`, 'utf8'))![1]) / 1024;
    const keys = server.keys;
    await server.stop();
    server = await startServer(db, { MAX_CSV_MB: '1024' });
    server.keys = keys;
    server.resetPeak();
    // What the server holds right before the upload (the peak above is the first start's seeding).
    const before = server.peakRssMiB();
    const cpuBefore = server.cpuSeconds();
    const pgBefore = await pgBackendsCpuSeconds(db);
    const start = process.hrtime.bigint();
    const reply = await uploadFile(server, '/contacts/upload-csv', { contact_type_id: String(type.id), ...extra }, csv);
    const took = seconds(start);
    if (reply.status !== 200) throw new Error(`import answered ${reply.status}: ${reply.body.toString().slice(0, 500)}`);
    const { summary } = JSON.parse(reply.body.toString());
    const pgCpu = kind === 'postgres' ? `, PostgreSQL backends CPU ${((await pgBackendsCpuSeconds(db)) - pgBefore).toFixed(1)} s` : '';
    const rate = ROWS / took;
    console.log(
      `${kind.padEnd(8)} ${label.padEnd(12)} ${ROWS} rows${SEGMENTS ? ` (${SEGMENTS} rule segments kept current)` : ''} in ${took.toFixed(2)} s = ${Math.round(rate).toLocaleString('en')} rows/s ` +
        `server peak RSS during the import ${server.peakRssMiB().toFixed(0)} MiB (${before.toFixed(0)} MiB just before it, growth ${(server.peakRssMiB() - before).toFixed(0)} MiB; first start, which seeded the database, peaked at ${startPeak.toFixed(0)} MiB and held ${heldAfterSeeding.toFixed(0)} MiB when stopped), ` +
        `server CPU ${(server.cpuSeconds() - cpuBefore).toFixed(1)} s${pgCpu}; ` +
        `created ${summary.created}, updated ${summary.updated}, skipped ${summary.skipped}`,
    );
    if (summary.rows !== ROWS) throw new Error(`summary.rows ${summary.rows} is not ${ROWS}`);
    console.log(
      `         rows/s per server CPU-second ${Math.round(ROWS / (server.cpuSeconds() - cpuBefore)).toLocaleString('en')}`,
    );
    console.log(`         ${machineLine()}`);
    return rate;
  } finally {
    await server.stop();
    await db.drop();
  }
}

async function main(): Promise<void> {
  console.log(machineLine());
  const start = process.hrtime.bigint();
  if (FILES.includes('standard')) {
    await withContactsCsv(ROWS, {}, async (csv) => {
      console.log(`generated ${ROWS} rows (${(fs.statSync(csv).size / 2 ** 20).toFixed(0)} MiB) in ${seconds(start).toFixed(1)} s`);
      for (const kind of KINDS) {
        const rate = await importOnce(kind, csv);
        const limit = await importLimit(kind, csv, ROWS);
        const ratio = rate / limit.rowsPerSecond;
        console.log(
          `         limit, same file and run: ${limit.label}, ${Math.round(limit.rowsPerSecond).toLocaleString('en')} rows/s; the import is ${ratio.toFixed(2)} of it`,
        );
        if (kind === 'sqlite') console.log(`         ${beside(TARGETS.importSqlite, ratio)}`);
        if (kind === 'postgres') {
          const merge = await pgMergeLimit(csv, ROWS);
          console.log(
            `         the database alone, same file and run: ${merge.label}, ${Math.round(merge.rowsPerSecond).toLocaleString('en')} rows/s`,
          );
          console.log(`         ${beside(TARGETS.importPostgres, rate / merge.rowsPerSecond)} (the import ${Math.round(rate).toLocaleString('en')} rows/s)`);
        }
      }
    });
  }
  for (const style of ['mailchimp', 'windows-1252'] as ImportStyle[]) {
    if (!FILES.includes(style)) continue;
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-styled-'));
    try {
      const csv = path.join(dir, `${style}.csv`);
      const extra = await writeStyledCsv(csv, ROWS, style);
      console.log(`generated ${ROWS} ${style} rows (${(fs.statSync(csv).size / 2 ** 20).toFixed(0)} MiB)`);
      for (const kind of KINDS) await importOnce(kind, csv, style, extra);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
