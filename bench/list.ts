/**
 * `GET /contacts/list` of BENCH_ROWS contacts (default 100,000, loaded through the CSV import)
 * from the built server, on a fresh SQLite and a fresh PostgreSQL database. The server is
 * restarted after the load, so its peak RSS is the list's (plus what any start costs). Prints
 * the time to the last byte, the size, and the server's peak RSS; targets ≤2 s and ≤200 MiB.
 * Run: `npm run bench:list` (BENCH_DB=sqlite or postgres for one of them).
 */
import { withContactsCsv } from './lib/contacts-csv';
import { callApi, getAll, uploadFile } from './lib/http';
import { BenchServer, DbKind, freshDb, machineLine, seconds, startServer } from './lib/server';

const ROWS = Number(process.env.BENCH_ROWS ?? 100_000);
const KINDS = (process.env.BENCH_DB ?? 'sqlite,postgres').split(',') as DbKind[];

async function listOnce(server: BenchServer, label: string, headers: Record<string, string> = {}): Promise<void> {
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
    `  ${label}: ${took.toFixed(2)} s (target ≤2: ${took <= 2 ? 'met' : 'MISSED'}), ${(reply.bytes / 2 ** 20).toFixed(1)} MiB${check}; ` +
      `server peak RSS ${server.peakRssMiB().toFixed(0)} MiB (target ≤200)`,
  );
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
    await listOnce(server, 'list, identity');
    await listOnce(server, 'list again, identity');
    await listOnce(server, 'list, gzip', { 'Accept-Encoding': 'gzip' });
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
