/**
 * A small authenticated GET under load: `GET /api/v1/contacts-type` (10 contact types, each with
 * a few contacts) through 50 keep-alive connections for BENCH_SECONDS (default 10, after 2 s of
 * warm-up), beside a bare Express app answering the same path with a 10-row JSON document, in the
 * same run (bare, project, bare again; the limit is their mean). Target on SQLite: ≥0.35 of bare
 * Express. Also beside bare Express running the project's own query on the same database (after
 * the project), which tells what of the gap is the database's round trip and what the service's;
 * on PostgreSQL, where that statement bounds it, the target is ≥0.8 of it.
 * Run: `npm run bench:api` (BENCH_DB=sqlite or postgres for one of them; BENCH_CONNECTIONS;
 * SERVER_NODE_ARGS / BARE_NODE_ARGS add node flags to the project / the bare app with the query,
 * e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`).
 */
import { callApi } from './lib/http';
import { startBareExpress, startBareExpressQuery, startProject } from './lib/limits';
import { withDefaultUser } from '../src/db';
import { load, LoadResult } from './lib/load';
import { DbKind, freshDb, machineLine, startServer } from './lib/server';
import { beside, TARGETS } from './lib/targets';

const KINDS = (process.env.BENCH_DB ?? 'sqlite,postgres').split(',') as DbKind[];
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
const PATH = '/api/v1/contacts-type';

const line = (r: LoadResult) =>
  `${Math.round(r.perSecond).toLocaleString('en')} req/s, p50 ${r.p50.toFixed(1)} ms, p99 ${r.p99.toFixed(1)} ms, ` +
  `${Math.round(r.cpuMicrosPerRequest)} µs of its CPU per request${r.errors ? `, ${r.errors} not 200` : ''}`;

async function bare(start = startBareExpress): Promise<LoadResult> {
  const started = await start();
  try {
    return await load(started.port, PATH, {}, { connections: CONNECTIONS, seconds: SECONDS, cpuOf: started.pid });
  } finally {
    await started.stop();
  }
}

async function benchOne(kind: DbKind): Promise<void> {
  const db = await freshDb(kind, 'api');
  try {
    const setup = await startServer(db);
    for (let i = 1; i <= 10; i += 1) await callApi(setup, 'POST', '/contacts-type/add', { name: `Type ${i}` });
    const types = (await callApi(setup, 'GET', '/contacts-type')).message.contactTypes as { id: number; user_id: number }[];
    for (const [i, type] of types.entries()) {
      for (let j = 0; j < 3; j += 1) {
        await callApi(setup, 'POST', '/contacts/add', { contact_type_id: String(type.id), email: `c${i}-${j}@example.com`, first_name: `C${j}`, country: '1' });
      }
    }
    const keys = setup.keys!;
    await setup.stop();

    const before = await bare();
    const server = await startProject({ DATA_DIR: db.dir, ...db.env }, keys);
    let project: LoadResult;
    let rss: number;
    try {
      project = await load(server.port, PATH, keys, { connections: CONNECTIONS, seconds: SECONDS, cpuOf: server.pid });
      rss = server.rssMiB();
    } finally {
      await server.stop();
    }
    const after = await bare();
    const queryEnv = kind === 'sqlite' ? { SQLITE_FILE: db.env.SQLITE_FILE } : { PG_URL: withDefaultUser(db.env.DATABASE_URL) };
    const withQuery = await bare(() => startBareExpressQuery(types[0].user_id, queryEnv));
    const limit = (before.perSecond + after.perSecond) / 2;
    const ratio = project.perSecond / limit;
    console.log(`${kind}: GET ${PATH} (10 rows), ${CONNECTIONS} connections, ${SECONDS} s`);
    console.log(`  project:      ${line(project)}; RSS after ${rss.toFixed(0)} MiB`);
    console.log(`  bare Express: ${line(before)} before, ${line(after)} after`);
    console.log(`  bare Express with the same query on the same database: ${line(withQuery)}`);
    // On PostgreSQL the statement bounds the API on this machine: its target is a ratio to bare Express running it through pg.
    if (kind === 'sqlite') console.log(`  ${beside(TARGETS.api, ratio)}; ${(project.perSecond / withQuery.perSecond).toFixed(2)} of bare Express with the query`);
    else console.log(`  ${beside(TARGETS.apiPostgres, project.perSecond / withQuery.perSecond)}; ${ratio.toFixed(2)} of bare Express (${Math.round(project.perSecond).toLocaleString('en')} req/s)`);
    console.log(`  ${machineLine()}`);
  } finally {
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
