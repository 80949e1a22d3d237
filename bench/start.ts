/**
 * Start on an existing database: the time from spawning the built server to its first 200 on an
 * authenticated `GET /api/v1/contacts-type`, and its RSS at rest (BENCH_REST_MS after that
 * answer, default 3000), beside a bare Express app started the same way in the same run
 * (alternating, BENCH_ROUNDS rounds, default 5; medians). The first start of a fresh database
 * (migrate and seed) is printed apart. Targets: ≤2× bare Express, ≤80 MiB at rest.
 * Run: `npm run bench:start` (BENCH_DB=sqlite or postgres for one of them).
 */
import { startBareExpress, startProject, StartedProcess } from './lib/limits';
import { DbKind, freshDb, machineLine, seconds, startServer } from './lib/server';

const KINDS = (process.env.BENCH_DB ?? 'sqlite,postgres').split(',') as DbKind[];
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const REST_MS = Number(process.env.BENCH_REST_MS ?? 3000);

interface Figures {
  firstOk: number[];
  rss: number[];
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function measure(start: () => Promise<StartedProcess>, into: Figures): Promise<void> {
  const started = await start();
  try {
    await new Promise((r) => setTimeout(r, REST_MS));
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
    await new Promise((r) => setTimeout(r, REST_MS));
    const firstPeak = first.peakRssMiB();
    await first.stop();
    console.log(`${kind}: first start (migrate, seed, demo account) listening after ${firstTook.toFixed(2)} s, peak RSS ${firstPeak.toFixed(0)} MiB`);

    const bare: Figures = { firstOk: [], rss: [] };
    const project: Figures = { firstOk: [], rss: [] };
    const env = { DATA_DIR: db.dir, ...db.env };
    for (let i = 0; i < ROUNDS; i += 1) {
      await measure(startBareExpress, bare);
      await measure(() => startProject(env, first.keys!), project);
    }
    const [pf, bf] = [median(project.firstOk), median(bare.firstOk)];
    const [pr, br] = [median(project.rss), median(bare.rss)];
    console.log(
      `  start to first 200: ${pf.toFixed(3)} s; bare Express ${bf.toFixed(3)} s; ratio ${(pf / bf).toFixed(2)}× (target ≤2×: ${pf / bf <= 2 ? 'met' : 'MISSED'})`,
    );
    console.log(
      `  RSS at rest: ${pr.toFixed(0)} MiB; bare Express ${br.toFixed(0)} MiB; ratio ${(pr / br).toFixed(2)}× (target ≤80 MiB: ${pr <= 80 ? 'met' : 'MISSED'})`,
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
