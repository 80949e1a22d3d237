/**
 * Start on an existing database: the time from spawning the built server (as `npm start` runs
 * it) to its first 200 on an authenticated `GET /api/v1/contacts-type`, its RSS just after
 * start (BENCH_EARLY_MS after that answer, default 3000) and at rest (BENCH_REST_MS, default
 * 30000: V8 gives memory back only once a process has been idle for some seconds), beside a
 * bare Express app started the same way in the same run (alternating, BENCH_ROUNDS rounds,
 * default 5; medians). The first start of a fresh database (migrate, seed, and the compile
 * cache written a few seconds later, as after any build; caches of other runs are removed first) is printed apart; the measured
 * starts are restarts, as a user's are. Targets: ≤2× bare Express, ≤80 MiB at rest.
 * Run: `npm run bench:start` (BENCH_DB=sqlite or postgres for one of them).
 */
import fs from 'node:fs';
import path from 'node:path';
import { startBareExpress, startProject, StartedProcess } from './lib/limits';
import { DbKind, freshDb, machineLine, seconds, SERVER_ROOT, startServer } from './lib/server';

const KINDS = (process.env.BENCH_DB ?? 'sqlite,postgres').split(',') as DbKind[];
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const EARLY_MS = Number(process.env.BENCH_EARLY_MS ?? 3000);
const REST_MS = Number(process.env.BENCH_REST_MS ?? 30_000);
const BUNDLE_DIR = path.join(SERVER_ROOT, 'dist', 'bundle');

interface Figures {
  firstOk: number[];
  early: number[];
  rss: number[];
}

/** The compile caches beside the bundle (see src/start.ts), by name and time written. */
function caches(): Map<string, number> {
  if (!fs.existsSync(BUNDLE_DIR)) return new Map();
  return new Map(
    fs.readdirSync(BUNDLE_DIR)
      .filter((name) => name.endsWith('.cache'))
      .map((name) => [name, fs.statSync(path.join(BUNDLE_DIR, name)).mtimeMs]),
  );
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function measure(start: () => Promise<StartedProcess>, into: Figures): Promise<void> {
  const started = await start();
  try {
    await new Promise((r) => setTimeout(r, EARLY_MS));
    into.early.push(started.rssMiB());
    await new Promise((r) => setTimeout(r, REST_MS - EARLY_MS));
    into.firstOk.push(started.firstOk);
    into.rss.push(started.rssMiB());
  } finally {
    await started.stop();
  }
}

async function benchOne(kind: DbKind): Promise<void> {
  const db = await freshDb(kind, 'start');
  try {
    // As after a build: the first start writes the cache the measured restarts read. A cache left
    // by another run (written under that run's load, say) could hold less of the server.
    for (const name of caches().keys()) fs.rmSync(path.join(BUNDLE_DIR, name));
    const before = caches();
    const t0 = process.hrtime.bigint();
    const first = await startServer(db);
    const firstTook = seconds(t0);
    // The first start after a build writes the compile cache some seconds in; wait for it (or a while).
    const written = () => [...caches()].some(([name, at]) => before.get(name) !== at);
    for (let waited = 0; waited < 20_000 && !written(); waited += 250) await new Promise((r) => setTimeout(r, 250));
    const cacheNote = written() ? 'compile cache written' : before.size > 0 ? 'compile cache already there' : 'no compile cache';
    const firstPeak = first.peakRssMiB();
    await first.stop();
    console.log(`${kind}: first start (migrate, seed, demo account) listening after ${firstTook.toFixed(2)} s, peak RSS ${firstPeak.toFixed(0)} MiB; ${cacheNote}`);

    const bare: Figures = { firstOk: [], early: [], rss: [] };
    const project: Figures = { firstOk: [], early: [], rss: [] };
    const env = { DATA_DIR: db.dir, ...db.env };
    for (let i = 0; i < ROUNDS; i += 1) {
      await measure(startBareExpress, bare);
      await measure(() => startProject(env, first.keys!), project);
    }
    const [pf, bf] = [median(project.firstOk), median(bare.firstOk)];
    const [pr, br] = [median(project.rss), median(bare.rss)];
    const [pe, be] = [median(project.early), median(bare.early)];
    console.log(
      `  start to first 200: ${pf.toFixed(3)} s; bare Express ${bf.toFixed(3)} s; ratio ${(pf / bf).toFixed(2)}× (target ≤2×: ${pf / bf <= 2 ? 'met' : 'MISSED'})`,
    );
    console.log(`  RSS ${EARLY_MS / 1000} s after the first 200: ${pe.toFixed(0)} MiB; bare Express ${be.toFixed(0)} MiB`);
    console.log(
      `  RSS at rest (${REST_MS / 1000} s): ${pr.toFixed(0)} MiB; bare Express ${br.toFixed(0)} MiB; ratio ${(pr / br).toFixed(2)}× (target ≤80 MiB: ${pr <= 80 ? 'met' : 'MISSED'})`,
    );
    console.log(`  runs (s): project ${project.firstOk.map((x) => x.toFixed(2)).join(' ')}; bare ${bare.firstOk.map((x) => x.toFixed(2)).join(' ')}`);
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
