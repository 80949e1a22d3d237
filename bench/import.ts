/**
 * CSV import over HTTP: a generated file of BENCH_ROWS rows (default 1,000,000: every reserved
 * column plus two custom fields, 10% updating earlier emails, 1% invalid) is uploaded to
 * `POST /contacts/upload-csv` of the built server, on a fresh SQLite and a fresh PostgreSQL
 * database. Prints rows/s (upload + import, as the client sees it), the server's peak RSS and
 * CPU seconds. Run: `npm run bench:import` (BENCH_DB=sqlite or postgres for one of them).
 * BENCH_SEGMENTS=n first saves n rule segments on the type (the three conditions of
 * bench/segments.ts), which every batch of the import then keeps current.
 */
import fs from 'node:fs';
import { withContactsCsv } from './lib/contacts-csv';
import { callApi, uploadFile } from './lib/http';
import { DbKind, freshDb, machineLine, pgBackendsCpuSeconds, seconds, startServer } from './lib/server';

const ROWS = Number(process.env.BENCH_ROWS ?? 1_000_000);
const KINDS = (process.env.BENCH_DB ?? 'sqlite,postgres').split(',') as DbKind[];
const SEGMENTS = Number(process.env.BENCH_SEGMENTS ?? 0);
const TARGET = { sqlite: 100_000, postgres: 120_000 };
/** The rules as indexed form fields (`select_field[0]`, …). */
const SEGMENT_RULES: Record<string, string> = {
  ...Object.fromEntries(['city', 'joined', 'age'].map((v, i) => [`select_field[${i}]`, v])),
  ...Object.fromEntries(['starts with', 'is between', 'greater than'].map((v, i) => [`select_operator[${i}]`, v])),
  ...Object.fromEntries(['City 1', '2025-03-01', '2025-08-31', '30'].map((v, i) => [`value[${i}]`, v])),
  query_type: 'and',
};

async function importOnce(kind: DbKind, csv: string): Promise<void> {
  const db = await freshDb(kind, 'import');
  const server = await startServer(db, { MAX_CSV_MB: '1024' });
  try {
    await callApi(server, 'POST', '/contacts-type/add', { name: 'Bench' });
    const [type] = (await callApi(server, 'GET', '/contacts-type')).message.contactTypes;
    await callApi(server, 'POST', '/custom-fields/save', { field_name: 'age', field_type: 'number' });
    await callApi(server, 'POST', '/custom-fields/save', { field_name: 'joined', field_type: 'datetime-local' });
    for (let i = 0; i < SEGMENTS; i += 1) {
      await callApi(server, 'POST', '/segment/save', { segment_name: `Segment ${i}`, contact_type_id: String(type.id), ...SEGMENT_RULES });
    }
    const startPeak = server.peakRssMiB();
    server.resetPeak();
    const cpuBefore = server.cpuSeconds();
    const pgBefore = await pgBackendsCpuSeconds(db);
    const start = process.hrtime.bigint();
    const reply = await uploadFile(server, '/contacts/upload-csv', { contact_type_id: String(type.id) }, csv);
    const took = seconds(start);
    if (reply.status !== 200) throw new Error(`import answered ${reply.status}: ${reply.body.toString().slice(0, 500)}`);
    const { summary } = JSON.parse(reply.body.toString());
    const pgCpu = kind === 'postgres' ? `, PostgreSQL backends CPU ${((await pgBackendsCpuSeconds(db)) - pgBefore).toFixed(1)} s` : '';
    const rate = ROWS / took;
    console.log(
      `${kind.padEnd(8)} ${ROWS} rows${SEGMENTS ? ` (${SEGMENTS} rule segments kept current)` : ''} in ${took.toFixed(2)} s = ${Math.round(rate).toLocaleString('en')} rows/s ` +
        `(target ≥${TARGET[kind].toLocaleString('en')}: ${rate >= TARGET[kind] ? 'met' : 'MISSED'}); ` +
        `server peak RSS during the import ${server.peakRssMiB().toFixed(0)} MiB (target ≤250; ${startPeak.toFixed(0)} MiB at start), ` +
        `server CPU ${(server.cpuSeconds() - cpuBefore).toFixed(1)} s${pgCpu}; ` +
        `created ${summary.created}, updated ${summary.updated}, skipped ${summary.skipped}`,
    );
    console.log(`         ${machineLine()}`);
  } finally {
    await server.stop();
    await db.drop();
  }
}

async function main(): Promise<void> {
  console.log(machineLine());
  const start = process.hrtime.bigint();
  await withContactsCsv(ROWS, {}, async (csv) => {
    console.log(`generated ${ROWS} rows (${(fs.statSync(csv).size / 2 ** 20).toFixed(0)} MiB) in ${seconds(start).toFixed(1)} s`);
    for (const kind of KINDS) await importOnce(kind, csv);
  });
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
