/**
 * `GET /contacts/export` of BENCH_ROWS contacts (default 1,000,000, every reserved column
 * filled plus two custom fields) from the built server, on a fresh SQLite and a fresh
 * PostgreSQL database. The contacts are written straight into the database (one INSERT …
 * SELECT over a generated series), then the server is restarted so its memory is the
 * export's. Prints rows/s as the client reads them and the server's RSS growth (peak during
 * the export minus RSS at start); target growth under 50 MiB. The client counts the lines as
 * they arrive and keeps nothing. Run: `npm run bench:export` (BENCH_DB=sqlite or postgres).
 */
import fs from 'node:fs';
import http from 'node:http';
import knex, { Knex } from 'knex';
import { withDefaultUser } from '../src/db';
import { callApi } from './lib/http';
import { BenchDb, BenchServer, DbKind, freshDb, machineLine, seconds, startServer } from './lib/server';

const ROWS = Number(process.env.BENCH_ROWS ?? 1_000_000);
const KINDS = (process.env.BENCH_DB ?? 'sqlite,postgres').split(',') as DbKind[];

function connect(db: BenchDb): Knex {
  return db.kind === 'sqlite'
    ? knex({ client: 'better-sqlite3', connection: { filename: db.env.SQLITE_FILE }, useNullAsDefault: true })
    : knex({ client: 'pg', connection: withDefaultUser(db.env.DATABASE_URL), pool: { min: 0, max: 1 } });
}

/** Writes ROWS contacts of the type in one statement (a recursive series on SQLite, generate_series on PostgreSQL). */
async function fill(db: BenchDb, userId: number, typeId: number): Promise<void> {
  const k = connect(db);
  try {
    const country = Number((await k('countries').where({ iso2: 'FR' }).first('id')).id);
    const now = new Date().toISOString();
    const cat = (...parts: string[]) => parts.join(' || ');
    const values = (i: string, custom: string) =>
      `select ${userId}, ${typeId}, ${cat("'First'", i)}, ${cat("'Last, '", `(${i} % 1000)`)}, ${cat("'user'", i, "'@example.com'")}, ${cat("'user'", i, "'@example.com'")}, ` +
      `${country}, 'State', ${cat("'City '", `(${i} % 500)`)}, ${cat(i, "' Main Street'")}, '', 'Region', ${cat("''", `(10000 + ${i} % 89999)`)}, ${custom}, '${now}', '${now}'`;
    const columns = 'user_id, contact_type_id, first_name, last_name, email, email_key, country, state, city, address_line1, address_line2, state_province_region, postal_code, custom_fields, created_at, updated_at';
    if (db.kind === 'sqlite') {
      await k.raw(
        `with recursive n(i) as (select 1 union all select i + 1 from n where i < ${ROWS}) insert into contacts (${columns}) ` +
          values('i', `json_object('age', cast(i % 90 as text), 'joined', '2025-06-01T09:30')`) + ' from n',
      );
    } else {
      await k.raw(
        `insert into contacts (${columns}) ` +
          values('i', `jsonb_build_object('age', (i % 90)::text, 'joined', '2025-06-01T09:30')`) + ` from generate_series(1, ${ROWS}) as g(i)`,
      );
      await k.raw('analyze contacts');
    }
  } finally {
    await k.destroy();
  }
}

/** Reads the export as it streams, counting lines; answers the line count and bytes. */
function readExport(server: BenchServer): Promise<{ status: number; lines: number; bytes: number }> {
  return new Promise((resolve, reject) => {
    const headers = { PublicKey: server.keys!.PublicKey, SecretKey: server.keys!.SecretKey };
    const req = http.get({ host: '127.0.0.1', port: server.port, path: '/api/v1/contacts/export', headers }, (res) => {
      let lines = 0;
      let bytes = 0;
      res.on('data', (chunk: Buffer) => {
        bytes += chunk.length;
        for (let at = chunk.indexOf(10); at >= 0; at = chunk.indexOf(10, at + 1)) lines += 1;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, lines, bytes }));
      res.on('error', reject);
    });
    req.on('error', reject);
  });
}

function rssMiB(pid: number): number {
  return Number(/VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;
}

async function benchOne(kind: DbKind): Promise<void> {
  const db = await freshDb(kind, 'export');
  let server = await startServer(db);
  try {
    const keys = server.keys;
    await callApi(server, 'POST', '/contacts-type/add', { name: 'Bench' });
    const [type] = (await callApi(server, 'GET', '/contacts-type')).message.contactTypes;
    await callApi(server, 'POST', '/custom-fields/save', { field_name: 'age', field_type: 'number' });
    await callApi(server, 'POST', '/custom-fields/save', { field_name: 'joined', field_type: 'datetime-local' });
    const start = process.hrtime.bigint();
    await fill(db, type.user_id, type.id);
    console.log(`${kind}: wrote ${ROWS} contacts in ${seconds(start).toFixed(1)} s`);
    await server.stop();
    server = await startServer(db);
    server.keys = keys;
    const atStart = rssMiB(server.pid);
    server.resetPeak();
    const cpuBefore = server.cpuSeconds();
    const began = process.hrtime.bigint();
    const reply = await readExport(server);
    const took = seconds(began);
    if (reply.status !== 200) throw new Error(`export answered ${reply.status}`);
    if (reply.lines !== ROWS + 1) throw new Error(`exported ${reply.lines - 1} rows, expected ${ROWS}`);
    const growth = server.peakRssMiB() - atStart;
    console.log(
      `  export of ${ROWS} contacts (${(reply.bytes / 2 ** 20).toFixed(0)} MiB): ${took.toFixed(2)} s = ${Math.round(ROWS / took).toLocaleString('en')} rows/s; ` +
        `server CPU ${(server.cpuSeconds() - cpuBefore).toFixed(1)} s; RSS ${atStart.toFixed(0)} MiB at start, peak ${server.peakRssMiB().toFixed(0)} MiB: ` +
        `growth ${growth.toFixed(0)} MiB (target <50: ${growth < 50 ? 'met' : 'MISSED'})`,
    );
    console.log(`  ${machineLine()}`);
  } finally {
    await server.stop();
    await db.drop();
  }
}

async function main(): Promise<void> {
  console.log(machineLine());
  for (const kind of KINDS) await benchOne(kind);
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
