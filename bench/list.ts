/**
 * `GET /contacts/list` of BENCH_ROWS contacts (default 100,000, loaded through the CSV import)
 * from the built server, on a fresh SQLite and a fresh PostgreSQL database. The server is
 * restarted after the load, so its peak RSS is the list's (plus what any start costs). Prints
 * the time to the last byte, the size, and the server's peak RSS; on SQLite beside the limit of
 * the same run, bare `node:http` + better-sqlite3 streaming the same rows from the same file
 * (target ≥0.9 of its speed). With BENCH_CLIENTS=50 (default rows then 1,000), that many clients
 * fetch the list over and over for BENCH_SECONDS (default 10): p50/p95 and peak RSS, beside the
 * bare server under the same load on SQLite.
 * Run: `npm run bench:list` (BENCH_DB=sqlite or postgres for one of them).
 */
import { withContactsCsv } from './lib/contacts-csv';
import { callApi, getAll, uploadFile } from './lib/http';
import { peakRssMiBOf, rssMiBOf, startBareList, StartedProcess, timedGet } from './lib/limits';
import { load } from './lib/load';
import { BenchDb, BenchServer, DbKind, freshDb, machineLine, seconds, startServer } from './lib/server';
import { beside, TARGETS } from './lib/targets';

const CLIENTS = Number(process.env.BENCH_CLIENTS ?? 1);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const ROWS = Number(process.env.BENCH_ROWS ?? (CLIENTS > 1 ? 1_000 : 100_000));
const KINDS = (process.env.BENCH_DB ?? 'sqlite,postgres').split(',') as DbKind[];

async function listOnce(server: BenchServer, label: string, headers: Record<string, string> = {}): Promise<number> {
  server.resetPeak();
  const start = process.hrtime.bigint();
  const reply = await getAll(server, '/contacts/list', headers);
  const took = seconds(start);
  if (reply.status !== 200) throw new Error(`list answered ${reply.status}`);
  let check = '';
  if (!headers['Accept-Encoding']) {
    const count = JSON.parse(reply.body.toString()).message.contacts.length;
    if (count !== ROWS) throw new Error(`listed ${count} contacts, expected ${ROWS}`);
    check = `, ${count} contacts`;
  }
  console.log(
    `  ${label}: ${took.toFixed(2)} s, ${(reply.bytes / 2 ** 20).toFixed(1)} MiB${check}; server peak RSS ${server.peakRssMiB().toFixed(0)} MiB`,
  );
  return took;
}

/** Time to the last byte of one list from the bare limit server, and its peak RSS. */
async function bareListOnce(bare: StartedProcess): Promise<{ took: number; peak: number }> {
  const { took, body } = await timedGet(bare.port, '/');
  const count = JSON.parse(body.toString()).message.contacts.length;
  if (count !== ROWS) throw new Error(`the bare server listed ${count} contacts, expected ${ROWS}`);
  return { took, peak: peakRssMiBOf(bare.pid) };
}

/** BENCH_CLIENTS clients fetching the list over and over: latency percentiles and peak RSS. */
async function concurrentLists(db: BenchDb, server: BenchServer): Promise<void> {
  server.resetPeak();
  const project = await load(server.port, '/api/v1/contacts/list', server.keys!, { connections: CLIENTS, seconds: SECONDS, cpuOf: server.pid });
  console.log(
    `  ${CLIENTS} clients, ${SECONDS} s: ${project.requests} lists, ${project.perSecond.toFixed(1)}/s, p50 ${project.p50.toFixed(0)} ms, ` +
      `p95 ${project.p95.toFixed(0)} ms${project.errors ? `, ${project.errors} not 200` : ''}, ` +
      `${(project.cpuMicrosPerRequest / 1000).toFixed(1)} ms of server CPU per list; ` +
      `server peak RSS ${server.peakRssMiB().toFixed(0)} MiB`,
  );
  if (db.kind !== 'sqlite') return;
  const bare = await startBareList(db.env.SQLITE_FILE);
  try {
    const limit = await load(bare.port, '/', {}, { connections: CLIENTS, seconds: SECONDS, cpuOf: bare.pid });
    console.log(
      `  limit, bare node:http + better-sqlite3: ${limit.perSecond.toFixed(1)}/s, p50 ${limit.p50.toFixed(0)} ms, p95 ${limit.p95.toFixed(0)} ms, ` +
        `${(limit.cpuMicrosPerRequest / 1000).toFixed(1)} ms of its CPU per list, RSS ${rssMiBOf(bare.pid).toFixed(0)} MiB; ` +
        `throughput ratio ${(project.perSecond / limit.perSecond).toFixed(2)}`,
    );
  } finally {
    await bare.stop();
  }
}

async function benchOne(kind: DbKind, csv: string): Promise<void> {
  const db = await freshDb(kind, 'list');
  let server = await startServer(db);
  try {
    const keys = server.keys;
    await callApi(server, 'POST', '/contacts-type/add', { name: 'Bench' });
    const [type] = (await callApi(server, 'GET', '/contacts-type')).message.contactTypes;
    await callApi(server, 'POST', '/custom-fields/save', { field_name: 'age', field_type: 'number' });
    await callApi(server, 'POST', '/custom-fields/save', { field_name: 'joined', field_type: 'datetime-local' });
    const imported = await uploadFile(server, '/contacts/upload-csv', { contact_type_id: String(type.id) }, csv);
    if (imported.status !== 200) throw new Error(`import answered ${imported.status}`);
    await server.stop();
    server = await startServer(db);
    server.keys = keys;
    console.log(`${kind}: server restarted after loading ${ROWS} contacts, peak RSS at start ${server.peakRssMiB().toFixed(0)} MiB (reset before each list)`);
    if (CLIENTS > 1) {
      await concurrentLists(db, server);
    } else {
      const took = await listOnce(server, 'list, identity');
      await listOnce(server, 'list again, identity');
      await listOnce(server, 'list, gzip', { 'Accept-Encoding': 'gzip' });
      if (kind === 'sqlite') {
        const bare = await startBareList(db.env.SQLITE_FILE);
        try {
          const limit = await bareListOnce(bare);
          console.log(
            `  limit, bare node:http + better-sqlite3: ${limit.took.toFixed(2)} s, peak RSS ${limit.peak.toFixed(0)} MiB`,
          );
          console.log(`  ${beside(TARGETS.list, limit.took / took)}`);
        } finally {
          await bare.stop();
        }
      }
    }
    console.log(`  ${machineLine()}`);
  } finally {
    await server.stop();
    await db.drop();
  }
}

async function main(): Promise<void> {
  console.log(machineLine());
  // Every row a new, valid contact.
  await withContactsCsv(ROWS, { updateEvery: Number.MAX_SAFE_INTEGER, invalidEvery: Number.MAX_SAFE_INTEGER }, async (csv) => {
    for (const kind of KINDS) await benchOne(kind, csv);
  });
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
