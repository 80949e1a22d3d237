/**
 * Start on an existing database: the time from spawning the built server (as `npm start` runs
 * it) to its first 200 on an authenticated `GET /api/v1/contacts-type`, its RSS just after
 * start (BENCH_EARLY_MS after that answer, default 3000) and at rest (BENCH_REST_MS, default
 * 30000: V8 gives memory back only once a process has been idle for some seconds), beside a
 * bare Express app started the same way in the same run (alternating, BENCH_ROUNDS rounds,
 * default 5; medians). The first start of a fresh database (migrate, seed) is printed apart;
 * the measured starts are restarts, as a user's are. Targets: start to first answer ≤1.5 s,
 * RSS at rest ≤100 MiB.
 * Run: `npm run bench:start` (BENCH_DB=sqlite or postgres for one of them).
 */
import { startBareExpress, startProject, StartedProcess } from './lib/limits';
import { DbKind, freshDb, machineLine, seconds, startServer } from './lib/server';
import { beside, TARGETS } from './lib/targets';

const KINDS = (process.env.BENCH_DB ?? 'sqlite,postgres').split(',') as DbKind[];
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const EARLY_MS = Number(process.env.BENCH_EARLY_MS ?? 3000);
const REST_MS = Number(process.env.BENCH_REST_MS ?? 30_000);

interface Figures {
  firstOk: number[];
  early: number[];
  rss: number[];
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
    const t0 = process.hrtime.bigint();
    const first = await startServer(db);
    const firstTook = seconds(t0);
    const firstPeak = first.peakRssMiB();
    await first.stop();
    console.log(`${kind}: first start (migrate, seed, demo account) listening after ${firstTook.toFixed(2)} s, peak RSS ${firstPeak.toFixed(0)} MiB`);

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
    console.log(`  ${beside(TARGETS.start, pf)}; bare Express ${bf.toFixed(3)} s (${(pf / bf).toFixed(2)}×)`);
    console.log(`  RSS ${EARLY_MS / 1000} s after the first 200: ${pe.toFixed(0)} MiB; bare Express ${be.toFixed(0)} MiB`);
    console.log(`  ${beside(TARGETS.rss, pr)} after ${REST_MS / 1000} s; bare Express ${br.toFixed(0)} MiB`);
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
